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

    /// Saves every entity in a savepoint: when one fails, none of them is saved and the enclosing
    /// transaction goes on (the error is rethrown).
    @discardableResult
    public func save<T: Entity>(_ entities: [T]) throws -> [T] {
        try core.save(entities)
    }

    /// The entities matching `predicate`, ordered and limited. See ``Database/fetch(_:where:orderBy:limit:)``.
    public func fetch<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil,
                                 orderBy: any SQLOrderable..., limit: Int? = nil) throws -> [T] {
        try core.fetch(type, where: predicate, orderBy: orderBy.map(\.orderingTerm), limit: limit)
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
