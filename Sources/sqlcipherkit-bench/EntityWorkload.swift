import SqlCipherKit

/// The benchmark row as a Codable entity: the table's id and nine integer columns.
struct BenchEntity: Entity, Equatable {
    static let tableName = TableName(BenchSchema.table)
    static let primaryKey: WritableKeyPath<BenchEntity, Int?> & Sendable = \.id

    var id: Int?
    var c1, c2, c3, c4, c5, c6, c7, c8, c9: Int

    /// Row `id`'s values; `assignID` false leaves the key for SQLite to assign.
    init(id: Int, salt: Int, assignID: Bool) {
        self.id = assignID ? id : nil
        c1 = BenchSchema.value(id, 1, salt: salt)
        c2 = BenchSchema.value(id, 2, salt: salt)
        c3 = BenchSchema.value(id, 3, salt: salt)
        c4 = BenchSchema.value(id, 4, salt: salt)
        c5 = BenchSchema.value(id, 5, salt: salt)
        c6 = BenchSchema.value(id, 6, salt: salt)
        c7 = BenchSchema.value(id, 7, salt: salt)
        c8 = BenchSchema.value(id, 8, salt: salt)
        c9 = BenchSchema.value(id, 9, salt: salt)
    }

    var checksum: Int64 {
        Int64(id ?? 0) &+ Int64(c1) &+ Int64(c2) &+ Int64(c3) &+ Int64(c4) &+ Int64(c5) &+ Int64(c6)
            &+ Int64(c7) &+ Int64(c8) &+ Int64(c9)
    }

    static func batch(count: Int, salt: Int, assignIDs: Bool) -> [BenchEntity] {
        (1...count).map { BenchEntity(id: $0, salt: salt, assignID: assignIDs) }
    }
}

/// Every row as entities through Codable.
func fetchEntities(_ db: Database) async throws -> FetchTotals {
    let entities = try await db.fetch(BenchEntity.self)
    var sum: Int64 = 0
    for entity in entities {
        sum &+= entity.checksum
    }
    return FetchTotals(rows: entities.count, checksum: sum)
}

extension Bench {
    /// Entity writes: saving new entities (SQLite assigns the ids) and upserting existing ones,
    /// each batch with one `db.save([T])` call (one transaction).
    func runEntityWrites() async throws -> [WorkloadResult] {
        let rows = options.writeRows
        var save = WorkloadResult(
            name: "entity.save",
            description: "db.save([T]) of new entities (nil id, SQLite assigns it) in one call; "
                + "C: INSERT binding NULL for the id, one transaction, one prepared statement",
            rows: rows, runs: options.runs)
        let plan = BenchSchema.upsertPlan(for: library)
        var upsert = WorkloadResult(
            name: "entity.upsert",
            description: "db.save([T]) of entities whose rows exist, with new values, in one call; C: "
                + (plan.insertSQL == nil ? "INSERT ... ON CONFLICT(id) DO UPDATE" : "UPDATE, then INSERT when it changed nothing")
                + ", one transaction, prepared once",
            rows: rows, runs: options.runs)

        for encryption in Encryption.allCases {
            let floorSave = try makeFloorTable(path("save-c-\(encryption)"), key: encryption.key)
            let dbSave = try await makeSwiftTable(path("save-swift-\(encryption)"), key: encryption.key)
            var newEntities: [BenchEntity] = []
            let saveSamples = try await measureInterleaved([
                Trial(name: "c", prepare: { try floorSave.execute(BenchSchema.deleteSQL) },
                      body: { try floorSave.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows, nullID: true) }),
                Trial(name: "swift", prepare: {
                    try await dbSave.execute(BenchSchema.deleteSQL)
                    newEntities = BenchEntity.batch(count: rows, salt: 0, assignIDs: false)
                }, body: {
                    let saved = try await dbSave.save(newEntities)
                    guard saved.last?.id == rows else {
                        throw BenchError("db.save returned the id \(String(describing: saved.last?.id)) for the last entity; "
                            + "expected \(rows)")
                    }
                }),
            ], runs: options.runs)
            try await verifyRows(dbSave, count: rows, salt: 0, what: "the entity save")
            await dbSave.close()
            save[encryption] = CaseFigures(swift: saveSamples["swift"]!, floor: saveSamples["c"]!)

            let floorUpsert = try makeFloorTable(path("upsert-c-\(encryption)"), key: encryption.key)
            try floorUpsert.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows)
            let dbUpsert = try await makeSwiftTable(path("upsert-swift-\(encryption)"), key: encryption.key)
            try await insertRows(dbUpsert, count: rows)
            var salt = 0
            var changed: [BenchEntity] = []
            let upsertSamples = try await measureInterleaved([
                Trial(name: "c", prepare: { salt += 1 },
                      body: { try floorUpsert.upsertRows(plan, firstID: 1, count: rows, salt: salt) }),
                Trial(name: "swift", prepare: { changed = BenchEntity.batch(count: rows, salt: salt, assignIDs: true) },
                      body: { try await dbUpsert.save(changed) }),
            ], runs: options.runs)
            try await verifyRows(dbUpsert, count: rows, salt: salt, what: "the entity upsert")
            await dbUpsert.close()
            upsert[encryption] = CaseFigures(swift: upsertSamples["swift"]!, floor: upsertSamples["c"]!)
        }
        return [save, upsert]
    }
}
