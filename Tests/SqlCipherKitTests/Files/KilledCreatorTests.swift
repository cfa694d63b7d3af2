import Foundation
import Testing
@testable import SqlCipherKit

/// A process killed (SIGKILL) while it holds the creation lock leaves at most an unfinished new
/// file: the kernel drops its flock, and the next opener takes the lock, finds the file empty (or
/// finished), and creates or opens the database, without a typed error and without waiting for
/// the lock's timeout. Nothing was acknowledged to the dead process, so nothing can be lost.
@Suite(.serialized) struct KilledCreatorTests {
    static let kills = 8

    /// Whether another process holds an exclusive flock on `folder` now.
    private static func folderIsLocked(_ folder: Int32) -> Bool {
        if flock(folder, LOCK_EX | LOCK_NB) == 0 {
            flock(folder, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    @Test(arguments: ["database", "pool"])
    func theNextOpenerRecoversFromACreatorKilledHoldingTheLock(kind: String) async throws {
        var killed = 0, attempts = 0
        while killed < Self.kills && attempts < 40 {
            attempts += 1
            let dir = TemporaryDirectory()
            let path = dir.path("new.db"), barrier = dir.path("barrier")
            try #require(mkfifo(barrier, 0o600) == 0)
            let folder = open(dir.url.path, O_RDONLY | O_DIRECTORY)
            try #require(folder >= 0)
            defer { close(folder) }
            let child = try CreationRaceTests.RaceChild([path, kind, "pass:killed creator", barrier, "a", "3"])
            await child.waitReady()
            let gate = open(barrier, O_RDWR)
            try #require(gate >= 0)
            // Handshake: the child holds the creation lock (its folder is flocked) while the file
            // exists, or it finished without our noticing (then this round does not count).
            var caught = false
            while child.process.isRunning {
                if FileManager.default.fileExists(atPath: path) && Self.folderIsLocked(folder) {
                    kill(child.process.processIdentifier, SIGKILL)
                    caught = true
                    break
                }
            }
            let lines = await child.finish()
            close(gate)
            guard caught, !lines.contains(where: { $0.hasPrefix("opened") }) else { continue }
            killed += 1
            // The next opener: no error, no wait for the dead process, a working database.
            let started = Date()
            let db = try Database(path: path, key: "killed creator")
            #expect(Date().timeIntervalSince(started) < CreationClaim.timeoutSeconds / 2)
            try await db.execute("CREATE TABLE IF NOT EXISTS t(id TEXT PRIMARY KEY)")
            try await db.execute("INSERT INTO t(id) VALUES ('after')")
            await db.close()
            let again = try Database(path: path, key: "killed creator")
            #expect(try await again.query("SELECT id FROM t WHERE id = 'after'").count == 1)
            #expect(try await again.query("PRAGMA integrity_check").first?.get(0, as: String.self) == "ok")
            await again.close()
        }
        #expect(killed >= Self.kills / 2, "only \(killed) of \(attempts) creators were caught holding the lock")
    }
}
