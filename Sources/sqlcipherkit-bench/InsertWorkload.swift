import SqlCipherKit

extension Bench {
    /// Inserts: `rows` rows of ten integers in one transaction, one prepared statement, through
    /// raw SQL (existential arguments) and through a typed prepared statement.
    func runInsert() async throws -> [WorkloadResult] {
        let rows = options.writeRows
        var raw = WorkloadResult(
            name: "insert",
            description: "INSERT of ten integer columns per row, all rows in one transaction with one prepared "
                + "statement (Swift: db.transaction { conn.execute(sql, 10 arguments) } per row)",
            rows: rows, runs: options.runs)
        var prepared = WorkloadResult(
            name: "insert.prepared",
            description: "the same rows through a typed prepared statement (db.transaction { let insert = "
                + "conn.prepare(sql); insert.execute(10 integers) per row })",
            rows: rows, runs: options.runs)
        for encryption in Encryption.allCases {
            let floor = try makeFloorTable(path("insert-c-\(encryption)"), key: encryption.key)
            let db = try await makeSwiftTable(path("insert-swift-\(encryption)"), key: encryption.key)
            let floorTrial = Trial(prepare: { try floor.execute(BenchSchema.deleteSQL) },
                                   body: { try floor.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows) })
            let samples = try await measurePaired([
                Pair(name: "raw", floor: floorTrial, swift: Trial(
                    prepare: { try await db.execute(BenchSchema.deleteSQL) },
                    body: { try await insertRows(db, count: rows) })),
                Pair(name: "prepared", floor: floorTrial, swift: Trial(
                    prepare: { try await db.execute(BenchSchema.deleteSQL) },
                    body: { try await insertRowsPrepared(db, count: rows) })),
            ], runs: options.runs)
            try await verifyRows(db, count: rows, salt: 0, what: "the Swift insert")
            await db.close()
            raw[encryption] = CaseFigures(samples["raw"]!)
            prepared[encryption] = CaseFigures(samples["prepared"]!)
        }
        return [raw, prepared]
    }

    /// A new floor database in WAL mode (SqlCipherKit's default for new files) with the bench table.
    func makeFloorTable(_ path: String, key: BenchKey) throws -> FloorConnection {
        let floor = try FloorConnection(path: path, key: key)
        try floor.execute("PRAGMA journal_mode = WAL")
        try floor.execute(BenchSchema.createSQL())
        return floor
    }

    /// A new SqlCipherKit database with the bench table.
    func makeSwiftTable(_ path: String, key: BenchKey) async throws -> Database {
        let db = try key.openDatabase(path)
        try await db.execute(BenchSchema.createSQL())
        return db
    }

    /// Checks the table holds rows 1...count written with `salt`.
    func verifyRows(_ db: Database, count: Int, salt: Int, what: String) async throws {
        let sums = BenchSchema.columns.joined(separator: " + ")
        let row = try await db.query("SELECT count(*), total(\(sums)) FROM \(BenchSchema.table)")[0]
        let expected = Double(BenchSchema.expectedChecksum(rows: count, salt: salt))
        guard row.get(0, as: Int.self) == count, row.get(1, as: Double.self) == expected else {
            throw BenchError("\(what) left \(row) in the table; expected \(count) rows summing to \(expected)")
        }
    }
}

/// The Swift side of the insert workload, as a user writes it.
func insertRows(_ db: Database, count: Int, salt: Int = 0) async throws {
    let sql = BenchSchema.insertSQL
    try await db.transaction { conn in
        for id in 1...count {
            try conn.execute(sql, id, id &* 1 &+ salt, id &* 2 &+ salt, id &* 3 &+ salt, id &* 4 &+ salt,
                             id &* 5 &+ salt, id &* 6 &+ salt, id &* 7 &+ salt, id &* 8 &+ salt, id &* 9 &+ salt)
        }
    }
}

/// The insert workload through a typed prepared statement: prepared once in the body, ten
/// integers bound per row without existential boxes.
func insertRowsPrepared(_ db: Database, count: Int, salt: Int = 0) async throws {
    try await db.transaction { conn in
        let insert = try conn.prepare(BenchSchema.insertSQL)
        for id in 1...count {
            try insert.execute(id, id &* 1 &+ salt, id &* 2 &+ salt, id &* 3 &+ salt, id &* 4 &+ salt,
                               id &* 5 &+ salt, id &* 6 &+ salt, id &* 7 &+ salt, id &* 8 &+ salt, id &* 9 &+ salt)
        }
    }
}
