import Foundation
import SqlCipherKit

/// The deterministic content of transaction `n` of the crash scenario. The parent test computes
/// the same values (Tests/SqlCipherKitTests/Reliability/CrashSafetyTests.swift) to check every
/// committed row byte for byte.
enum CrashLedger {
    /// The payload of ledger row `n`: from 64 bytes to about 4 KB, and 30 KB every 25th
    /// transaction so that some commits span many pages.
    static func payload(_ n: Int64) -> Data {
        let size = n % 25 == 0 ? 30_000 : 64 + Int(UInt64(n) &* 2_654_435_761 % 4000)
        var state = UInt64(n) &* 0x9e37_79b9_7f4a_7c15 | 1
        var data = Data(count: size)
        for index in 0..<size {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            data[index] = UInt8(truncatingIfNeeded: state >> 56)
        }
        return data
    }

    /// How many `entries` rows transaction `n` inserts (1 to 7).
    static func entryCount(_ n: Int64) -> Int64 { n % 7 + 1 }

    /// The body of entry `k` of transaction `n`.
    static func entryBody(_ n: Int64, _ k: Int64) -> String { "entry \(n)/\(k) " + String(repeating: "x", count: Int((n + k) % 50)) }

    static let schema = """
        CREATE TABLE IF NOT EXISTS ledger(n INTEGER PRIMARY KEY, payload BLOB NOT NULL, size INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS entries(n INTEGER NOT NULL, k INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY(n, k));
        CREATE INDEX IF NOT EXISTS entries_body ON entries(body);
        CREATE TABLE IF NOT EXISTS meta(id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL, total INTEGER NOT NULL);
        INSERT OR IGNORE INTO meta(id, last, total) VALUES (1, 0, 0);
        """
}

/// Commits numbered transactions forever (until killed), printing `committed N` after each commit
/// returns. The parent kills it with SIGKILL at random moments and checks that every reported
/// commit is present and nothing else is half-present. With `none` for the key the file is
/// plaintext, with `v3:RAWKEYHEX` it has SQLCipher 3's settings (the sources of an
/// `encryptInPlace` or `upgradeFromSqlCipher3` that another process runs meanwhile).
///
/// With `gated`, transactions past the 10th wait each for a line on standard input (and the
/// writer exits at its end): the parent decides when the writer commits, so a test can make it
/// commit while another process holds the file, by a handshake instead of by chance.
let crashWriterCommand = HelperCommand(
    name: "crash-writer",
    usage: "crash-writer PATH wal|rollback RAWKEYHEX|v3:RAWKEYHEX|none [vacuum|gated]: commits transactions N = "
        + "meta.last+1, ... until killed (with vacuum: a VACUUM after every 4th, announced by `vacuuming N`; with "
        + "gated: from the 11th on, one transaction per line read from standard input, and an exit at its end)"
) { arguments in
    let option = arguments.count == 4 ? arguments[3] : nil
    guard arguments.count == 3 || option == "vacuum" || option == "gated",
          let mode = JournalMode(rawValue: arguments[1]) else {
        throw HelperUsageError(message: "usage: crash-writer PATH wal|rollback RAWKEYHEX|v3:RAWKEYHEX|none [vacuum|gated]")
    }
    let vacuums = option == "vacuum"
    let gated = option == "gated"
    let path = arguments[0]
    let version3 = arguments[2].hasPrefix("v3:")
    let key = arguments[2] == "none" ? nil : try helperBytes(fromHex: String(arguments[2].dropFirst(version3 ? 3 : 0)))
    let cipher: CipherSettings = version3 ? .sqlcipher3 : .default
    return try runBlocking { () async throws -> Int32 in
        // A reader of the file elsewhere (CopiesBesideAWriterTests copies it in rollback mode) may
        // hold its shared lock for seconds on a loaded machine; the writer waits rather than stop.
        var configuration = DatabaseConfiguration()
        configuration.busyTimeout = .seconds(120)
        let db = try key.map { try Database(path: path, rawKey: $0, journalMode: mode, cipher: cipher, configuration: configuration) }
            ?? Database(unencryptedPath: path, journalMode: mode, configuration: configuration)
        // One transaction: a kill leaves the whole schema or none of it.
        try await db.transaction { conn in try conn.execute(CrashLedger.schema) }
        var n = (try await db.query("SELECT last FROM meta").first?.get("last", as: Int64.self) ?? 0) + 1
        report("ready \(n)")
        while true {
            if gated && n > 10 && readLine() == nil {
                report("input closed")
                return 0
            }
            let current = n
            try await db.transaction { conn in
                let payload = CrashLedger.payload(current)
                try conn.execute("INSERT INTO ledger(n, payload, size) VALUES (?, ?, ?)", current, payload, payload.count)
                for k in 1...CrashLedger.entryCount(current) {
                    try conn.execute("INSERT INTO entries(n, k, body) VALUES (?, ?, ?)", current, k, CrashLedger.entryBody(current, k))
                }
                try conn.execute("UPDATE meta SET last = ?, total = total + ? WHERE id = 1",
                                 current, CrashLedger.entryCount(current))
            }
            report("committed \(current)")
            if vacuums && current % 4 == 0 {
                // Kills also land inside a VACUUM, which rewrites every page of the file.
                report("vacuuming \(current)")
                try await db.execute("VACUUM")
                report("vacuumed \(current)")
            }
            if mode == .wal && current % 16 == 0 {
                // Kills also land inside checkpoints, not only inside commits.
                _ = try await db.query("PRAGMA wal_checkpoint(TRUNCATE)")
                report("checkpointed \(current)")
            }
            n += 1
        }
    }
}
