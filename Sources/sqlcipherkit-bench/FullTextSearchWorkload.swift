import Foundation
import SqlCipherKit

extension Bench {
    /// Full-text search: FTS5 `MATCH` queries ranked by `bm25`, through the query builder, on an
    /// encrypted database and on a plaintext one holding the same documents. The plaintext run is
    /// the encrypted run's floor, timed back to back each round, so the ratio is what encryption
    /// costs a search (pages decrypted as the index is read). Each pass runs after an untimed one
    /// that fills the page cache, as a program's repeated searches find it.
    ///
    /// On a library without FTS5 (SQLCipher 3.4.1) the family reports nothing.
    func runFullTextSearch() async throws -> [WorkloadResult] {
        guard library.capabilities.features.contains(.fts5) else { return [] }
        let documents = options.quick ? 5_000 : options.ftsDocuments
        let queries = 50
        var result = WorkloadResult(
            name: "fts.match",
            description: "\(queries) FTS5 searches (two words each, matchingAllTokensIn, ORDER BY bm25 LIMIT 10, "
                + "through Select) over \(documents) documents of 12 words; extra: encrypted / unencrypted",
            rows: documents, runs: options.runs)
        let index = TableName("docs_fts")
        let word = FullTextSearchBenchSchema.word
        var files: [Encryption: Database] = [:]
        for encryption in Encryption.allCases {
            let db = encryption == .encrypted
                ? try Database(path: path("fts-encrypted"), rawKey: BenchKey.rawKeyBytes)
                : try Database(unencryptedPath: path("fts-unencrypted"))
            try await db.migrate([FullTextSearchBenchSchema()])
            try await db.transaction { conn in
                var state: UInt64 = 0x9E37_79B9_7F4A_7C15
                for _ in 0..<documents {
                    var words: [String] = []
                    for _ in 0..<12 {
                        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        // Skewed towards small numbers, as word frequencies are.
                        let draw = (state >> 33) % 4000
                        words.append(FullTextSearchBenchSchema.word(draw * draw / 4000))
                    }
                    try conn.execute("INSERT INTO docs_fts(body) VALUES (?)", words.joined(separator: " "))
                }
            }
            try await db.execute(FTS5Command.optimize(index))
            files[encryption] = db
        }
        var patterns: [FTS5Pattern] = []
        for number in 0..<UInt64(queries) {
            let words: String = word(number * 7 % 60) + " " + word(number * 13 % 200 + 3)
            if let pattern = FTS5Pattern(matchingAllTokensIn: words) { patterns.append(pattern) }
        }
        let search = Param<FTS5Pattern>("search")
        let template = Select(col("rowid")).from(index).where(index.match(search)).orderBy(index.bm25()).limit(10)
        func pass(_ db: Database) async throws -> Int {
            var found = 0
            for pattern in patterns { found += try await db.query(template, search.set(pattern)).count }
            return found
        }
        let expected = try await pass(files[.unencrypted]!)
        guard try await pass(files[.encrypted]!) == expected, expected > 0 else {
            throw BenchError("the encrypted and plaintext searches found different rows (or none)")
        }
        func trial(_ encryption: Encryption) -> Trial {
            let db = files[encryption]!
            return Trial(prepare: { _ = try await pass(db) }, body: {
                let found = try await pass(db)
                guard found == expected else { throw BenchError("a search pass found \(found) rows, not \(expected)") }
            })
        }
        let samples = try await measurePaired([
            Pair(name: "pair", floor: trial(.unencrypted), swift: trial(.encrypted)),
        ], runs: options.runs)
        let paired = samples["pair"]!
        result.encrypted = CaseFigures(PairedSamples(swift: paired.swift))
        result.unencrypted = CaseFigures(PairedSamples(swift: paired.floor!))
        result.extra["encryptedOverUnencrypted"] = median(paired.ratios).rounded(places: 3)
        result.extra["encrypted.msPerQuery"] = (paired.swift.medianMilliseconds / Double(patterns.count)).rounded(places: 3)
        if let floor = paired.floor {
            result.extra["unencrypted.msPerQuery"] = (floor.medianMilliseconds / Double(patterns.count)).rounded(places: 3)
        }
        for db in files.values { await db.close() }
        return [result]
    }
}

/// The bench's FTS5 table, made by the package's own schema statement.
struct FullTextSearchBenchSchema: Migration {
    let id = "fts-bench"

    func up(_ ctx: MigrationContext) throws {
        try ctx.execute(CreateFTS5Table(TableName("docs_fts")).column("body"))
    }

    /// Word number `number`: "w" and the number in base 26 written with letters. A deterministic
    /// generator picks the numbers, so both files hold the same documents.
    @Sendable static func word(_ number: UInt64) -> String {
        var digits = ""
        var value = number
        repeat {
            digits.append(Character(Unicode.Scalar(UInt8(97 + value % 26))))
            value /= 26
        } while value > 0
        return "w" + digits
    }
}
