import Foundation
import SqlCipherKit
import Testing

/// SIGKILL during `rekey` and during `encryptInPlace`, at seeded random moments, through the
/// Database helper commands (`rekey-loop`, `encrypt-in-place`). After every kill the file must
/// open with exactly one key (or, for encryptInPlace, as the untouched plaintext), hold every
/// row, and pass the integrity checks. (Tests/SqlCipherKitTests/Database/CrashTests.swift runs a
/// fixed 8 rounds of each; this suite adds the seeded, recorded, longer version.)
@Suite struct KeyChangeCrashTests {
    static let rows = 2000

    static func fill(_ db: Database) async throws {
        try await db.transaction { conn in
            try conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            for id in 1...rows {
                try conn.execute("INSERT INTO t(id, body) VALUES (?, ?)", id, "row \(id) " + String(repeating: "k", count: 250))
            }
        }
    }

    static func checkContent(_ db: Database) async throws {
        let row = try await db.query("SELECT count(*) AS n, sum(length(body)) AS bytes, sum(id) AS ids FROM t")[0]
        let bytes = (1...rows).reduce(0) { $0 + "row \($1) ".utf8.count + 250 }
        guard row.get("n", as: Int.self) == rows, row.get("bytes", as: Int.self) == bytes,
              row.get("ids", as: Int.self) == rows * (rows + 1) / 2 else {
            throw ReliabilityViolation("content changed: \(row)")
        }
        let problems = try await integrityProblems(db)
        guard problems.isEmpty else { throw ReliabilityViolation("integrity: \(problems)") }
    }

    @Test(arguments: JournalMode.allCases)
    func killDuringRekey(_ mode: JournalMode) async throws {
        let scenario = "SIGKILL during rekey (\(mode.rawValue))"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        var tally = Tally()
        let dir = TemporaryDirectory()
        let path = dir.path("rekey.db")
        let keys = [rawKey(51), rawKey(52)]
        let db = try Database(path: path, rawKey: keys[0], journalMode: mode)
        try await Self.fill(db)
        await db.close()

        for round in 1...Reliability.count(short: 6, long: 120) {
            let child = try KillableChild(helperArguments: [
                "rekey-loop", path, "raw:" + hex(keys[0]), "raw:" + hex(keys[1]), "100000"])
            guard child.waitForLine(startingWith: "opened") != nil else {
                child.killAndCollect()
                Issue.record("round \(round): the helper did not open the file: \(child.standardError)")
                record.failures += 1
                break
            }
            // A kill moment left to chance (the test's point): every moment must leave a file that opens intact.
            usleep(UInt32(Int.random(in: 0...400, using: &random) * 1000))
            child.killAndCollect()
            record.faults += 1
            let rekeys = child.lines.filter { $0.hasPrefix("key ") }.count
            record.inputs += rekeys
            do {
                let opens = keys.compactMap { try? Database(path: path, rawKey: $0) }
                guard opens.count == 1, let opened = opens.first else {
                    throw ReliabilityViolation("\(opens.count) of the two keys open the file after \(rekeys) rekeys")
                }
                try await Self.checkContent(opened)
                // The helper starts from the first key: put it back.
                if (try? Database(path: path, rawKey: keys[0])) == nil {
                    try await opened.rekey(rawKey: keys[0])
                    tally.add("killed with the second key current")
                } else {
                    tally.add("killed with the first key current")
                }
                await opened.close()
                record.rounds += 1
            } catch {
                Issue.record("round \(round) (\(rekeys) rekeys reported): \(error)")
                record.failures += 1
                break
            }
        }
        record.notes = tally.summary + (record.inputs > 0 ? ", rekeys completed before the kills: \(record.inputs)" : "")
        record.record()
    }

    @Test(arguments: JournalMode.allCases)
    func killDuringEncryptInPlace(_ mode: JournalMode) async throws {
        let scenario = "SIGKILL during encryptInPlace (\(mode.rawValue))"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        var tally = Tally()
        let key = rawKey(53)
        // One uninterrupted run, to spread the kill moments over its length.
        let timingDir = TemporaryDirectory()
        let timingSource = try Database(unencryptedPath: timingDir.path("timing.db"), journalMode: mode)
        try await Self.fill(timingSource)
        await timingSource.close()
        let timing = try KillableChild(helperArguments: ["encrypt-in-place", timingDir.path("timing.db"), "raw:" + hex(key)])
        _ = timing.waitForLine(startingWith: "start")
        let started = Date()
        _ = timing.waitForLine(startingWith: "done")
        let duration = max(0.005, Date().timeIntervalSince(started))
        _ = timing.waitForExit()
        for round in 1...Reliability.count(short: 8, long: 160) {
            let dir = TemporaryDirectory()
            let path = dir.path("plain.db")
            let source = try Database(unencryptedPath: path, journalMode: mode)
            try await Self.fill(source)
            await source.close()
            let child = try KillableChild(helperArguments: ["encrypt-in-place", path, "raw:" + hex(key)])
            guard child.waitForLine(startingWith: "start") != nil else {
                child.killAndCollect()
                Issue.record("round \(round): the helper did not start: \(child.standardError)")
                record.failures += 1
                break
            }
            // A kill moment left to chance (the test's point): every moment must leave a file that opens intact.
            usleep(UInt32(Double.random(in: 0...(duration * 1.2), using: &random) * 1_000_000))
            child.killAndCollect()
            record.faults += 1
            record.rounds += 1
            let reportedDone = child.lines.contains("done")
            do {
                let db: Database
                if let plain = try? Database(unencryptedPath: path) {
                    guard !reportedDone else { throw ReliabilityViolation("reported done but the file is plaintext") }
                    db = plain
                    tally.add("still plaintext")
                } else {
                    db = try Database(path: path, rawKey: key)
                    tally.add(reportedDone ? "encrypted, reported done" : "encrypted, killed before reporting")
                    let bytes = FileManager.default.contents(atPath: path) ?? Data()
                    if bytes.range(of: Data("kkkkkkkkkkkkkkkk".utf8)) != nil {
                        throw ReliabilityViolation("the encrypted file holds plaintext rows")
                    }
                }
                try await Self.checkContent(db)
                let wasEncrypted = db.isEncrypted
                await db.close()
                let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: dir.url.path)) ?? [])
                    .filter { $0.contains("sqlcipherkit-encrypting") }
                if !leftovers.isEmpty { tally.add("a leftover .sqlcipherkit-encrypting file (removed by the next call)") }
                for leftover in leftovers {
                    let bytes = FileManager.default.contents(atPath: dir.path(leftover)) ?? Data()
                    if bytes.range(of: Data("kkkkkkkkkkkkkkkk".utf8)) != nil {
                        throw ReliabilityViolation("the leftover \(leftover) holds plaintext rows")
                    }
                }
                if !wasEncrypted {
                    // The next call finishes the job from whatever was left.
                    try Database.encryptInPlace(path: path, key: .rawKey(key))
                    try await Self.checkContent(try Database(path: path, rawKey: key))
                }
            } catch {
                Issue.record("round \(round): \(error)")
                record.failures += 1
            }
        }
        record.notes = String(format: "one run takes %.0f ms; ", duration * 1000) + tally.summary
        record.record()
    }
}
