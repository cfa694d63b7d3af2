import Foundation
import SqlCipherKit
import Testing

/// A named pipe, socket or device where a database file or one of its companions belongs is refused
/// with a typed error, quickly: SQLite would block forever reading a pipe (a hot-journal check opens
/// `-journal` read-only, which waits for a writer), so every opener looks before SQLite does.
/// Each child runs under `timeout`, so a hang fails the test instead of stalling the run.
@Suite struct SpecialFileTests {
    static let hexKey = String(repeating: "ab", count: 32)

    /// Runs the helper's `open-database` with a 20-second limit; a killed child means it hung.
    private static func openInChild(_ arguments: [String]) throws -> ChildResult {
        try runChild("/usr/bin/timeout", ["-s", "KILL", "20", productPath("sqlcipherkit-test-helper"), "open-database"]
            + arguments)
    }

    private static func makeDatabase(_ path: String) async throws {
        let db = try Database(path: path, rawKey: Data(repeating: 0xAB, count: 32))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (1)")
        await db.close()
    }

    @Test(arguments: ["-journal", "-wal", "-shm"])
    func aPipeAsACompanionOfAnExistingDatabaseIsRefused(suffix: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db")
        try await Self.makeDatabase(path)
        #expect(mkfifo(path + suffix, 0o600) == 0)
        let result = try Self.openInChild([path, "raw:\(Self.hexKey)", "INSERT INTO t SELECT x + 1 FROM t"])
        #expect(!result.signaled && result.status == 0, "the opener hung or crashed: \(result.stderr)")
        #expect(result.stdout.contains("error cannotOpen"), "\(result.stdout)")
        #expect(result.stdout.contains("pipe"), "\(result.stdout)")
    }

    @Test(arguments: ["plain", "read-only", "unencrypted"])
    func aPipeAsTheDatabaseIsRefused(kind: String) throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pipe.db")
        #expect(mkfifo(path, 0o600) == 0)
        let arguments: [String]
        switch kind {
        case "read-only": arguments = ["--read-only", path, "raw:\(Self.hexKey)"]
        case "unencrypted": arguments = [path, "none"]
        default: arguments = [path, "raw:\(Self.hexKey)"]
        }
        let result = try Self.openInChild(arguments)
        #expect(!result.signaled && result.status == 0, "the opener hung or crashed: \(result.stderr)")
        #expect(result.stdout.contains("error cannotOpen"), "\(result.stdout)")
    }
}

/// The pool opens through the same checks: a pipe beside the file is refused at once.
@Suite struct PoolSpecialFileTests {
    @Test(arguments: ["", "-journal", "-wal", "-shm"])
    func aPoolRefusesAPipeAsTheDatabaseOrACompanion(suffix: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db")
        if !suffix.isEmpty {
            let db = try Database(path: path, rawKey: rawKey())
            try await db.execute("CREATE TABLE t(x)")
            await db.close()
        }
        #expect(mkfifo(path + suffix, 0o600) == 0)
        #expect {
            _ = try DatabasePool(path: path, rawKey: rawKey())
        } throws: { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains("named pipe")
        }
    }
}
