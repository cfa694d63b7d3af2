import Foundation
import Testing
@testable import SqlCipherKit

/// SIGKILL while a child process runs `upgradeFromSqlCipher3` on a file made by the SQLCipher
/// 3.4.1 CLI, at seeded random moments: the file at the path is the whole SQLCipher 3 original
/// (it opens with SQLCipher 3's settings) or the whole upgraded file (it opens with SQLCipher 4's),
/// never neither, never plaintext; what the kill left does not block the next upgrade, which
/// leaves no work file. The upgrade needs SQLCipher 4, so the children load 4.6.1 whatever the
/// parent loaded; the parent only makes the file and counts the kills.
@Suite(.serialized) struct KilledUpgradeTests {
    static let four = ["SQLCIPHERKIT_LIBRARY": "/usr/lib/x86_64-linux-gnu/libsqlcipher.so.1"]
    static let rows = 3000

    /// What the file at `path` is, as `upgrade-v3 check` says it under SQLCipher 4.6.1.
    func state(_ path: String) throws -> String {
        let result = try runHelper(["upgrade-v3", "check", path, "pass:legacy"], environment: Self.four)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The work files a conversion of `path` may leave beside it.
    func workFiles(_ dir: TemporaryDirectory, of name: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
            .filter { $0.hasPrefix(name + ".sqlcipherkit-upgrading") }
    }

    /// A WAL original is moved out of WAL mode before its copy (so that the file alone is
    /// complete): a kill after that leaves it in rollback mode, whole, which is all it promises.
    @Test(arguments: ["delete", "wal"])
    func anUpgradeKilledAtRandomMomentsLeavesTheOldFileOrTheNewOne(journal: String) async throws {
        let dir = TemporaryDirectory()
        let template = dir.path("template.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version3, template, [
            SqlcipherCLI.keyPragma(passphrase: "legacy"),
            "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)",
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(Self.rows)) "
                + "INSERT INTO t SELECT i, 'UPGRADE-MARKER ' || printf('%0300d', i) FROM c",
            "PRAGMA user_version = 7",
            "PRAGMA journal_mode = \(journal)",
        ])
        let whole3 = "v3 \(Self.rows) ok", whole4 = "v4 \(Self.rows) ok"
        #expect(try state(template) == whole3)
        let original = try #require(FileManager.default.contents(atPath: template))
        let timing = dir.path("timing.db")
        try original.write(to: URL(fileURLWithPath: timing))
        let duration = try helperRunDuration(["upgrade-v3", "run", timing, "pass:legacy"], environment: Self.four)
        #expect(try state(timing) == whole4)

        let scenario = "SIGKILL during upgradeFromSqlCipher3 (\(journal))"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        var tally = Tally()
        var outcomes: [String: Int] = [:]
        var killedWhileRunning = 0
        // Up to 1.3 times a run, so that some kills come after the switch to the new file; past the
        // planned rounds, more until one kill has landed while the upgrade ran (three rounds all
        // missed it now and then).
        var rounds = KillRounds(planned: Reliability.count(short: 3, long: 60), duration: duration, reach: 1.3)
        while let span = rounds.next(landed: killedWhileRunning > 0) {
            let round = rounds.round
            let name = "round\(round).db", path = dir.path(name)
            try original.write(to: URL(fileURLWithPath: path))
            let delay = Double.random(in: span, using: &random)
            let label = "round \(round), delay \(delay)"
            let (lines, killed) = try KillableChild.killed(["upgrade-v3", "run", path, "pass:legacy"], after: delay,
                                                           environment: Self.four)
            if killed { killedWhileRunning += 1 }
            let found = try state(path)
            #expect(found == whole3 || found == whole4, "\(label): \(found)")
            if lines.contains("done") { #expect(found == whole4, "\(label): reported done") }
            if found == whole3 && journal == "delete" {
                // Still the original: its bytes (a kill can have moved nothing into it yet).
                #expect(FileManager.default.contents(atPath: path) == original, "\(label): the original changed")
            }
            outcomes[String(found.prefix(2)), default: 0] += 1
            record.rounds += 1
            if killed { record.faults += 1 }
            if found != whole3 && found != whole4 { record.failures += 1 }
            tally.add(found == whole3 ? "the SQLCipher 3 original, whole" : found == whole4 ? "upgraded, whole" : "neither")
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(name) }
            #expect(filesContain(names.map { dir.path($0) }, "UPGRADE-MARKER").isEmpty, "\(label): plaintext in \(names)")
            // The next upgrade is not blocked by what the kill left, and leaves no work file.
            if found == whole3 {
                let rerun = try runHelper(["upgrade-v3", "run", path, "pass:legacy"], environment: Self.four)
                #expect(rerun.status == 0, "\(label): \(rerun.stdout) \(rerun.stderr)")
                #expect(try state(path) == whole4, "\(label)")
            }
            let left = try workFiles(dir, of: name)
            #expect(left.isEmpty, "\(label): \(left)")
        }
        record.notes = "one run takes \(Int(duration * 1000)) ms; " + tally.summary
        record.record()
        #expect(killedWhileRunning > 0, "outcomes \(outcomes)")
    }

    /// SIGKILL inside `PRAGMA cipher_migrate` itself, which writes the upgraded pages to a file of
    /// its own, `<copy>-migrated`, with a journal of its own: the parent kills the child once that
    /// file holds a megabyte (watched for, not timed). The original stays whole, and the next
    /// upgrade succeeds and leaves no work file. Before, the dead file and its journal stayed,
    /// and the next upgrade failed with "cipher_migrate reported 26 ... only files made with
    /// SQLCipher 3's default settings can be migrated", which sent the user after the wrong cause.
    @Test func anUpgradeKilledInsideCipherMigrateDoesNotBlockTheNextOne() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("old.db")
        let rows = 20000
        _ = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(passphrase: "legacy"),
            "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)",
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(rows)) "
                + "INSERT INTO t SELECT i, printf('%0300d', i) FROM c",
        ])
        let migrated = path + ".sqlcipherkit-upgrading-migrated"
        let child = try KillableChild(helperArguments: ["upgrade-v3", "run", path, "pass:legacy"], environment: Self.four)
        #expect(child.waitForLine(startingWith: "start", timeout: 60) != nil)
        let deadline = Date().addingTimeInterval(60)
        // Killed once cipher_migrate has written a megabyte of its file (of about seven): the
        // kill lands inside its export, with its journal hot.
        func written() -> Int { ((try? FileManager.default.attributesOfItem(atPath: migrated))?[.size] as? Int) ?? 0 }
        while written() < 1_000_000 && Date() < deadline { usleep(200) }
        #expect(child.killAndCollect(), "the upgrade ended before cipher_migrate was seen: \(child.lines)")
        let left = try workFiles(dir, of: "old.db")
        #expect(left.contains { $0.hasSuffix("-migrated") }, "what the kill left: \(left)")

        #expect(try state(path) == "v3 \(rows) ok")
        let rerun = try runHelper(["upgrade-v3", "run", path, "pass:legacy"], environment: Self.four)
        #expect(rerun.status == 0, "\(rerun.stdout) \(rerun.stderr)")
        #expect(try state(path) == "v4 \(rows) ok")
        let after = try workFiles(dir, of: "old.db")
        #expect(after.isEmpty, "\(after)")
    }
}
