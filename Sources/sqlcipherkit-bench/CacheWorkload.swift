import Foundation
import SqlCipherKit

extension Bench {
    /// The page cache: the same fetch, encrypted and plaintext, with SQLite's own default cache
    /// (2 MiB) and with the package's default, over a table whose file fits the package's default.
    ///
    /// SQLCipher decrypts a page each time SQLite reads it from the file; a page found in SQLite's
    /// cache costs nothing. So a working set larger than the cache is decrypted again at every
    /// pass, and one that fits is decrypted once. Each pass is timed after an untimed one that
    /// fills the cache, as a program's repeated queries would find it.
    func runCache() async throws -> [WorkloadResult] {
        let rows = options.cacheRows
        let packageDefault = -Database.defaultPageCacheKiB
        let settings: [(name: String, cacheSize: Int?, description: String)] = [
            ("cache.sqliteDefault", -2000,
             "every row of a \(rows)-row table through a cursor, values by index, with PRAGMA cache_size = -2000 "
                + "(SQLite's default, 2 MiB; the file does not fit); extra: encrypted / unencrypted"),
            ("cache.packageDefault", nil,
             "the same with the cache every connection gets (\(Database.defaultPageCacheKiB / 1024) MiB; the file fits); "
                + "extra: encrypted / unencrypted"),
        ]
        var results = settings.map { WorkloadResult(name: $0.name, description: $0.description, rows: rows, runs: options.runs) }
        var files: [Encryption: Database] = [:]
        for encryption in Encryption.allCases {
            let db = try await makeSwiftTable(path("cache-\(encryption)"), key: encryption.key)
            try await insertRows(db, count: rows)
            files[encryption] = db
        }
        let expected = FetchTotals(rows: rows, checksum: BenchSchema.expectedChecksum(rows: rows))
        for (index, setting) in settings.enumerated() {
            func pass(_ encryption: Encryption) -> Trial {
                let db = files[encryption]!
                return Trial(prepare: {
                    try await db.execute("PRAGMA cache_size = \(setting.cacheSize ?? packageDefault)")
                    _ = try await cursorByIndex(db)  // fills the cache as far as it goes
                }, body: {
                    let totals = try await cursorByIndex(db)
                    guard totals == expected else { throw BenchError("the cache pass read \(totals), expected \(expected)") }
                })
            }
            // The plaintext pass is the encrypted pass's "floor": both run back to back each round.
            let samples = try await measurePaired([
                Pair(name: "pair", floor: pass(.unencrypted), swift: pass(.encrypted)),
            ], runs: options.runs)
            let paired = samples["pair"]!
            results[index].encrypted = CaseFigures(PairedSamples(swift: paired.swift))
            results[index].unencrypted = CaseFigures(PairedSamples(swift: paired.floor!))
            results[index].extra["encryptedOverUnencrypted"] = median(paired.ratios).rounded(places: 3)
            results[index].extra["encryptedOverUnencryptedMin"] = (paired.ratios.min() ?? 0).rounded(places: 3)
            results[index].extra["encryptedOverUnencryptedMax"] = (paired.ratios.max() ?? 0).rounded(places: 3)
        }
        for (encryption, db) in files {
            _ = try await db.query("PRAGMA wal_checkpoint(TRUNCATE)")
            let size = (try? FileManager.default.attributesOfItem(atPath: db.path)[.size] as? Int) ?? 0
            for index in results.indices {
                results[index].extra["\(encryption.rawValue).fileMiB"] = (Double(size) / 1_048_576).rounded(places: 1)
            }
            await db.close()
        }
        return results
    }
}
