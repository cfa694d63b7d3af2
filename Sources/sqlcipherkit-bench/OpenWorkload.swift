import SqlCipherKit

extension Bench {
    /// Opening an existing database: with a passphrase (SQLCipher's default key derivation), with a
    /// raw key, and unencrypted. Timed up to a usable connection (the first read, where SQLCipher
    /// derives and checks the key); closing is not timed.
    func runOpen() async throws -> [WorkloadResult] {
        let kinds: [(name: String, key: BenchKey, runs: Int, description: String)] = [
            ("open.passphrase", .passphrase, options.passphraseRuns,
             "Database(path:key:) of an existing file, default KDF (PBKDF2); C: open_v2, sqlite3_key, one read"),
            ("open.rawKey", .rawKey, options.openRuns,
             "Database(path:rawKey:) of an existing file (no KDF); C: open_v2, sqlite3_key(x'...'), one read"),
            ("open.unencrypted", .none, options.openRuns,
             "Database(unencryptedPath:) of an existing file; C: open_v2, one read"),
        ]
        var results: [WorkloadResult] = []
        for kind in kinds {
            let file = path("open-\(kind.name)")
            let created = try await makeSwiftTable(file, key: kind.key)
            try await insertRows(created, count: 100)
            await created.close()

            // Kept open past the timed body, so that closing is not timed.
            var opened: [FloorConnection] = []
            var db: Database?
            let samples = try await measurePaired([
                Pair(name: kind.name,
                     floor: Trial(body: { opened.append(try FloorConnection(path: file, key: kind.key)) },
                                  settle: { opened.removeAll() }),
                     swift: Trial(body: { db = try kind.key.openDatabase(file) }, settle: {
                         await db?.close()
                         db = nil
                     })),
            ], runs: kind.runs)
            var result = WorkloadResult(name: kind.name, description: kind.description, rows: nil, runs: kind.runs)
            result[kind.key == .none ? .unencrypted : .encrypted] = CaseFigures(samples[kind.name]!)
            results.append(result)
        }
        return results
    }
}
