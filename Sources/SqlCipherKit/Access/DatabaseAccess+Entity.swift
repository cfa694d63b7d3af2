extension DatabaseAccess {
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
    /// `INSERT` when no row matched, both holding the write lock from the first, so that another
    /// connection's insert of the row cannot come between them. Neither deletes the row, so delete
    /// triggers and foreign-key cascades never run (unlike `INSERT OR REPLACE`).
    /// - Throws: ``SqlCipherError/encodingFailed(entity:reason:)`` for an entity that cannot be
    ///   stored (for example a nil `String` key), and SQLite's constraint errors.
    @discardableResult
    public func save<T: Entity>(_ entity: T) async throws -> T {
        try await _withConnection(.write) { try $0.core.save(entity) }
    }

    /// Inserts `entity`, or updates the row that already holds its values in `columns` (a UNIQUE
    /// column such as a name), and returns the saved copy with that row's key.
    ///
    /// ```swift
    /// // tags(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, color TEXT)
    /// let red = try await db.save(Label(id: nil, name: "urgent", color: "red"), onConflict: "name")
    /// let orange = try await db.save(Label(id: nil, name: "urgent", color: "orange"), onConflict: "name")
    /// // orange.id == red.id: the row was updated, not duplicated
    /// ```
    ///
    /// "Insert or update by name" without a fetch first. In one transaction that holds the write
    /// lock from the start (a savepoint inside an open transaction), a `SELECT` finds the
    /// key of the row whose `columns` hold the entity's values; the entity, with that key, is then
    /// saved as ``save(_:)-(T)`` saves it (in place, never deleting the row). With no such row it
    /// is inserted. This works on every supported SQLite, including SQLCipher 3.4.1's 3.15, which
    /// has no `ON CONFLICT … DO UPDATE`. The found row keeps its key: a key set in `entity` is
    /// replaced by it. The comparison is SQL's `=`, so a NULL value matches no row (as a UNIQUE
    /// index allows any number of NULLs).
    /// - Parameters:
    ///   - entity: The entity to save; its key, if set, gives way to the found row's.
    ///   - columns: The column names (the entity's coding keys) that identify the row, usually
    ///     the columns of one UNIQUE index or constraint; not the primary key's column.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for no column, a column the entity does
    ///   not encode, the key's column, or values that more than one row holds (the columns are
    ///   not unique); the errors of ``save(_:)-(T)``.
    @discardableResult
    public func save<T: Entity>(_ entity: T, onConflict columns: String...) async throws -> T {
        try await _withConnection(.write) { try $0.core.save(entity, onConflict: columns) }
    }

    /// Saves every entity, atomically: when one fails, none is saved. Returns the saved copies.
    ///
    /// Runs in `BEGIN IMMEDIATE … COMMIT`, or in a savepoint inside an open transaction, so inside
    /// ``transaction(_:)`` (through ``Connection/save(_:)-([T])``) it undoes only its own work when
    /// it fails.
    @discardableResult
    public func save<T: Entity>(_ entities: [T]) async throws -> [T] {
        try await _withConnection(.write) { try $0.core.save(entities) }
    }

    /// The entities matching `predicate`, in the given order: at most `limit` of them, after
    /// skipping `offset`.
    ///
    /// ```swift
    /// let affordable = try await db.fetch(Product.self, where: col("price") <= 10.0,
    ///                                     orderBy: col("price").descending, col("name"), limit: 20)
    /// let secondPage = try await db.fetch(Product.self, orderBy: col("name"), limit: 20, offset: 20)
    /// ```
    /// - Throws: ``SqlCipherError/decodingFailed(entity:column:stored:expected:)`` when a row does not
    ///   fit the type, naming the column, what it holds and what was expected.
    public func fetch<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil,
                                 orderBy: any SQLOrderable..., limit: Int? = nil, offset: Int? = nil) async throws -> [T] {
        let terms = orderBy.map(\.orderingTerm)
        return try await _withConnection(.read) { try $0.core.fetch(type, where: predicate, orderBy: terms, limit: limit, offset: offset) }
    }

    /// The first entity matching `predicate` in the given order, or nil.
    ///
    /// ```swift
    /// let cheapest = try await db.fetchOne(Product.self, where: col("price") > 0.0, orderBy: col("price"))
    /// ```
    public func fetchOne<T: Entity>(_ type: T.Type, where predicate: SQLExpression,
                                    orderBy: any SQLOrderable...) async throws -> T? {
        let terms = orderBy.map(\.orderingTerm)
        return try await _withConnection(.read) { try $0.core.fetchOne(type, where: predicate, orderBy: terms) }
    }

    /// Every row of a raw SQL query decoded as `T`: an ``Entity``, or any `Decodable` type whose
    /// properties are columns of the result (a join, an aggregate, a view).
    ///
    /// ```swift
    /// struct OrderLine: Decodable, Sendable { var customer: String; var sku: String }
    /// let lines = try await db.fetch(OrderLine.self, sql: """
    ///     SELECT orders.customer, line_items.sku
    ///     FROM orders JOIN line_items ON line_items.orderID = orders.id
    ///     WHERE orders.customer = ?
    ///     """, "Alice")
    /// ```
    ///
    /// Columns that `T` does not read are ignored. Values map as for entities (``Entity``).
    /// - Throws: ``SqlCipherError/decodingFailed(entity:column:stored:expected:)`` naming the type
    ///   and the column when a column `T` needs is missing (`stored` is "no such column") or does
    ///   not fit, and SQLite's errors.
    public func fetch<T: Decodable & Sendable>(_ type: T.Type, sql: String,
                                               _ arguments: (any DatabaseValueConvertible)?...) async throws -> [T] {
        try await _withConnection(.read) { try $0.core.fetch(type, sql: sql, binding: ArgumentList(arguments)) }
    }

    /// Every row of a raw SQL query decoded as `T`, with its values given as one
    /// ``StatementArguments`` (positional or named).
    public func fetch<T: Decodable & Sendable>(_ type: T.Type, sql: String,
                                               arguments: StatementArguments) async throws -> [T] {
        try await _withConnection(.read) { try $0.core.fetch(type, sql: sql, binding: arguments) }
    }

    /// Every row of a ``Select`` template decoded as `T`.
    ///
    /// ```swift
    /// let customer = Param<String>("customer")
    /// let orders = TableName("orders"), items = TableName("line_items")
    /// let join = Select(orders.col("customer"), items.col("sku"))
    ///     .from(orders)
    ///     .join(items, on: items.col("orderID") == orders.col("id"))
    ///     .where(orders.col("customer") == customer)
    /// let lines = try await db.fetch(OrderLine.self, join, customer.set("Alice"))
    /// ```
    public func fetch<T: Decodable & Sendable>(_ type: T.Type, _ select: Select,
                                               _ bindings: ParameterBinding...) async throws -> [T] {
        try await _withConnection(.read) { try $0.core.fetch(type, select.render(), bindings) }
    }

    /// The entity whose primary key is `id`, or nil.
    ///
    /// ```swift
    /// if let found = try await db.fetchOne(Product.self, id: 1) { print(found.name) }
    /// ```
    public func fetchOne<T: Entity>(_ type: T.Type, id: T.ID) async throws -> T? {
        try await _withConnection(.read) { try $0.core.fetchOne(type, id: id) }
    }

    /// The number of entities matching `predicate` (all of them without one).
    public func count<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil) async throws -> Int {
        try await _withConnection(.read) { try $0.core.count(type, where: predicate) }
    }

    /// Deletes the entity whose primary key is `id`; returns the number of rows deleted (0 or 1).
    @discardableResult
    public func delete<T: Entity>(_ type: T.Type, id: T.ID) async throws -> Int {
        try await _withConnection(.write) { try $0.core.delete(type, id: id) }
    }

    /// Deletes the entities matching `predicate`; returns the number of rows deleted.
    ///
    /// ```swift
    /// let removed = try await db.delete(Product.self, where: col("price") > 100.0)
    /// ```
    @discardableResult
    public func delete<T: Entity>(_ type: T.Type, where predicate: SQLExpression) async throws -> Int {
        try await _withConnection(.write) { try $0.core.delete(type, where: predicate) }
    }

    /// Saves with an explicit strategy, so tests can run the pre-UPSERT path on any SQLite.
    @discardableResult
    func save<T: Entity>(_ entity: T, strategy: EntitySaveStrategy) async throws -> T {
        try await _withConnection(.write) { try $0.core.save(entity, strategy: strategy) }
    }

    /// Saves a batch with an explicit strategy, so tests can run the pre-UPSERT path on any SQLite.
    @discardableResult
    func save<T: Entity>(_ entities: [T], strategy: EntitySaveStrategy) async throws -> [T] {
        try await _withConnection(.write) { try $0.core.save(entities, strategy: strategy) }
    }
}
