import Foundation
import Testing
@testable import SqlCipherKit

/// A backup killed (SIGKILL) halfway through its copy, in a child process paused inside its
/// progress closure (a handshake: the parent kills it once it says `paused`): the target's name
/// holds nothing, the source opens with its key and holds every row, the hidden partial copy left
/// beside the target holds no plaintext, and the next backup to the same target succeeds and
/// removes it; a running backup's hidden file, in another process, is never taken for a dead one's.
@Suite struct KilledBackupTests {
    @Test(arguments: ["database", "pool"])
    func aBackupKilledHalfwayLeavesNoTargetAndAWholeSource(kind: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db"), target = dir.path("backup.db")
        let source = try Database(path: path, rawKey: rawKey())
        try await source.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
        try await source.execute("""
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 400)
            INSERT INTO t SELECT i, 'KILLED-BACKUP-MARKER ' || hex(randomblob(400)) FROM c
            """)
        await source.close()

        let child = try KillableChild(helperArguments: ["backup-pause", path, kind, "raw:" + hex(rawKey()), target])
        let paused = child.waitForLine(startingWith: "paused", timeout: 120)
        #expect(paused != nil, "the child never paused: \(child.lines)")
        #expect(child.killAndCollect(), "the child was killed, not finished")

        #expect(!FileManager.default.fileExists(atPath: target), "no partial copy under the target's name")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".backup.db.backup-") }
        #expect(!leftovers.isEmpty, "the killed backup's hidden file stays (documented)")
        #expect(filesContain(leftovers.map { dir.path($0) }, "KILLED-BACKUP-MARKER").isEmpty)
        #expect(leftovers.allSatisfy { FileHeader(path: dir.path($0))?.hasPlaintextMagic != true })

        let reopened = try Database(path: path, rawKey: rawKey())
        #expect(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 400)
        #expect(try await reopened.verifyIntegrity().isOK)
        try await reopened.backup(to: target, key: .rawKey(rawKey()))
        await reopened.close()
        // The next backup to the target removed the dead one's hidden file (it used to stay for good).
        let after = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".backup.db.backup-") }
        #expect(after.isEmpty, "left: \(after)")
        let copy = try Database(path: target, rawKey: rawKey(), readOnly: true)
        #expect(try await copy.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 400)
        await copy.close()
    }

    /// A backup to the same target while another process's backup to it is under way (paused in
    /// its progress closure, alive): the running one's hidden file holds its `flock`, so the
    /// clean-up of dead copies leaves it, and the second backup makes a copy of its own.
    @Test func aRunningBackupsHiddenFileIsNotTakenForADeadOnes() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db"), target = dir.path("backup.db")
        let source = try await makeSource(path)
        await source.close()
        let child = try KillableChild(helperArguments: ["backup-pause", path, "database", "raw:" + hex(rawKey()), target])
        #expect(child.waitForLine(startingWith: "paused", timeout: 120) != nil, "the child never paused: \(child.lines)")
        let hidden = {
            try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
                .filter { $0.hasPrefix(".backup.db.backup-") && !$0.hasSuffix("-journal") }
        }
        let running = try hidden()
        #expect(running.count == 1)

        let db = try Database(path: path, rawKey: rawKey())
        try await db.backup(to: target, key: .rawKey(rawKey()))
        await db.close()
        #expect(try hidden() == running, "the running backup's hidden file was removed")
        #expect(child.killAndCollect())
        let copy = try Database(path: target, rawKey: rawKey(), readOnly: true)
        #expect(try await copy.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 200)
        await copy.close()
    }

    /// The hidden files beside `target` (a backup's `.<name>.backup-<UUID>` and its `-journal`).
    /// A source of 200 rows of about 800 bytes under `rawKey()`, left open.
    private func makeSource(_ path: String) async throws -> Database {
        let source = try Database(path: path, rawKey: rawKey())
        try await source.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
        try await source.execute("""
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200)
            INSERT INTO t SELECT i, hex(randomblob(400)) FROM c
            """)
        return source
    }

    private func hiddenFiles(_ dir: TemporaryDirectory, of target: String) throws -> [String] {
        let prefix = "." + (target as NSString).lastPathComponent + ".backup-"
        return try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(prefix) }
    }

    /// SIGKILL at seeded random moments of a backup (copy, verification, publication) from a
    /// `Database` or a `DatabasePool`: the target is absent or a whole copy, never partial; the
    /// next backup to the same name succeeds when it is absent, is refused with `cannotOpen` when
    /// it exists, and either way removes the dead one's hidden file.
    @Test(arguments: ["database", "pool"])
    func aBackupKilledAtRandomMomentsLeavesNoTargetOrAWholeOne(kind: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db"), key = "raw:" + hex(rawKey())
        let source = try Database(path: path, rawKey: rawKey())
        try await source.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
        try await source.execute("""
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000)
            INSERT INTO t SELECT i, 'KILLED-BACKUP-MARKER ' || printf('%0400d', i) FROM c
            """)
        await source.close()
        let duration = try helperRunDuration(["backup-run", path, kind, key, dir.path("timing.db")])
        let scenario = "SIGKILL during backup(to:) (\(kind))"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        var outcomes: [String: Int] = [:]
        // Up to 1.5 times the work: some kills must come at its end (the verification, the rename
        // that publishes the copy) or after it; past the planned rounds, more until one kill has
        // left no target (all eight landed after the work once, in a full run).
        var rounds = KillRounds(planned: Reliability.count(short: 8, long: 60), duration: duration, reach: 1.5)
        while let span = rounds.next(landed: outcomes["absent", default: 0] > 0) {
            let round = rounds.round
            let target = dir.path("backup\(round).db")
            let delay = Double.random(in: span, using: &random)
            let label = "round \(round), delay \(delay)"
            let (lines, killed) = try KillableChild.killed(["backup-run", path, kind, key, target], after: delay)
            record.rounds += 1
            if killed { record.faults += 1 }
            let hidden = try hiddenFiles(dir, of: target)
            #expect(filesContain(hidden.map { dir.path($0) } + [target], "KILLED-BACKUP-MARKER").isEmpty, "\(label)")
            let db = try Database(path: path, rawKey: rawKey())
            if FileManager.default.fileExists(atPath: target) {
                outcomes["whole", default: 0] += 1
                let copy = try Database(path: target, rawKey: rawKey(), readOnly: true)
                #expect(try await countRows(copy) == 2000, "\(label)")
                #expect(try await copy.verifyIntegrity().isOK, "\(label)")
                await copy.close()
                // An existing target is refused, with what to do, and the dead one's file goes.
                let error = await #expect(throws: SqlCipherError.self) {
                    try await db.backup(to: target, key: .rawKey(rawKey()))
                }
                guard case .cannotOpen? = error else { Issue.record("\(label): \(String(describing: error))"); continue }
            } else {
                outcomes["absent", default: 0] += 1
                #expect(!lines.contains("done"), "\(label): reported done, but there is no target")
                try await db.backup(to: target, key: .rawKey(rawKey()))
            }
            await db.close()
            let left = try hiddenFiles(dir, of: target)
            #expect(left.isEmpty, "\(label): left \(left)")
        }
        record.notes = "one run takes \(Int(duration * 1000)) ms; target "
            + outcomes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
            + "; every leftover removed by the next call"
        record.record()
        #expect(outcomes["absent", default: 0] > 0, "no kill landed during the backup: \(outcomes)")
    }

    /// A backup killed halfway into a name that another backup then fills: the target exists, so
    /// the next backup to it is refused (as documented), and that refused call still removes the
    /// dead backup's hidden file, instead of leaving it beside the target for as long as the
    /// target exists.
    @Test func aDeadBackupsHiddenFileGoesEvenWhenItsTargetExists() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db"), target = dir.path("backup.db")
        let source = try await makeSource(path)
        let child = try KillableChild(helperArguments: ["backup-pause", path, "database", "raw:" + hex(rawKey()), target])
        #expect(child.waitForLine(startingWith: "paused", timeout: 120) != nil, "the child never paused: \(child.lines)")
        try await source.backup(to: target, key: .rawKey(rawKey()))
        #expect(child.killAndCollect())
        #expect(try hiddenFiles(dir, of: target).count >= 1, "the killed backup's hidden file")
        let error = await #expect(throws: SqlCipherError.self) { try await source.backup(to: target, key: .rawKey(rawKey())) }
        guard case .cannotOpen? = error else { Issue.record("\(String(describing: error))"); return }
        let left = try hiddenFiles(dir, of: target)
        #expect(left.isEmpty, "left \(left)")
        await source.close()
        let copy = try Database(path: target, rawKey: rawKey(), readOnly: true)
        #expect(try await countRows(copy) == 200)
        await copy.close()
    }

    /// A copy killed while a connection had it open in WAL mode (as the verification of a backup
    /// of a WAL database does) leaves its `-wal` and `-shm` beside it: the next backup to the same
    /// target removes them with the dead file, instead of only the file and its `-journal`, which
    /// left the other two for good. The dead copy is made by a child that holds the hidden file
    /// open in WAL mode (`hold-lock ... read`) and is killed there.
    @Test func aDeadCopysWALFilesGoWithIt() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db"), target = dir.path("backup.db")
        let dead = dir.path(".backup.db.backup-" + UUID().uuidString)
        let copy = try Database(path: dead, rawKey: rawKey(), journalMode: .wal)
        try await copy.execute("CREATE TABLE t(x)")
        await copy.close()
        let child = try KillableChild(helperArguments: ["hold-lock", dead, "raw:" + hex(rawKey()), "read"])
        #expect(child.waitForLine(startingWith: "held", timeout: 60) != nil, "\(child.lines)")
        #expect(child.killAndCollect())
        #expect(try hiddenFiles(dir, of: target).sorted() == [dead, dead + "-shm", dead + "-wal"].map {
            ($0 as NSString).lastPathComponent
        })

        let source = try Database(path: path, rawKey: rawKey())
        try await source.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        try await source.backup(to: target, key: .rawKey(rawKey()))
        await source.close()
        let left = try hiddenFiles(dir, of: target)
        #expect(left.isEmpty, "left \(left)")
    }
}
