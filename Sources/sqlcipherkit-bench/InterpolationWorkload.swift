import SqlCipherKit

extension Bench {
    /// SQL literals against positional arguments: the same one-row inserts and by-key queries in
    /// one transaction, written as `conn.execute("… VALUES (?, ?)", a, b)` (the floor) and as
    /// `conn.execute(literal: "… VALUES (\(a), \(b))")`, run back to back in every round. The
    /// ratio says what rendering the literal and binding its values by name costs per statement.
    func runInterpolation() async throws -> [WorkloadResult] {
        let rows = options.quick ? 2_000 : 20_000
        let db = try Database(path: path("interpolation"), rawKey: BenchKey.rawKeyBytes)
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b TEXT NOT NULL)")
        var insert = WorkloadResult(
            name: "interpolation.insert",
            description: "\(rows) one-row INSERTs in one transaction; Swift: conn.execute(literal: \"… (\\(a), \\(b))\"), "
                + "floor: conn.execute(\"… (?, ?)\", a, b)",
            rows: rows, runs: options.runs)
        let clear = { _ = try await db.execute("DELETE FROM t") }
        let inserts = try await measurePaired([
            Pair(name: "insert",
                 floor: Trial(prepare: clear, body: {
                     try await db.transaction { conn in
                         for index in 0..<rows { try conn.execute("INSERT INTO t(a, b) VALUES (?, ?)", index, "row \(index)") }
                     }
                 }),
                 swift: Trial(prepare: clear, body: {
                     try await db.transaction { conn in
                         for index in 0..<rows { try conn.execute(literal: "INSERT INTO t(a, b) VALUES (\(index), \("row \(index)"))") }
                     }
                 }))
        ], runs: options.runs)
        insert.encrypted = CaseFigures(inserts["insert"]!)

        var query = WorkloadResult(
            name: "interpolation.query",
            description: "\(rows) by-key SELECTs in one read; Swift: conn.query(literal: \"… WHERE id = \\(id)\"), "
                + "floor: conn.query(\"… WHERE id = ?\", id)",
            rows: rows, runs: options.runs)
        let queries = try await measurePaired([
            Pair(name: "query",
                 floor: Trial(prepare: {}, body: {
                     let found = try await db.read { conn in
                         var found = 0
                         for id in 1...rows { found += try conn.query("SELECT b FROM t WHERE id = ?", id).count }
                         return found
                     }
                     guard found == rows else { throw BenchError("positional queries found \(found) rows, not \(rows)") }
                 }),
                 swift: Trial(prepare: {}, body: {
                     let found = try await db.read { conn in
                         var found = 0
                         for id in 1...rows { found += try conn.query(literal: "SELECT b FROM t WHERE id = \(id)").count }
                         return found
                     }
                     guard found == rows else { throw BenchError("literal queries found \(found) rows, not \(rows)") }
                 }))
        ], runs: options.runs)
        query.encrypted = CaseFigures(queries["query"]!)
        await db.close()
        return [insert, query]
    }
}
