extension Database {
    /// Inserts or updates `entity` and returns the saved copy.
    ///
    /// ```swift
    /// var product = try await db.save(Product(id: nil, name: "Widget", price: 9.99))
    /// // product.id == 1: SQLite assigned the key
    /// product.price = 7.49
    /// try await db.save(product)   // updates row 1 in place
    /// ```
    ///
    /// A nil integer key inserts a new row and returns the key SQLite assigned (the table's
    /// `INTEGER PRIMARY KEY`). A set key updates that row, or inserts it when it does not exist.
    /// The update happens in place: on SQLite 3.24+ with `INSERT … ON CONFLICT(key) DO UPDATE`
    /// (https://sqlite.org/lang_upsert.html), on older SQLite with an `UPDATE` followed by an
    /// `INSERT` when no row matched. Neither deletes the row, so delete triggers and foreign-key
    /// cascades never run (unlike `INSERT OR REPLACE`).
    /// - Throws: ``SqlCipherError/encodingFailed(entity:reason:)`` for an entity that cannot be
    ///   stored (for example a nil `String` key), and SQLite's constraint errors.
    @discardableResult
    public func save<T: Entity>(_ entity: T) throws -> T {
        try liveConnection().save(entity)
    }

    /// Saves every entity, atomically: when one fails, none is saved. Returns the saved copies.
    ///
    /// Runs in a savepoint, so inside ``transaction(_:)`` (through ``Connection/save(_:)-([T])``) it
    /// undoes only its own work when it fails.
    @discardableResult
    public func save<T: Entity>(_ entities: [T]) throws -> [T] {
        try liveConnection().save(entities)
    }

    /// The entities matching `predicate`, in the given order, at most `limit` of them.
    ///
    /// ```swift
    /// let affordable = try await db.fetch(Product.self, where: col("price") <= 10.0,
    ///                                     orderBy: col("price").descending, col("name"), limit: 20)
    /// ```
    /// - Throws: ``SqlCipherError/decodingFailed(entity:column:stored:expected:)`` when a row does not
    ///   fit the type, naming the column, what it holds and what was expected.
    public func fetch<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil,
                                 orderBy: any SQLOrderable..., limit: Int? = nil) throws -> [T] {
        try liveConnection().fetch(type, where: predicate, orderBy: orderBy.map(\.orderingTerm), limit: limit)
    }

    /// The entity whose primary key is `id`, or nil.
    ///
    /// ```swift
    /// if let found = try await db.fetchOne(Product.self, id: 1) { print(found.name) }
    /// ```
    public func fetchOne<T: Entity>(_ type: T.Type, id: T.ID) throws -> T? {
        try liveConnection().fetchOne(type, id: id)
    }

    /// The number of entities matching `predicate` (all of them without one).
    public func count<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil) throws -> Int {
        try liveConnection().count(type, where: predicate)
    }

    /// Deletes the entity whose primary key is `id`; returns the number of rows deleted (0 or 1).
    @discardableResult
    public func delete<T: Entity>(_ type: T.Type, id: T.ID) throws -> Int {
        try liveConnection().delete(type, id: id)
    }

    /// Deletes the entities matching `predicate`; returns the number of rows deleted.
    ///
    /// ```swift
    /// let removed = try await db.delete(Product.self, where: col("price") > 100.0)
    /// ```
    @discardableResult
    public func delete<T: Entity>(_ type: T.Type, where predicate: SQLExpression) throws -> Int {
        try liveConnection().delete(type, where: predicate)
    }

    /// Saves with an explicit strategy, so tests can run the pre-UPSERT path on any SQLite.
    @discardableResult
    func save<T: Entity>(_ entity: T, strategy: EntitySaveStrategy) throws -> T {
        try liveConnection().save(entity, strategy: strategy)
    }

    /// Saves a batch with an explicit strategy, so tests can run the pre-UPSERT path on any SQLite.
    @discardableResult
    func save<T: Entity>(_ entities: [T], strategy: EntitySaveStrategy) throws -> [T] {
        try liveConnection().save(entities, strategy: strategy)
    }
}
