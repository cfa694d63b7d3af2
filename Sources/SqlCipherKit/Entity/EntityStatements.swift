/// The templates behind the entity methods, rendered without running them, so that other
/// features (such as live queries) can reuse exactly the same SQL and bindings.
enum EntityStatements {
    /// `SELECT * FROM table [WHERE …] [ORDER BY …] [LIMIT …]`, as run by `fetch(_:where:orderBy:limit:)`.
    static func fetch<T: Entity>(
        _ type: T.Type, where predicate: SQLExpression?, orderBy: [OrderingTerm], limit: Int?
    ) -> Select {
        var select = Select(.all).from(T.tableName)
        if let predicate { select = select.where(predicate) }
        if !orderBy.isEmpty { select = select.orderBy(orderBy) }
        if let limit { select = select.limit(limit) }
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

    // MARK: Saving

    /// An entity's columns split into its primary key and the other columns.
    struct Encoded {
        let table: String
        let keyColumn: String
        let key: DatabaseValue
        let columns: [String]
        let values: [DatabaseValue]
    }

    /// Encodes `entity` and checks that its key property and key column agree.
    static func encode<T: Entity>(_ entity: T) throws -> Encoded {
        let encoded = try EntityEncoder.encode(entity)
        let keyColumn = T.primaryKeyColumn
        let key = entity[keyPath: T.primaryKey]?.databaseValue ?? .null
        let keyIndex = encoded.columns.firstIndex(of: keyColumn)
            ?? encoded.columns.firstIndex { $0.lowercased() == keyColumn.lowercased() }
        guard let keyIndex else {
            throw SqlCipherError.encodingFailed(
                entity: String(describing: T.self),
                reason: "it encodes no column named \"\(keyColumn)\" for its primary key (columns: "
                    + "\(encoded.columns.joined(separator: ", "))); declare `static let primaryKeyColumn = \"…\"` "
                    + "with the coding key of the primaryKey property")
        }
        guard encoded.values[keyIndex] == key else {
            throw SqlCipherError.encodingFailed(
                entity: String(describing: T.self),
                reason: "column \"\(encoded.columns[keyIndex])\" holds \(encoded.values[keyIndex]) but the primaryKey "
                    + "property holds \(key); make primaryKeyColumn name the primaryKey property's coding key")
        }
        var columns = encoded.columns
        var values = encoded.values
        columns.remove(at: keyIndex)
        values.remove(at: keyIndex)
        return Encoded(table: T.tableName.name, keyColumn: encoded.columns[keyIndex], key: key,
                       columns: columns, values: values)
    }

    /// `INSERT INTO t (columns) VALUES (…)`, without the key (SQLite assigns it).
    static func insertWithoutKey(_ encoded: Encoded) throws -> SQLFragment {
        var insert = Insert(into: TableName(encoded.table))
        for (name, value) in zip(encoded.columns, encoded.values) {
            insert = insert.set(Column(name), to: value)
        }
        return try insert.render()
    }

    /// `INSERT INTO t (key, columns) VALUES (…)`.
    static func insertWithKey(_ encoded: Encoded) throws -> SQLFragment {
        var insert = Insert(into: TableName(encoded.table)).set(Column(encoded.keyColumn), to: encoded.key)
        for (name, value) in zip(encoded.columns, encoded.values) {
            insert = insert.set(Column(name), to: value)
        }
        return try insert.render()
    }

    /// `INSERT … ON CONFLICT(key) DO UPDATE SET c = excluded.c, …` (SQLite 3.24+,
    /// https://sqlite.org/lang_upsert.html): updates the row in place, so no delete trigger or
    /// foreign-key action runs. `DO NOTHING` when the key is the only column.
    static func upsert(_ encoded: Encoded) throws -> SQLFragment {
        var renderer = SQLRenderer()
        renderer.append("INSERT INTO ")
        try renderer.identifier(encoded.table)
        renderer.append(" (")
        try renderer.identifier(encoded.keyColumn)
        for name in encoded.columns {
            renderer.append(", ")
            try renderer.identifier(name)
        }
        renderer.append(") VALUES (")
        renderer.literal(encoded.key)
        for value in encoded.values {
            renderer.append(", ")
            renderer.literal(value)
        }
        renderer.append(") ON CONFLICT (")
        try renderer.identifier(encoded.keyColumn)
        renderer.append(")")
        guard !encoded.columns.isEmpty else {
            renderer.append(" DO NOTHING")
            return renderer.fragment
        }
        renderer.append(" DO UPDATE SET ")
        for (index, name) in encoded.columns.enumerated() {
            if index > 0 { renderer.append(", ") }
            try renderer.identifier(name)
            renderer.append(" = excluded.")
            try renderer.identifier(name)
        }
        return renderer.fragment
    }

    /// `UPDATE t SET c = …, … WHERE key = …`, the first half of a save without UPSERT.
    static func update(_ encoded: Encoded) throws -> SQLFragment {
        var update = Update(TableName(encoded.table))
        for (name, value) in zip(encoded.columns, encoded.values) {
            update = update.set(Column(name), to: value)
        }
        return try update.where(Column(encoded.keyColumn) == encoded.key).render()
    }

    /// `SELECT 1 FROM t WHERE key = …`: whether a key-only entity's row exists.
    static func exists(_ encoded: Encoded) throws -> SQLFragment {
        try Select(SQLExpression.value(1)).from(TableName(encoded.table))
            .where(Column(encoded.keyColumn) == encoded.key).render()
    }
}
