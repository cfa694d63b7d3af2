extension Connection {
    /// Inserts or updates `entity` and returns the saved copy. See ``Database/save(_:)-(T)``.
    ///
    /// ```swift
    /// let order = try await db.transaction { conn in
    ///     let order = try conn.save(Order(id: nil, customer: "Alice"))
    ///     try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
    ///     return order
    /// }
    /// ```
    @discardableResult
    public func save<T: Entity>(_ entity: T) throws -> T {
        try core.save(entity)
    }

    /// Inserts `entity`, or updates the row that already holds its values in `columns`, in a
    /// savepoint; returns the saved copy with that row's key. See ``Database/save(_:onConflict:)``.
    @discardableResult
    public func save<T: Entity>(_ entity: T, onConflict columns: String...) throws -> T {
        try core.save(entity, onConflict: columns)
    }

    /// Saves every entity in a savepoint: when one fails, none of them is saved and the enclosing
    /// transaction goes on (the error is rethrown).
    @discardableResult
    public func save<T: Entity>(_ entities: [T]) throws -> [T] {
        try core.save(entities)
    }

    /// The entities matching `predicate`, ordered, limited and offset. See
    /// ``Database/fetch(_:where:orderBy:limit:offset:)``.
    public func fetch<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil,
                                 orderBy: any SQLOrderable..., limit: Int? = nil, offset: Int? = nil) throws -> [T] {
        try core.fetch(type, where: predicate, orderBy: orderBy.map(\.orderingTerm), limit: limit, offset: offset)
    }

    /// The first entity matching `predicate` in the given order, or nil.
    public func fetchOne<T: Entity>(_ type: T.Type, where predicate: SQLExpression,
                                    orderBy: any SQLOrderable...) throws -> T? {
        try core.fetchOne(type, where: predicate, orderBy: orderBy.map(\.orderingTerm))
    }

    /// Every row of a raw SQL query decoded as `T`. See ``Database/fetch(_:sql:_:)``.
    public func fetch<T: Decodable>(_ type: T.Type, sql: String,
                                    _ arguments: (any DatabaseValueConvertible)?...) throws -> [T] {
        try core.fetch(type, sql: sql, binding: ArgumentList(arguments))
    }

    /// Every row of a raw SQL query decoded as `T`, with its values given as one
    /// ``StatementArguments`` (positional or named).
    public func fetch<T: Decodable>(_ type: T.Type, sql: String, arguments: StatementArguments) throws -> [T] {
        try core.fetch(type, sql: sql, binding: arguments)
    }

    /// Every row of a ``Select`` template decoded as `T`.
    public func fetch<T: Decodable>(_ type: T.Type, _ select: Select, _ bindings: ParameterBinding...) throws -> [T] {
        try core.fetch(type, select.render(), bindings)
    }

    /// The entity whose primary key is `id`, or nil.
    public func fetchOne<T: Entity>(_ type: T.Type, id: T.ID) throws -> T? {
        try core.fetchOne(type, id: id)
    }

    /// The number of entities matching `predicate`.
    public func count<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil) throws -> Int {
        try core.count(type, where: predicate)
    }

    /// Deletes the entity whose primary key is `id`; returns the number of rows deleted.
    @discardableResult
    public func delete<T: Entity>(_ type: T.Type, id: T.ID) throws -> Int {
        try core.delete(type, id: id)
    }

    /// Deletes the entities matching `predicate`; returns the number of rows deleted.
    @discardableResult
    public func delete<T: Entity>(_ type: T.Type, where predicate: SQLExpression) throws -> Int {
        try core.delete(type, where: predicate)
    }
}
