// The entity requests run the very templates of the entity methods (`EntityStatements`) and
// decode with the same row decoder, so a live value always equals what `db.fetch` & co. return.

extension LiveRequest {
    /// The entities matching `predicate`, ordered and limited, as ``Database/fetch(_:where:orderBy:limit:offset:)``
    /// returns them. Placeholder: `[]`.
    ///
    /// ```swift
    /// for try await cheap in db.values(of: .fetch(Product.self, where: col("price") < 50.0,
    ///                                             orderBy: col("name").ascending)) {
    ///     print(cheap.map(\.name))
    /// }
    /// ```
    public static func fetch<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil,
                                        orderBy: any SQLOrderable..., limit: Int? = nil) -> LiveRequest<[T]> {
        let select = EntityStatements.fetch(type, where: predicate, orderBy: orderBy.map(\.orderingTerm), limit: limit)
        return LiveRequest<[T]>(placeholder: [], fetcher: .rows(.select(select), decode: { rows in
            try RowDecoder.decode(T.self, rows: rows)
        }))
    }

    /// The entity whose primary key is `id`, or nil when there is none. Placeholder: `nil`.
    ///
    /// ```swift
    /// for try await product in db.values(of: .fetchOne(Product.self, id: 7)) {
    ///     print(product?.name ?? "deleted")
    /// }
    /// ```
    public static func fetchOne<T: Entity>(_ type: T.Type, id: T.ID) -> LiveRequest<T?> {
        LiveRequest<T?>(placeholder: nil, fetcher: .rows(.select(EntityStatements.fetchOne(type, id: id)), decode: { rows in
            try RowDecoder.decode(T.self, rows: rows).first
        }))
    }

    /// The number of entities matching `predicate` (all of them without one). Placeholder: `0`.
    public static func count<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil) -> LiveRequest<Int> {
        LiveRequest<Int>(placeholder: 0, fetcher: .rows(.select(EntityStatements.count(type, where: predicate)), decode: { rows in
            try rows.first?.decode(0, as: Int.self) ?? 0
        }))
    }

    /// Whether any entity matches `predicate` (any at all without one). Placeholder: `false`.
    ///
    /// Reads at most one row (`SELECT 1 … LIMIT 1`), so it stays cheap on large tables.
    public static func exists<T: Entity>(_ type: T.Type, where predicate: SQLExpression? = nil) -> LiveRequest<Bool> {
        var select = Select(SQLExpression.value(1)).from(T.tableName)
        if let predicate { select = select.where(predicate) }
        return LiveRequest<Bool>(placeholder: false, fetcher: .rows(.select(select.limit(1)), decode: { !$0.isEmpty }))
    }

    /// `sum(column)` over the matching entities, as `V`; nil when no row has a value, as in SQL
    /// (https://sqlite.org/lang_aggfunc.html#sumunc). Placeholder: `nil`. Use ``total(_:_:where:)``
    /// when no rows should read as zero.
    ///
    /// ```swift
    /// for try await stock in db.values(of: .sum(Product.self, col("quantity"), as: Int.self)) {
    ///     print(stock ?? 0)
    /// }
    /// ```
    /// A sum that `V` cannot hold (a fractional sum read as `Int`) makes the fetch throw
    /// ``SqlCipherError/typeMismatch(column:stored:expected:)``.
    public static func sum<T: Entity, V: DatabaseValueConvertible>(
        _ type: T.Type, _ column: some SQLExpressible, as valueType: V.Type, where predicate: SQLExpression? = nil
    ) -> LiveRequest<V?> {
        aggregate(type, .sum(column), as: valueType, where: predicate)
    }

    /// `min(column)` over the matching entities, as `V`; nil when no row has a value. Placeholder: `nil`.
    public static func min<T: Entity, V: DatabaseValueConvertible>(
        _ type: T.Type, _ column: some SQLExpressible, as valueType: V.Type, where predicate: SQLExpression? = nil
    ) -> LiveRequest<V?> {
        aggregate(type, .min(column), as: valueType, where: predicate)
    }

    /// `max(column)` over the matching entities, as `V`; nil when no row has a value. Placeholder: `nil`.
    public static func max<T: Entity, V: DatabaseValueConvertible>(
        _ type: T.Type, _ column: some SQLExpressible, as valueType: V.Type, where predicate: SQLExpression? = nil
    ) -> LiveRequest<V?> {
        aggregate(type, .max(column), as: valueType, where: predicate)
    }

    /// `avg(column)` over the matching entities; nil when no row has a value. Placeholder: `nil`.
    public static func avg<T: Entity>(
        _ type: T.Type, _ column: some SQLExpressible, where predicate: SQLExpression? = nil
    ) -> LiveRequest<Double?> {
        aggregate(type, .avg(column), as: Double.self, where: predicate)
    }

    /// `total(column)` over the matching entities: like `sum`, but always a `Double`, and `0` when
    /// no row has a value (https://sqlite.org/lang_aggfunc.html#sumunc). Placeholder: `0`.
    public static func total<T: Entity>(
        _ type: T.Type, _ column: some SQLExpressible, where predicate: SQLExpression? = nil
    ) -> LiveRequest<Double> {
        var select = Select(SQLExpression.total(column)).from(T.tableName)
        if let predicate { select = select.where(predicate) }
        return LiveRequest<Double>(placeholder: 0, fetcher: .rows(.select(select), decode: { rows in
            try rows.first?.decode(0, as: Double.self) ?? 0
        }))
    }

    private static func aggregate<T: Entity, V: DatabaseValueConvertible>(
        _ type: T.Type, _ expression: SQLExpression, as valueType: V.Type, where predicate: SQLExpression?
    ) -> LiveRequest<V?> {
        var select = Select(expression).from(T.tableName)
        if let predicate { select = select.where(predicate) }
        return LiveRequest<V?>(placeholder: nil, fetcher: .rows(.select(select), decode: { rows in
            guard let row = rows.first else { return nil }
            return try row.decode(0, as: V?.self)
        }))
    }
}
