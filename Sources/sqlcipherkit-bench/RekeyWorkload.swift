import Foundation
import SqlCipherKit

extension Bench {
    /// Changing the key of an open database of `fetchRows` rows (larger than the 8 MiB page cache
    /// in the full run), back and forth between two raw keys so that no key derivation is timed.
    /// The C floor calls `sqlite3_rekey` and nothing else; `Database.rekey(rawKey:)` adds what makes
    /// it safe and stoppable: WAL checkpoints before and after, the exclusive lock, the release of
    /// the page cache so that every page read is watched (`scb_rekey_watched`), and the proof with
    /// a fresh connection. The ratio is the price of all of it.
    func runRekey() async throws -> [WorkloadResult] {
        let rows = options.fetchRows
        let floor = try makeFloorTable(path("rekey-c"), key: .rawKey)
        try floor.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows)
        let db = try await makeSwiftTable(path("rekey-swift"), key: .rawKey)
        try await insertRows(db, count: rows)

        let keys = [BenchKey.rawKeyBytes, Data(BenchKey.rawKeyBytes.reversed())]
        // Formatted before timing: the floor's body is the rekey alone.
        let literals = keys.map(BenchKey.rawKeyLiteral)
        var floorKey = 0
        var swiftKey = 0
        let samples = try await measurePaired([
            Pair(name: "rekey",
                 floor: Trial(body: {
                     floorKey = 1 - floorKey
                     try floor.rekey(literals[floorKey])
                 }),
                 swift: Trial(body: {
                     swiftKey = 1 - swiftKey
                     try await db.rekey(rawKey: keys[swiftKey])
                 })),
        ], runs: options.runs)
        await db.close()
        // The last key must open the file: a rekey that did not happen would not be measured.
        let check = try Database(path: path("rekey-swift"), rawKey: keys[swiftKey])
        let count = try await check.query("SELECT count(*) FROM \(BenchSchema.table)")[0].get(0, as: Int.self)
        await check.close()
        guard count == rows else { throw BenchError("after the rekeys the file holds \(count ?? -1) rows, not \(rows)") }

        var result = WorkloadResult(
            name: "rekey", description: "Database.rekey(rawKey:) of an open database (WAL, \(rows) rows); "
                + "C: sqlite3_rekey alone", rows: rows, runs: options.runs)
        result[.encrypted] = CaseFigures(samples["rekey"]!)
        return [result]
    }
}
