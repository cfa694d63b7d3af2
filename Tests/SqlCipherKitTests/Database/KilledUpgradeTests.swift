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

    @Test func anUpgradeKilledAtRandomMomentsLeavesTheOldFileOrTheNewOne() async throws {
        let dir = TemporaryDirectory()
        let template = dir.path("template.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version3, template, [
            SqlcipherCLI.keyPragma(passphrase: "legacy"),
            "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)",
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(Self.rows)) "
                + "INSERT INTO t SELECT i, 'UPGRADE-MARKER ' || printf('%0300d', i) FROM c",
            "PRAGMA user_version = 7",
        ])
        let whole3 = "v3 \(Self.rows) ok", whole4 = "v4 \(Self.rows) ok"
        #expect(try state(template) == whole3)
        let original = try #require(FileManager.default.contents(atPath: template))
        let timing = dir.path("timing.db")
        try original.write(to: URL(fileURLWithPath: timing))
        let duration = try helperRunDuration(["upgrade-v3", "run", timing, "pass:legacy"], environment: Self.four)
        #expect(try state(timing) == whole4)

        var random = SeededGenerator(seed: killSeed(0x5EED_0201, "upgradeFromSqlCipher3"))
        var outcomes: [String: Int] = [:]
        var killedWhileRunning = 0
        for round in 0..<8 {
            let name = "round\(round).db", path = dir.path(name)
            try original.write(to: URL(fileURLWithPath: path))
            // Up to 1.3 times a run: the run includes the child's start-up, and some kills must come
            // after the switch to the new file.
            let delay = Double.random(in: 0...(duration * 1.3), using: &random)
            let label = "round \(round), delay \(delay)"
            let (lines, killed) = try KillableChild.killed(["upgrade-v3", "run", path, "pass:legacy"], after: delay,
                                                           environment: Self.four)
            if killed { killedWhileRunning += 1 }
            let found = try state(path)
            #expect(found == whole3 || found == whole4, "\(label): \(found)")
            if lines.contains("done") { #expect(found == whole4, "\(label): reported done") }
            if found == whole3 {
                // Still the original: its bytes (a kill can have moved nothing into it yet).
                #expect(FileManager.default.contents(atPath: path) == original, "\(label): the original changed")
            }
            outcomes[String(found.prefix(2)), default: 0] += 1
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
        print("upgradeFromSqlCipher3: outcomes \(outcomes), \(killedWhileRunning) kills before the end")
        #expect(killedWhileRunning > 0, "outcomes \(outcomes)")
    }
}
