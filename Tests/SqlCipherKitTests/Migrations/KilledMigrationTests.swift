import Foundation
import Testing
@testable import SqlCipherKit

/// SIGKILL while a child process runs `migrate` (the helper's five crash-test migrations: 18,000
/// rows, a hand-made table rebuild that needs foreign keys off, a column drop, an update of every
/// row) on a `Database` or a `DatabasePool`, at seeded random moments: the file opens, passes
/// `integrity_check` and `foreign_key_check`, and its schema and rows are exactly those of a whole
/// number of migrations (never part of one); `migrate` again applies the rest.
@Suite(.serialized) struct KilledMigrationTests {
    static let key = rawKey(61)

    /// What a whole number of migrations determines: each schema object's SQL, every row of every
    /// table, the applied ids (not their times). Checks integrity and foreign keys on the way.
    func fingerprint(_ path: String, _ round: String,
                     sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let db = try Database(path: path, rawKey: Self.key)
        #expect(try await db.verifyIntegrity().isOK, "\(round)", sourceLocation: sourceLocation)
        #expect(try await db.query("PRAGMA foreign_key_check").isEmpty, "\(round)", sourceLocation: sourceLocation)
        var parts: [String] = []
        let objects = try await db.query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        for object in objects {
            parts.append(object.values.map { "\($0)" }.joined(separator: " "))
            guard object["type"] == .text("table"), case .text(let name)? = object["name"] else { continue }
            if name == "_migrations" {
                parts.append("applied " + (try await db.query(#"SELECT id FROM "_migrations" ORDER BY rowid"#)
                    .map { "\($0[0])" }.joined(separator: ",")))
            } else {
                var hasher = Hasher()
                let rows = try await db.query("SELECT * FROM \"\(name)\" ORDER BY rowid")
                for row in rows { hasher.combine(row.values.map { "\($0)" }) }
                parts.append("\(name): \(rows.count) rows, \(hasher.finalize())")
            }
        }
        await db.close()
        return parts.joined(separator: "\n")
    }

    @Test(arguments: ["database", "pool"])
    func aMigrationRunKilledAtRandomMomentsLeavesWholeMigrations(kind: String) async throws {
        let dir = TemporaryDirectory()
        let key = "raw:" + hex(Self.key)
        // The state after each whole number of migrations, from uninterrupted runs; -1 is a
        // database opened before `migrate` made its `_migrations` table.
        var stages: [String: Int] = [:]
        let unmigrated = try Database(path: dir.path("unmigrated.db"), rawKey: Self.key)
        await unmigrated.close()
        stages[try await fingerprint(dir.path("unmigrated.db"), "unmigrated")] = -1
        for count in 0...5 {
            let path = dir.path("stage\(count).db")
            let run = try runHelper(["migrate-run", path, "database", key, "\(count)"])
            #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
            stages[try await fingerprint(path, "stage \(count)")] = count
        }
        #expect(stages.count == 7, "every stage differs from the others")

        let duration = try helperRunDuration(["migrate-run", dir.path("timing.db"), kind, key])
        let scenario = "SIGKILL during migrate (\(kind))"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        var tally = Tally()
        var reached: [Int] = []
        for round in 0..<Reliability.count(short: 8, long: 60) {
            let path = dir.path("round\(round).db")
            // Aimed at a migration (the child says when each begins), at a random moment of it:
            // a whole run lasts longer or shorter as the machine is busy, a migration's start
            // does not move.
            let target = Int.random(in: 1...5, using: &random)
            let delay = Double.random(in: 0...(duration / 5), using: &random)
            let label = "round \(round), migration \(target), delay \(delay)"
            let (lines, killed) = try KillableChild.killed(["migrate-run", path, kind, key], after: delay,
                                                           mark: "applying 00\(target)")
            let stage = stages[try await fingerprint(path, label)]
            #expect(stage != nil, "\(label): the schema and rows are not those of a whole number of migrations")
            #expect((stage ?? 0) >= target - 1, "\(label): \(String(describing: stage)) migrations, but migration \(target) had begun")
            if !killed { #expect(lines.contains("done") && stage == 5, "\(label): \(lines)") }
            reached.append(stage ?? -2)
            record.rounds += 1
            if killed { record.faults += 1 }
            if stage == nil { record.failures += 1 }
            tally.add(stage.map { $0 < 0 ? "killed before migrate began" : "\($0) of 5 migrations whole" } ?? "not whole")
            // The next `migrate` applies the rest, from whatever the kill left.
            let rerun = try runHelper(["migrate-run", path, kind, key])
            #expect(rerun.status == 0, "\(label): \(rerun.stdout) \(rerun.stderr)")
            #expect(stages[try await fingerprint(path, label)] == 5, "\(label)")
        }
        record.notes = "one run takes \(Int(duration * 1000)) ms; " + tally.summary
        record.record()
        #expect(reached.contains { (0..<5).contains($0) }, "no kill landed inside the migrations: \(reached)")
    }
}
