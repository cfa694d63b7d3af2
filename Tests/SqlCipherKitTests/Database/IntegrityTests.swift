import Foundation
import SqlCipherKit
import Testing

/// `verifyIntegrity`: what runs on each version, and damage found.
@Suite struct IntegrityTests {
    static var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")
    }

    @Test(arguments: [JournalMode.wal, .rollback])
    func cleanDatabase(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"), rawKey: rawKey(), journalMode: mode)
        try await fill(db, rows: 100)
        let report = try await db.verifyIntegrity()
        #expect(report.isOK)
        #expect(report.problems.isEmpty)
        #expect(report.checksRun.contains(.sqliteIntegrity))
        if isSQLCipher4() {
            #expect(report.checksRun == [.cipherHMAC, .sqliteIntegrity])
            #expect(report.hmacVerified)
            #expect(report.skipped.isEmpty)
        } else {
            // 3.4.1 has no HMAC check: it says so and never claims it.
            #expect(report.checksRun == [.sqliteIntegrity])
            #expect(!report.hmacVerified)
            let skipped = try #require(report.skipped.first)
            #expect(skipped.check == .cipherHMAC)
            #expect(skipped.reason.contains("4.2"))
        }
    }

    @Test func unencryptedDatabaseSkipsTheHMACCheck() async throws {
        let db = try Database(unencryptedPath: ":memory:")
        try await db.execute("CREATE TABLE t(x)")
        let report = try await db.verifyIntegrity()
        #expect(report.isOK)
        #expect(report.checksRun == [.sqliteIntegrity])
        #expect(report.skipped.map(\.check) == [.cipherHMAC])
    }

    @Test func damagedMiddlePageIsReported() async throws {
        let name = isSQLCipher4() ? "sqlcipher4-default-damaged-middle.db" : "sqlcipher3-default-damaged-middle.db"
        let dir = TemporaryDirectory()
        let path = dir.path("damaged.db")
        try FileManager.default.copyItem(atPath: Self.fixtures.appendingPathComponent(name).path, toPath: path)
        let key = isSQLCipher4() ? "fixture-passphrase-4" : "fixture-passphrase-3"
        let db = try Database(path: path, key: key, cipher: isSQLCipher4() ? .default : .sqlcipher3)
        let report = try await db.verifyIntegrity()
        #expect(!report.isOK)
        if isSQLCipher4() {
            #expect(report.problems.contains { $0.hasPrefix("cipher_integrity_check") && $0.contains("page 8") }, "\(report.problems)")
            #expect(!report.hmacVerified)
        } else {
            #expect(report.problems.contains { $0.hasPrefix("integrity_check") }, "\(report.problems)")
        }
    }

    @Test func damageWrittenByHandIsFound() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("a.db")
        let db = try Database(path: path, rawKey: rawKey(), journalMode: .rollback)
        try await fill(db, rows: 300, size: 200)
        await db.close()
        // Flip bytes in the middle of the last page.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size - 600)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 8))
        try handle.close()
        let damaged = try Database(path: path, rawKey: rawKey())
        let report = try await damaged.verifyIntegrity()
        #expect(!report.isOK, "\(report)")
    }
}
