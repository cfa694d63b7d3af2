import Foundation
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

/// The benchmark row as an entity that reads and writes itself (RowCodable): the same table and
/// columns as ``BenchEntity``, without Decoder and Encoder.
struct BenchRowEntity: Entity, RowCodable, Equatable {
    static let tableName = TableName(BenchSchema.table)
    static let primaryKey: WritableKeyPath<BenchRowEntity, Int?> & Sendable = \.id

    var id: Int?
    var c1, c2, c3, c4, c5, c6, c7, c8, c9: Int

    init(_ entity: BenchEntity) {
        id = entity.id
        (c1, c2, c3, c4, c5, c6, c7, c8, c9) =
            (entity.c1, entity.c2, entity.c3, entity.c4, entity.c5, entity.c6, entity.c7, entity.c8, entity.c9)
    }

    init(row: Row) throws {
        id = try row.decode("id")
        c1 = try row.decode("c1")
        c2 = try row.decode("c2")
        c3 = try row.decode("c3")
        c4 = try row.decode("c4")
        c5 = try row.decode("c5")
        c6 = try row.decode("c6")
        c7 = try row.decode("c7")
        c8 = try row.decode("c8")
        c9 = try row.decode("c9")
    }

    func encode(to columns: inout EntityColumns) {
        columns.set("id", id)
        columns.set("c1", c1)
        columns.set("c2", c2)
        columns.set("c3", c3)
        columns.set("c4", c4)
        columns.set("c5", c5)
        columns.set("c6", c6)
        columns.set("c7", c7)
        columns.set("c8", c8)
        columns.set("c9", c9)
    }

    var checksum: Int64 {
        Int64(id ?? 0) &+ Int64(c1) &+ Int64(c2) &+ Int64(c3) &+ Int64(c4) &+ Int64(c5) &+ Int64(c6)
            &+ Int64(c7) &+ Int64(c8) &+ Int64(c9)
    }
}

/// Every row as entities through the row protocol.
func fetchRowEntities(_ db: Database) async throws -> FetchTotals {
    let entities = try await db.fetch(BenchRowEntity.self)
    var sum: Int64 = 0
    for entity in entities {
        sum &+= entity.checksum
    }
    probeHeap()
    return FetchTotals(rows: entities.count, checksum: sum)
}

/// Every row as entities through Codable.
func fetchEntities(_ db: Database) async throws -> FetchTotals {
    let entities = try await db.fetch(BenchEntity.self)
    var sum: Int64 = 0
    for entity in entities {
        sum &+= entity.checksum
    }
    probeHeap()
    return FetchTotals(rows: entities.count, checksum: sum)
}

extension Bench {
    /// Entity writes: saving new entities (SQLite assigns the ids) and upserting existing ones,
    /// each batch with one `db.save([T])` call (one transaction), through Codable and through the
    /// row protocol.
    func runEntityWrites() async throws -> [WorkloadResult] {
        let rows = options.writeRows
        var save = WorkloadResult(
            name: "entity.save",
            description: "db.save([T]) of new Codable entities (nil id, SQLite assigns it) in one call; "
                + "C: INSERT binding NULL for the id, one transaction, one prepared statement",
            rows: rows, runs: options.runs)
        var saveRow = WorkloadResult(
            name: "entity.save.row",
            description: "the same with an entity that adopts RowEncodable (encode(to: inout EntityColumns)); C: as above",
            rows: rows, runs: options.runs)
        let plan = BenchSchema.upsertPlan(for: library)
        var upsert = WorkloadResult(
            name: "entity.upsert",
            description: "db.save([T]) of Codable entities whose rows exist, with new values, in one call; C: "
                + (plan.insertSQL == nil ? "INSERT ... ON CONFLICT(id) DO UPDATE" : "UPDATE, then INSERT when it changed nothing")
                + ", one transaction, prepared once",
            rows: rows, runs: options.runs)

        for encryption in Encryption.allCases {
            let floorSave = try makeFloorTable(path("save-c-\(encryption)"), key: encryption.key)
            let dbSave = try await makeSwiftTable(path("save-swift-\(encryption)"), key: encryption.key)
            var newEntities: [BenchEntity] = []
            var newRowEntities: [BenchRowEntity] = []
            func expectLastID(_ id: Int?) throws {
                guard id == rows else {
                    throw BenchError("db.save returned the id \(String(describing: id)) for the last entity; expected \(rows)")
                }
            }
            let floorTrial = Trial(prepare: { try floorSave.execute(BenchSchema.deleteSQL) },
                                   body: { try floorSave.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows, nullID: true) })
            let saveSamples = try await measurePaired([
                Pair(name: "codable", floor: floorTrial, swift: Trial(prepare: {
                    try await dbSave.execute(BenchSchema.deleteSQL)
                    newEntities = BenchEntity.batch(count: rows, salt: 0, assignIDs: false)
                }, body: {
                    try expectLastID(try await dbSave.save(newEntities).last?.id)
                })),
                Pair(name: "row", floor: floorTrial, swift: Trial(prepare: {
                    try await dbSave.execute(BenchSchema.deleteSQL)
                    newRowEntities = BenchEntity.batch(count: rows, salt: 0, assignIDs: false).map(BenchRowEntity.init)
                }, body: {
                    try expectLastID(try await dbSave.save(newRowEntities).last?.id)
                })),
            ], runs: options.runs)
            try await verifyRows(dbSave, count: rows, salt: 0, what: "the entity save")
            await dbSave.close()
            save[encryption] = CaseFigures(saveSamples["codable"]!)
            saveRow[encryption] = CaseFigures(saveSamples["row"]!)

            let floorUpsert = try makeFloorTable(path("upsert-c-\(encryption)"), key: encryption.key)
            try floorUpsert.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows)
            let dbUpsert = try await makeSwiftTable(path("upsert-swift-\(encryption)"), key: encryption.key)
            try await insertRows(dbUpsert, count: rows)
            var floorSalt = 0
            var salt = 0
            var changed: [BenchEntity] = []
            let upsertSamples = try await measurePaired([
                Pair(name: "upsert",
                     floor: Trial(prepare: { floorSalt += 1 },
                                  body: { try floorUpsert.upsertRows(plan, firstID: 1, count: rows, salt: floorSalt) }),
                     swift: Trial(prepare: {
                         salt += 1
                         changed = BenchEntity.batch(count: rows, salt: salt, assignIDs: true)
                     }, body: { try await dbUpsert.save(changed) })),
            ], runs: options.runs)
            try await verifyRows(dbUpsert, count: rows, salt: salt, what: "the entity upsert")
            await dbUpsert.close()
            upsert[encryption] = CaseFigures(upsertSamples["upsert"]!)
        }
        return [save, saveRow, upsert]
    }
}

/// An entity whose one property is many small sets: its column is JSON, and every set in it is
/// put in one order before it is written (a `Set` encodes in its hash table's order, which Swift
/// seeds anew in every process).
struct BenchSetsEntity: Entity {
    static let tableName = TableName("bench_sets")
    static let primaryKey: WritableKeyPath<BenchSetsEntity, Int?> & Sendable = \.id

    var id: Int?
    var sets: [Set<Int>]

    init(count: Int) {
        id = nil
        sets = (0..<count).map { [$0 + 2, $0 + 1, $0] }
    }
}

extension Bench {
    /// Saving one entity that holds many sets, against encoding the same value with `JSONEncoder`
    /// and inserting its text: the difference is the cost of putting every set in one order. One
    /// walk of the JSON does it; a walk per set was quadratic (20,000 sets took seconds), which
    /// this ratio shows and a timed unit test on a shared machine could not.
    func runEntitySets() async throws -> [WorkloadResult] {
        let sets = options.quick ? 4_000 : 40_000
        var result = WorkloadResult(
            name: "entity.save.sets",
            description: "db.save(T) of one Codable entity holding \(sets) three-element sets (a JSON column); "
                + "baseline: JSONEncoder's text of the same value inserted with db.execute, in the same run",
            rows: sets, runs: options.runs)
        let entity = BenchSetsEntity(count: sets)
        for encryption in Encryption.allCases {
            let db = try encryption.key.openDatabase(path("sets-\(encryption)"))
            try await db.execute("CREATE TABLE bench_sets(id INTEGER PRIMARY KEY, sets TEXT)")
            let clear: () async throws -> Void = { _ = try await db.execute("DELETE FROM bench_sets") }
            let samples = try await measurePaired([
                Pair(name: "sets",
                     floor: Trial(prepare: clear, body: {
                         let encoder = JSONEncoder()
                         encoder.outputFormatting = [.sortedKeys]
                         let text = String(decoding: try encoder.encode(entity.sets), as: UTF8.self)
                         _ = try await db.execute("INSERT INTO bench_sets(sets) VALUES (?)", text)
                     }),
                     swift: Trial(prepare: clear, body: { _ = try await db.save(entity) })),
            ], runs: options.runs)
            // The last timed run may have been the baseline's, whose sets are in hash order.
            try await clear()
            _ = try await db.save(entity)
            let stored = try await db.query("SELECT sets FROM bench_sets")
            guard stored.count == 1, stored[0].get(0, as: String.self)?.hasPrefix("[[0,1,2],[1,2,3],") == true else {
                await db.close()
                throw BenchError("the sets workload stored \(stored.count) rows, not one row with its sets in order")
            }
            await db.close()
            result[encryption] = CaseFigures(samples["sets"]!)
        }
        return [result]
    }
}
