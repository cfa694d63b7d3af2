/// The templates behind the entity methods, rendered without running them, so that other
/// features (such as live queries) can reuse exactly the same SQL and bindings.
enum EntityStatements {
    /// `SELECT * FROM table [WHERE …] [ORDER BY …] [LIMIT …]`, as run by `fetch(_:where:orderBy:limit:offset:)`.
    static func fetch<T: Entity>(
        _ type: T.Type, where predicate: SQLExpression?, orderBy: [OrderingTerm], limit: Int?, offset: Int? = nil
    ) -> Select {
        var select = Select(.all).from(T.tableName)
        if let predicate { select = select.where(predicate) }
        if !orderBy.isEmpty { select = select.orderBy(orderBy) }
        if let limit { select = select.limit(limit) }
        if let offset { select = select.offset(offset) }
        return select
    }

    /// `SELECT * FROM table WHERE pk = :l1`, as run by `fetchOne(_:id:)`.
    static func fetchOne<T: Entity>(_ type: T.Type, id: T.ID) -> Select {
        Select(.all).from(T.tableName).where(Column(T.primaryKeyColumn) == id)
    }

    /// `SELECT count(*) FROM table [WHERE …]`, as run by `count(_:where:)`.
    static func count<T: Entity>(_ type: T.Type, where predicate: SQLExpression?) -> Select {
        var select = Select(.count).from(T.tableName)
        if let predicate { select = select.where(predicate) }
        return select
    }

    /// `DELETE FROM table WHERE pk = :l1`.
    static func delete<T: Entity>(_ type: T.Type, id: T.ID) -> Delete {
        Delete(T.tableName).where(Column(T.primaryKeyColumn) == id)
    }

    /// `DELETE FROM table WHERE …`.
    static func delete<T: Entity>(_ type: T.Type, where predicate: SQLExpression) -> Delete {
        Delete(T.tableName).where(predicate)
    }
}
