import CSqlCipherBridge

/// How `save` writes an entity whose key is set.
enum EntitySaveStrategy: Sendable {
    /// UPSERT where the loaded SQLite has it (3.24+), else ``updateThenInsert``.
    case automatic
    /// `INSERT … ON CONFLICT(key) DO UPDATE`.
    case upsert
    /// `UPDATE … WHERE key = …`, then `INSERT` when no row matched. Never deletes.
    case updateThenInsert
}

extension SQLiteConnection {
    /// Whether the loaded SQLite understands `INSERT … ON CONFLICT … DO UPDATE` (3.24.0+).
    var supportsUpsert: Bool { scb_sqlite_version_number() >= 3_024_000 }

    /// Inserts or updates `entity`; returns it with its key set.
    @discardableResult
    func save<T: Entity>(_ entity: T, strategy: EntitySaveStrategy = .automatic) throws -> T {
        var writer = EntityWriter<T>(connection: self, strategy: strategy)
        defer { writer.finish() }
        return try writer.save(entity)
    }

    /// Checks, before a save with a nil integer key inserts, that `column` of `table` is the
    /// table's rowid, which is what SQLite fills in. Only a column declared exactly
    /// `INTEGER PRIMARY KEY` is (https://sqlite.org/lang_createtable.html#rowid): with `id INT
    /// PRIMARY KEY`, `id INTEGER` or a `TEXT` key the row was stored with a NULL key, while the
    /// returned copy carried the rowid, so `fetchOne(_:id:)` found nothing and saving that copy
    /// again inserted a second row. A table the main schema does not hold (a `TEMP` table) is left
    /// to SQLite. Found tables are remembered until the schema version changes, so a batch or a
    /// loop of saves pays one `PRAGMA schema_version` per writer.
    /// - Throws: ``SqlCipherError/encodingFailed(entity:reason:)`` naming the column and the fix.
    func requireRowIDKey(table: String, column: String, entity: String) throws {
        let cacheKey = table.lowercased() + "\u{0}" + column.lowercased()
        let version = try asInternal { Int64.fromDatabaseValue(try scalar("PRAGMA main.schema_version") ?? .null) ?? 0 }
        if rowIDKeyTables.schemaVersion != version { rowIDKeyTables = (version, []) }
        if rowIDKeyTables.keys.contains(cacheKey) { return }
        guard let key = try? asInternal({ try primaryKey(of: table, schema: "main") }) else { return }
        // The key column is the rowid: an INTEGER PRIMARY KEY, or (a table without a declared key)
        // the rowid itself under one of its names.
        guard key.kind == .rowIDAlias || key.kind == .hiddenRowID, key.columns.count == 1,
              SQLTokenizer.sameIdentifier(key.columns[0], column) else {
            let declared = switch key.kind {
            case .hiddenRowID: "the table has no PRIMARY KEY"
            case .rowIDAlias: "the table's rowid is column \"\(key.columns.joined())\""
            case .columns, .withoutRowID: "its PRIMARY KEY (\(key.columns.joined(separator: ", "))) is not the rowid"
            }
            throw SqlCipherError.encodingFailed(
                entity: entity,
                reason: "its primary key is nil, so SQLite is to assign it, but column \"\(column)\" of table \"\(table)\" "
                    + "would not receive it: \(declared). Only a column declared exactly `\(column) INTEGER PRIMARY KEY` "
                    + "is the rowid (INT, BIGINT, INTEGER without PRIMARY KEY or PRIMARY KEY DESC are not), and the row "
                    + "would be stored with a NULL key that no fetch by id finds. Declare the column INTEGER PRIMARY KEY, "
                    + "or set the key before saving. Nothing was written")
        }
        rowIDKeyTables.keys.insert(cacheKey)
    }

    /// Saves `entity` over the row whose `columns` hold its values, or as a new row; in a savepoint
    /// inside an open transaction, else in `BEGIN IMMEDIATE … COMMIT`: its lookup is a read, and in
    /// a deferred savepoint another connection's insert of a matching row could come between the
    /// lookup and the write (the write then failed with "UNIQUE constraint failed", or "database is
    /// locked" in WAL mode).
    @discardableResult
    func save<T: Entity>(_ entity: T, onConflict columns: [String]) throws -> T {
        try inWriteTransaction {
            var writer = EntityWriter<T>(connection: self, strategy: .automatic)
            defer { writer.finish() }
            return try writer.save(entity, matching: columns)
        }
    }

    /// Saves every entity in one transaction: all or none. Nests inside an open transaction (as a
    /// savepoint); outside one it begins with the write lock (`BEGIN IMMEDIATE`), so that a save
    /// that looks its row up first meets no other connection's insert before its own.
    ///
    /// One ``EntityWriter`` serves the whole batch, so each statement is prepared once and every
    /// entity is bound by position.
    @discardableResult
    func save<T: Entity>(_ entities: [T], strategy: EntitySaveStrategy = .automatic) throws -> [T] {
        try inWriteTransaction {
            var writer = EntityWriter<T>(connection: self, strategy: strategy)
            defer { writer.finish() }
            var saved: [T] = []
            saved.reserveCapacity(entities.count)
            for entity in entities {
                saved.append(try writer.save(entity))
            }
            return saved
        }
    }

    /// Runs a rendered query and decodes each row as `T` while stepping, without collecting the
    /// rows first.
    func fetch<T: Decodable>(_ type: T.Type, _ fragment: SQLFragment, _ bindings: [ParameterBinding] = []) throws -> [T] {
        let statement = try boundStatement(fragment, bindings)
        defer { statement.reset() }
        return try RowDecoder.decode(type, statement: statement)
    }

    func fetch<T: Entity>(_ type: T.Type, where predicate: SQLExpression?, orderBy: [OrderingTerm],
                          limit: Int?, offset: Int? = nil) throws -> [T] {
        try fetch(type, EntityStatements.fetch(type, where: predicate, orderBy: orderBy, limit: limit, offset: offset).render())
    }

    func fetchOne<T: Entity>(_ type: T.Type, id: T.ID) throws -> T? {
        try fetch(type, EntityStatements.fetchOne(type, id: id).render()).first
    }

    /// The first entity matching `predicate` in the given order: the query runs with `LIMIT 1`.
    func fetchOne<T: Entity>(_ type: T.Type, where predicate: SQLExpression, orderBy: [OrderingTerm]) throws -> T? {
        try fetch(type, where: predicate, orderBy: orderBy, limit: 1).first
    }

    /// Every row of a raw query, decoded as `T`: columns `T` does not read are ignored.
    func fetch<T: Decodable, Arguments: BindableArguments>(_ type: T.Type, sql: String, binding arguments: Arguments) throws -> [T] {
        let statement = try cachedStatement(sql)
        guard !statement.hasTrailingStatements else { throw SqlCipherError.multipleStatements(sql: sql).redactingSQL() }
        defer { statement.reset() }
        try statement.bind(arguments)
        return try RowDecoder.decode(type, statement: statement)
    }

    func count<T: Entity>(_ type: T.Type, where predicate: SQLExpression?) throws -> Int {
        let rows = try query(EntityStatements.count(type, where: predicate).render(), [])
        return try rows.first?.decode(0, as: Int.self) ?? 0
    }

    func delete<T: Entity>(_ type: T.Type, id: T.ID) throws -> Int {
        try execute(EntityStatements.delete(type, id: id).render(), [])
    }

    func delete<T: Entity>(_ type: T.Type, where predicate: SQLExpression) throws -> Int {
        try execute(EntityStatements.delete(type, where: predicate).render(), [])
    }
}
