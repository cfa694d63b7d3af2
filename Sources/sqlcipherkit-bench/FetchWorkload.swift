import SqlCipherKit

extension Bench {
    /// Fetching every row of a table of `fetchRows` rows: by column index, by column name, and as
    /// entities through Codable. The C floor copies every value into one array, with the columns
    /// found by index, or by name once per query.
    func runFetch() async throws -> [WorkloadResult] {
        let rows = options.fetchRows
        var byIndex = WorkloadResult(
            name: "fetch.byIndex",
            description: "every row of the table (db.query), each value read by column index "
                + "(row.get(i, as: Int.self)); C: sqlite3_column_int64 into one array",
            rows: rows, runs: options.runs)
        var byName = WorkloadResult(
            name: "fetch.byName",
            description: "every row of the table (db.query), each value read by column name "
                + "(row.get(\"c1\", as: Int.self)); C: names resolved once per query, then as by index",
            rows: rows, runs: options.runs)
        var entity = WorkloadResult(
            name: "fetch.entity",
            description: "every row as a Codable Entity (db.fetch(T.self)); C: the by-name loop, "
                + "rows into structs",
            rows: rows, runs: options.runs)

        for encryption in Encryption.allCases {
            let file = path("fetch-\(encryption)")
            let db = try await makeSwiftTable(file, key: encryption.key)
            try await insertRows(db, count: rows)
            let floor = try FloorConnection(path: file, key: encryption.key)
            let expected = FetchTotals(rows: rows, checksum: BenchSchema.expectedChecksum(rows: rows))
            func check(_ totals: FetchTotals, _ what: String) throws {
                guard totals == expected else {
                    throw BenchError("\(what) read \(totals.rows) rows with checksum \(totals.checksum); "
                        + "expected \(expected.rows) rows with checksum \(expected.checksum)")
                }
            }
            let names = BenchSchema.columns
            let samples = try await measureInterleaved([
                Trial(name: "c.index", body: { try check(floor.fetchByIndex(BenchSchema.selectSQL), "the C fetch by index") }),
                Trial(name: "swift.index", body: { try check(await fetchByIndex(db), "the Swift fetch by index") }),
                Trial(name: "c.name", body: {
                    try check(floor.fetchByName(BenchSchema.selectSQL, names: names), "the C fetch by name")
                }),
                Trial(name: "swift.name", body: { try check(await fetchByName(db), "the Swift fetch by name") }),
                Trial(name: "swift.entity", body: { try check(await fetchEntities(db), "the Swift entity fetch") }),
            ], runs: options.runs)
            byIndex[encryption] = CaseFigures(swift: samples["swift.index"]!, floor: samples["c.index"]!)
            byName[encryption] = CaseFigures(swift: samples["swift.name"]!, floor: samples["c.name"]!)
            entity[encryption] = CaseFigures(swift: samples["swift.entity"]!, floor: samples["c.name"]!)
            await db.close()
        }
        return [byIndex, byName, entity]
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
    return FetchTotals(rows: rows.count, checksum: sum)
}
