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
        let encoded = try EntityStatements.encode(entity)
        if encoded.key.isNull {
            guard T.ID.self is any BinaryInteger.Type else {
                throw SqlCipherError.encodingFailed(
                    entity: String(describing: T.self),
                    reason: "its primary key is nil; SQLite assigns only integer keys, so set the \(T.ID.self) "
                        + "key before saving")
            }
            try execute(EntityStatements.insertWithoutKey(encoded), [])
            let rowid = lastInsertRowID
            guard let id = T.ID.fromDatabaseValue(.integer(rowid)) else {
                throw SqlCipherError.encodingFailed(
                    entity: String(describing: T.self),
                    reason: "SQLite assigned the rowid \(rowid), which \(T.ID.self) cannot hold")
            }
            var saved = entity
            saved[keyPath: T.primaryKey] = id
            return saved
        }
        let useUpsert: Bool
        switch strategy {
        case .automatic: useUpsert = supportsUpsert
        case .upsert: useUpsert = true
        case .updateThenInsert: useUpsert = false
        }
        if useUpsert {
            try execute(EntityStatements.upsert(encoded), [])
        } else if encoded.columns.isEmpty {
            if try query(EntityStatements.exists(encoded), []).isEmpty {
                try execute(EntityStatements.insertWithKey(encoded), [])
            }
        } else if try execute(EntityStatements.update(encoded), []) == 0 {
            try execute(EntityStatements.insertWithKey(encoded), [])
        }
        return entity
    }

    /// Saves every entity in one savepoint: all or none. Nests inside an open transaction.
    @discardableResult
    func save<T: Entity>(_ entities: [T], strategy: EntitySaveStrategy = .automatic) throws -> [T] {
        try inSavepoint {
            try entities.map { try save($0, strategy: strategy) }
        }
    }

    /// Runs a rendered query and decodes each row as `T`.
    func fetch<T: Decodable>(_ type: T.Type, _ fragment: SQLFragment, _ bindings: [ParameterBinding] = []) throws -> [T] {
        try RowDecoder.decode(type, rows: query(fragment, bindings))
    }

    func fetch<T: Entity>(_ type: T.Type, where predicate: SQLExpression?, orderBy: [OrderingTerm],
                          limit: Int?) throws -> [T] {
        try fetch(type, EntityStatements.fetch(type, where: predicate, orderBy: orderBy, limit: limit).render())
    }

    func fetchOne<T: Entity>(_ type: T.Type, id: T.ID) throws -> T? {
        try fetch(type, EntityStatements.fetchOne(type, id: id).render()).first
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
