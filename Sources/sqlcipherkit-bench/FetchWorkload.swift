import SqlCipherKit

extension Bench {
    /// Fetching every row of a table of `fetchRows` rows: as `[Row]` by column index and by name,
    /// through a cursor by index and by name, and as entities through Codable and through the row
    /// protocol. The C floor copies every value into one array, with the columns found by index,
    /// or by name once per query; each Swift figure is paired with its own floor run.
    func runFetch() async throws -> [WorkloadResult] {
        let rows = options.fetchRows
        var results: [String: WorkloadResult] = [:]
        let kinds: [(name: String, byName: Bool, description: String, read: @Sendable (Database) async throws -> FetchTotals)] = [
            ("fetch.byIndex", false, "every row of the table (db.query), each value read by column index "
                + "(row.get(i, as: Int.self)); C: sqlite3_column_int64 into one array", fetchByIndex),
            ("fetch.byName", true, "every row of the table (db.query), each value read by column name "
                + "(row.get(\"c1\", as: Int.self)); C: names resolved once per query, then as by index", fetchByName),
            ("cursor.byIndex", false, "every row through conn.cursor inside db.read (one reused row buffer), "
                + "values by column index; C: as for fetch.byIndex", cursorByIndex),
            ("cursor.byName", true, "every row through conn.cursor inside db.read, values by column name; "
                + "C: as for fetch.byName", cursorByName),
            ("fetch.entity", true, "every row as a Codable Entity (db.fetch(T.self)); C: the by-name loop, "
                + "rows into structs", fetchEntities),
            ("fetch.entity.row", true, "every row as an Entity that adopts RowDecodable (init(row:) reading by "
                + "column name); C: the by-name loop", fetchRowEntities),
        ]
        for kind in kinds {
            results[kind.name] = WorkloadResult(name: kind.name, description: kind.description, rows: rows, runs: options.runs)
        }

        for encryption in Encryption.allCases {
            let file = path("fetch-\(encryption)")
            let db = try await makeSwiftTable(file, key: encryption.key)
            try await insertRows(db, count: rows)
            let floor = try FloorConnection(path: file, key: encryption.key)
            let expected = FetchTotals(rows: rows, checksum: BenchSchema.expectedChecksum(rows: rows))
            @Sendable func check(_ totals: FetchTotals, _ what: String) throws {
                guard totals == expected else {
                    throw BenchError("\(what) read \(totals.rows) rows with checksum \(totals.checksum); "
                        + "expected \(expected.rows) rows with checksum \(expected.checksum)")
                }
            }
            let names = BenchSchema.columns
            let byIndexFloor = Trial(body: { try check(floor.fetchByIndex(BenchSchema.selectSQL), "the C fetch by index") })
            let byNameFloor = Trial(body: {
                try check(floor.fetchByName(BenchSchema.selectSQL, names: names), "the C fetch by name")
            })
            let samples = try await measurePaired(kinds.map { kind in
                Pair(name: kind.name, floor: kind.byName ? byNameFloor : byIndexFloor,
                     swift: Trial(body: { try check(await kind.read(db), kind.name) }))
            }, runs: options.runs)
            for kind in kinds {
                results[kind.name]![encryption] = CaseFigures(samples[kind.name]!)
            }
            await db.close()
        }
        return kinds.map { results[$0.name]! }
    }
}

/// Every row by column index, as a user reads a result.
func fetchByIndex(_ db: Database) async throws -> FetchTotals {
    let rows = try await db.query(BenchSchema.selectSQL)
    var sum: Int64 = 0
    for row in rows {
        for column in 0..<10 {
            sum &+= Int64(row.get(column, as: Int.self) ?? 0)
        }
    }
    probeHeap()
    return FetchTotals(rows: rows.count, checksum: sum)
}

/// Every row through a cursor inside `db.read`, by column index: no `[Row]`, one row buffer reused.
func cursorByIndex(_ db: Database) async throws -> FetchTotals {
    try await db.read { conn in
        let cursor = try conn.cursor(BenchSchema.selectSQL)
        var rows = 0
        var sum: Int64 = 0
        while let row = try cursor.next() {
            rows += 1
            for column in 0..<10 { sum &+= Int64(row.get(column, as: Int.self) ?? 0) }
        }
        probeHeap()
        return FetchTotals(rows: rows, checksum: sum)
    }
}

/// Every row through a cursor inside `db.read`, by column name.
func cursorByName(_ db: Database) async throws -> FetchTotals {
    try await db.read { conn in
        let cursor = try conn.cursor(BenchSchema.selectSQL)
        var rows = 0
        var sum: Int64 = 0
        while let row = try cursor.next() {
            rows += 1
            sum &+= Int64(row.get("id", as: Int.self) ?? 0)
            sum &+= Int64(row.get("c1", as: Int.self) ?? 0)
            sum &+= Int64(row.get("c2", as: Int.self) ?? 0)
            sum &+= Int64(row.get("c3", as: Int.self) ?? 0)
            sum &+= Int64(row.get("c4", as: Int.self) ?? 0)
            sum &+= Int64(row.get("c5", as: Int.self) ?? 0)
            sum &+= Int64(row.get("c6", as: Int.self) ?? 0)
            sum &+= Int64(row.get("c7", as: Int.self) ?? 0)
            sum &+= Int64(row.get("c8", as: Int.self) ?? 0)
            sum &+= Int64(row.get("c9", as: Int.self) ?? 0)
        }
        probeHeap()
        return FetchTotals(rows: rows, checksum: sum)
    }
}

/// Every row by column name, as a user reads a result.
func fetchByName(_ db: Database) async throws -> FetchTotals {
    let rows = try await db.query(BenchSchema.selectSQL)
    var sum: Int64 = 0
    for row in rows {
        sum &+= Int64(row.get("id", as: Int.self) ?? 0)
        sum &+= Int64(row.get("c1", as: Int.self) ?? 0)
        sum &+= Int64(row.get("c2", as: Int.self) ?? 0)
        sum &+= Int64(row.get("c3", as: Int.self) ?? 0)
        sum &+= Int64(row.get("c4", as: Int.self) ?? 0)
        sum &+= Int64(row.get("c5", as: Int.self) ?? 0)
        sum &+= Int64(row.get("c6", as: Int.self) ?? 0)
        sum &+= Int64(row.get("c7", as: Int.self) ?? 0)
        sum &+= Int64(row.get("c8", as: Int.self) ?? 0)
        sum &+= Int64(row.get("c9", as: Int.self) ?? 0)
    }
    probeHeap()
    return FetchTotals(rows: rows.count, checksum: sum)
}
