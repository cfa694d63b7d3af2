/// The SQL of an entity save for one column layout, with positional `?` parameters.
///
/// The text depends only on the table and the column names, never on the values, so a batch of
/// entities of one type prepares each statement once (through the connection's statement cache)
/// and binds every entity's values by position.
struct EntitySaveSQL {
    /// The quoted table name.
    let table: String
    /// The quoted column names, in the entity's coding-key order.
    let columns: [String]
    /// The index of the primary key's column in ``columns``.
    let keyIndex: Int

    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a name holding NUL.
    init(table: String, columns: [String], keyIndex: Int) throws {
        self.table = try SQLRenderer.quoteIdentifier(table)
        self.columns = try columns.map(SQLRenderer.quoteIdentifier)
        self.keyIndex = keyIndex
    }

    private var key: String { columns[keyIndex] }

    /// The columns other than the key, in order.
    private var others: [String] {
        var others = columns
        others.remove(at: keyIndex)
        return others
    }

    private static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// `INSERT INTO t (columns but the key) VALUES (?, …)`: SQLite assigns the key. With no other
    /// column, `INSERT INTO t DEFAULT VALUES`.
    var insertWithoutKey: String {
        let others = others
        guard !others.isEmpty else { return "INSERT INTO \(table) DEFAULT VALUES" }
        return "INSERT INTO \(table) (\(others.joined(separator: ", "))) VALUES (\(Self.placeholders(others.count)))"
    }

    /// `INSERT INTO t (every column) VALUES (?, …)`.
    var insertWithKey: String {
        "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(Self.placeholders(columns.count)))"
    }

    /// `INSERT … ON CONFLICT (key) DO UPDATE SET c = excluded.c, …` (SQLite 3.24+,
    /// https://sqlite.org/lang_upsert.html): updates the row in place, so no delete trigger or
    /// foreign-key action runs. `DO NOTHING` when the key is the only column.
    var upsert: String {
        let others = others
        let action = others.isEmpty
            ? "DO NOTHING"
            : "DO UPDATE SET " + others.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return insertWithKey + " ON CONFLICT (\(key)) " + action
    }

    /// `UPDATE t SET c = ?, … WHERE key = ?`, the first half of a save without UPSERT: the other
    /// columns' values, then the key. Nil when the key is the only column.
    var update: String? {
        let others = others
        guard !others.isEmpty else { return nil }
        return "UPDATE \(table) SET \(others.map { "\($0) = ?" }.joined(separator: ", ")) WHERE \(key) = ?"
    }

    /// `SELECT 1 FROM t WHERE key = ?`: whether a key-only entity's row exists.
    var exists: String {
        "SELECT 1 FROM \(table) WHERE \(key) = ?"
    }
}

/// Saves entities of one type on one connection.
///
/// One writer serves a whole batch: every entity is encoded into one reused ``EntityColumns`` (the
/// ``EntityEncoder``'s, which an entity that adopts ``RowEncodable`` writes into directly) and runs
/// statements prepared once per column layout, binding values by position, so the per-entity cost is the
/// encoding, the binds and the step. Every statement runs through ``Statement/step()``, so the
/// change tracker sees each execution.
struct EntityWriter<T: Entity> {
    private let connection: SQLiteConnection
    private let useUpsert: Bool
    private let encoder: EntityEncoder
    /// Set when `T` adopts ``RowEncodable``: the entity then writes into the encoder's
    /// ``EntityEncoder/columns`` itself.
    private let rowEncode: ((T, inout EntityColumns) throws -> Void)?
    /// Whether ``rowEncode`` is set: a flag, so that choosing the path copies nothing.
    private let usesRows: Bool
    private let keyPath: WritableKeyPath<T, T.PrimaryKey>
    private let hasIntegerKey: Bool
    /// Whether this writer checked that the key column is the table's rowid
    /// (``SQLiteConnection/requireRowIDKey(table:column:entity:)``), before its first insert
    /// without a key.
    private var rowIDKeyChecked = false

    /// The encoder layout the statements below were prepared for.
    private var layoutVersion = -1
    private var sql: EntitySaveSQL?
    /// The prepared statements of the current layout, by ``Kind``.
    private var statements: [Statement?] = Array(repeating: nil, count: Kind.allCases.count)

    /// The statements a save may run.
    private enum Kind: Int, CaseIterable {
        case insertWithoutKey, insertWithKey, upsert, update, exists
    }

    init(connection: SQLiteConnection, strategy: EntitySaveStrategy) {
        self.connection = connection
        switch strategy {
        case .automatic: useUpsert = connection.supportsUpsert
        case .upsert: useUpsert = true
        case .updateThenInsert: useUpsert = false
        }
        encoder = EntityEncoder(entityName: String(describing: T.self))
        rowEncode = RowEncodableColumns.make(for: T.self)?.encode
        usesRows = rowEncode != nil
        keyPath = T.primaryKey
        hasIntegerKey = T.ID.self is any BinaryInteger.Type
    }

    /// Inserts or updates `entity`; returns it with its key set.
    /// - Throws: ``SqlCipherError/encodingFailed(entity:reason:)`` and SQLite's errors.
    mutating func save(_ entity: T) throws -> T {
        if usesRows {
            try encodeColumns(entity)
        } else {
            try encoder.encode(entity)
        }
        if currentLayoutVersion != layoutVersion { try adoptLayout() }
        guard let sql else { preconditionFailure("adoptLayout sets the SQL") }
        let keyIndex = sql.keyIndex
        let key = entity[keyPath: keyPath].entityKeyValue?.databaseValue ?? .null
        let values = currentValues
        let encodedKey = values[keyIndex]
        guard encodedKey == key else {
            throw SqlCipherError.encodingFailed(
                entity: encoder.entityName,
                reason: "column \"\(currentColumns[keyIndex])\" holds \(encodedKey) but the primaryKey "
                    + "property holds \(key); make primaryKeyColumn name the primaryKey property's "
                    + (usesRows ? "column" : "coding key")
            )
        }

        if key.isNull {
            guard hasIntegerKey else {
                throw SqlCipherError.encodingFailed(
                    entity: encoder.entityName,
                    reason: "its primary key is nil; SQLite assigns only integer keys, so set the \(T.ID.self) "
                        + "key before saving")
            }
            if !rowIDKeyChecked {
                try connection.requireRowIDKey(table: T.tableName.name, column: currentColumns[keyIndex],
                                               entity: encoder.entityName)
                rowIDKeyChecked = true
            }
            let statement = try prepared(.insertWithoutKey, parameters: values.count - 1)
            try run(statement, values, skippingKey: keyIndex)
            let rowid = connection.lastInsertRowID
            guard let id = T.ID.fromDatabaseValue(.integer(rowid)) else {
                throw SqlCipherError.encodingFailed(
                    entity: encoder.entityName,
                    reason: "SQLite assigned the rowid \(rowid), which \(T.ID.self) cannot hold")
            }
            var saved = entity
            saved[keyPath: keyPath] = T.PrimaryKey.entityKey(assigned: id)
            return saved
        }

        let count = values.count
        if useUpsert {
            // Prepared first, then run: `run(prepared(...))` would copy the whole writer, since a
            // mutating call may not happen while `self` is borrowed for `run`.
            let statement = try prepared(.upsert, parameters: count)
            try run(statement, values, skippingKey: nil)
            return entity
        }
        // Two statements, the insert decided by the first: another connection (another process)
        // that inserted the row between them made the insert fail with "UNIQUE constraint
        // failed", where the row was to be updated. They run holding the write lock from the
        // first (``SQLiteConnection/holdingTheWriteLock(_:)``).
        try connection.holdingTheWriteLock {
            if sql.update != nil {
                let statement = try prepared(.update, parameters: count)
                try run(statement, values, skippingKey: keyIndex, thenKey: key)
                if connection.changes == 0 {
                    let insert = try prepared(.insertWithKey, parameters: count)
                    try run(insert, values, skippingKey: nil)
                }
            } else {
                let statement = try prepared(.exists, parameters: 1)
                let found: Bool
                do {
                    defer { statement.reset() }
                    try statement.bind(key, at: 1)
                    found = try statement.step()
                }
                if !found {
                    let insert = try prepared(.insertWithKey, parameters: count)
                    try run(insert, values, skippingKey: nil)
                }
            }
        }
        return entity
    }

    /// Saves `entity` as the row whose `columns` hold the entity's values, when there is one: that
    /// row's key is put into the entity, which ``save(_:)`` then writes over the row. With no such
    /// row, ``save(_:)`` as it is. Run holding the write lock from the lookup on
    /// (``SQLiteConnection/holdingTheWriteLock(_:)``), so that no other write comes between.
    ///
    /// The lookup is a plain `SELECT`, so it works on SQLite 3.15 (SQLCipher 3.4.1), which has no
    /// `ON CONFLICT … DO UPDATE`; and it uses `=`, so a NULL matches no row, as in a UNIQUE index.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for an empty list, a column the entity
    ///   does not encode, the primary key's column, or values that more than one row holds.
    mutating func save(_ entity: T, matching names: [String]) throws -> T {
        guard !names.isEmpty else {
            throw SqlCipherError.invalidQuery(reason: "save(_:onConflict:) needs at least one column name")
        }
        if usesRows {
            try encodeColumns(entity)
        } else {
            try encoder.encode(entity)
        }
        if currentLayoutVersion != layoutVersion { try adoptLayout() }
        guard let sql else { preconditionFailure("adoptLayout sets the SQL") }
        let columns = currentColumns
        let values = currentValues
        var matched: [DatabaseValue] = []
        var conditions: [String] = []
        for name in names {
            let index = columns.firstIndex(of: name) ?? columns.firstIndex { $0.lowercased() == name.lowercased() }
            guard let index else {
                throw SqlCipherError.invalidQuery(
                    reason: "\(encoder.entityName) encodes no column named \"\(name)\" (columns: "
                        + "\(columns.joined(separator: ", "))); name the UNIQUE column(s) to match on")
            }
            guard index != sql.keyIndex else {
                throw SqlCipherError.invalidQuery(
                    reason: "\"\(name)\" is the primary key's column; save(_:) already inserts or updates by the key")
            }
            conditions.append("\(try SQLRenderer.quoteIdentifier(columns[index])) = ?")
            matched.append(values[index])
        }
        let select = "SELECT \(try SQLRenderer.quoteIdentifier(columns[sql.keyIndex])) FROM \(sql.table) WHERE "
            + conditions.joined(separator: " AND ") + " LIMIT 2"
        let rows = try connection.query(select, binding: ArgumentList(matched))
        guard rows.count < 2 else {
            throw SqlCipherError.invalidQuery(
                reason: "more than one row of \(T.tableName.name) holds these values of \(names.joined(separator: ", ")); "
                    + "save(_:onConflict:) needs columns that a UNIQUE index or constraint covers")
        }
        guard let row = rows.first else { return try save(entity) }
        let stored = row[0]
        guard let id = T.ID.fromDatabaseValue(stored) else {
            throw SqlCipherError.decodingFailed(
                entity: encoder.entityName, column: columns[sql.keyIndex], stored: stored.kindDescription,
                expected: String(describing: T.ID.self))
        }
        var keyed = entity
        keyed[keyPath: keyPath] = T.PrimaryKey.entityKey(assigned: id)
        return try save(keyed)
    }

    /// Releases the encoder's reused container; call when the batch is done.
    func finish() {
        encoder.finish()
    }

    /// Has a ``RowEncodable`` entity write its columns into the encoder's buffer.
    /// - Throws: ``SqlCipherError/encodingFailed(entity:reason:)``, as the `Encodable` path does.
    private func encodeColumns(_ entity: T) throws {
        encoder.columns.startEntity()
        // Row hot path (once per entity saved): called only when ``usesRows`` says it is set.
        let encode = rowEncode.unsafelyUnwrapped
        do {
            try encode(entity, &encoder.columns)
        } catch let error as SqlCipherError {
            throw error
        } catch {
            throw SqlCipherError.encodingFailed(entity: encoder.entityName, reason: String(describing: error))
        }
        if let problem = encoder.columns.finishEntity() {
            throw SqlCipherError.encodingFailed(entity: encoder.entityName, reason: problem)
        }
    }

    /// The column names of the entity just encoded, by either path.
    private var currentColumns: [String] { encoder.columns.names }
    /// Its values, in the order of ``currentColumns``.
    private var currentValues: [DatabaseValue] { encoder.columns.values }
    /// The layout version of the buffer both paths write.
    private var currentLayoutVersion: Int { encoder.columns.layoutVersion }

    /// Finds the key column in the encoder's new layout and forgets the statements of the old one.
    private mutating func adoptLayout() throws {
        let columns = currentColumns
        let keyColumn = T.primaryKeyColumn
        let keyIndex = columns.firstIndex(of: keyColumn)
            ?? columns.firstIndex { $0.lowercased() == keyColumn.lowercased() }
        guard let keyIndex else {
            throw SqlCipherError.encodingFailed(
                entity: encoder.entityName,
                reason: "it encodes no column named \"\(keyColumn)\" for its primary key (columns: "
                    + "\(columns.joined(separator: ", "))); declare `static let primaryKeyColumn = \"…\"` "
                    + "with the coding key of the primaryKey property")
        }
        try refuseRowidAliases(columns, keyIndex: keyIndex)
        sql = try EntitySaveSQL(table: T.tableName.name, columns: columns, keyIndex: keyIndex)
        statements = Array(repeating: nil, count: Kind.allCases.count)
        layoutVersion = currentLayoutVersion
    }

    /// Refuses a column other than the key named `rowid`, `oid` or `_rowid_` (any case) that the
    /// table lacks: SQLite then takes the name for the row's key, so a property coded so (an
    /// `oid: Int`) was written into the key, moving the row to another id or replacing another
    /// row, and a `Double` one failed with a bare "datatype mismatch" (found by the attack review).
    /// Costs nothing unless such a name is encoded; a table that does not exist is left to SQLite.
    private func refuseRowidAliases(_ columns: [String], keyIndex: Int) throws {
        for (index, column) in columns.enumerated() where index != keyIndex
            && ["rowid", "oid", "_rowid_"].contains(FunctionKey.fold(column)) {
            var tableColumns: [String] = []
            let table = SQLRenderer.quotedName(T.tableName.name)
            guard connection.rows("PRAGMA table_info(\(table))", columns: [1], { values in
                if case .text(let name) = values[0] { tableColumns.append(FunctionKey.fold(name)) }
            }), !tableColumns.isEmpty, !tableColumns.contains(FunctionKey.fold(column)) else { continue }
            throw SqlCipherError.encodingFailed(
                entity: encoder.entityName,
                reason: "it encodes a column named \"\(column)\", which table \(T.tableName.name) does not have, and SQLite "
                    + "reads rowid, oid and _rowid_ as the row's key when no column is so named: the save would write "
                    + "this value into the key of the row (or fail with \"datatype mismatch\"). Give the property "
                    + "another coding key, or add the column to the table. Nothing was saved")
        }
    }

    /// The statement of `kind`, prepared (through the connection's cache) on first use.
    ///
    /// The text is made only on that first use, from ``sql``; no closure or copy of the writer
    /// is made for the calls that find the statement.
    private mutating func prepared(_ kind: Kind, parameters: Int) throws -> Statement {
        if let statement = statements[kind.rawValue] { return statement }
        return try prepare(kind, parameters: parameters)
    }

    private mutating func prepare(_ kind: Kind, parameters: Int) throws -> Statement {
        guard let layout = self.sql else { preconditionFailure("adoptLayout sets the SQL") }
        let sql: String
        switch kind {
        case .insertWithoutKey: sql = layout.insertWithoutKey
        case .insertWithKey: sql = layout.insertWithKey
        case .upsert: sql = layout.upsert
        case .update: sql = layout.update ?? ""
        case .exists: sql = layout.exists
        }
        let statement = try connection.cachedStatement(sql)
        guard statement.parameterCount == parameters else {
            throw SqlCipherError.argumentCountMismatch(expected: statement.parameterCount, given: parameters, sql: sql).redactingSQL()
        }
        statements[kind.rawValue] = statement
        return statement
    }

    /// Binds the encoded values in order (without the key's when `skippingKey` is set, then
    /// `thenKey` when given), runs the statement to completion and resets it.
    private func run(_ statement: Statement, _ values: [DatabaseValue], skippingKey: Int?,
                     thenKey: DatabaseValue? = nil) throws {
        defer { statement.reset() }
        var position: Int32 = 1
        var index = 0
        for value in values {
            if index != skippingKey {
                try statement.bind(value, at: position)
                position += 1
            }
            index += 1
        }
        if let thenKey { try statement.bind(thenKey, at: position) }
        try statement.run()
    }
}
