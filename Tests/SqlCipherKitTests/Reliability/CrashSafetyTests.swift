import Foundation
import SqlCipherKit
import Testing

/// Crash safety: a child commits numbered transactions and reports each commit; the parent kills it
/// with SIGKILL at seeded random moments, many rounds on the same file. After every kill, every
/// reported commit must be present, nothing else half-present, and the integrity checks must pass.
@Suite struct CrashSafetyTests {
    @Test(arguments: JournalMode.allCases)
    func killedWriterLosesNothingCommitted(_ mode: JournalMode) async throws {
        let scenario = "SIGKILL during commits (\(mode.rawValue))"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        var tally = Tally()
        let rounds = Reliability.count(short: 25, long: 400)
        let dir = TemporaryDirectory()
        let path = dir.path("crash.db")
        let key = rawKey(42)
        var ledger = CrashLedgerState()

        for round in 1...rounds {
            let child = try KillableChild(helperArguments: ["crash-writer", path, mode.rawValue, hex(key)])
            // One kill in six lands anywhere from the start (opening, creating, recovering); the
            // others after the writer is committing.
            let early = Int.random(in: 0..<6, using: &random) == 0
            if !early {
                guard child.waitForLine(startingWith: "ready") != nil else {
                    child.killAndCollect()
                    Issue.record("round \(round): the writer never became ready: \(child.lines) \(child.standardError)")
                    record.failures += 1
                    break
                }
            }
            let delay = early ? Int.random(in: 0...60, using: &random) : Int.random(in: 0...120, using: &random)
            // A kill moment left to chance (the test's point): every moment must leave a file that opens intact.
            usleep(UInt32(delay * 1000))
            let killed = child.killAndCollect()
            record.faults += 1
            guard killed else {
                Issue.record("round \(round): the writer exited by itself: \(child.lines) \(child.standardError)")
                record.failures += 1
                break
            }
            let committed = child.lines.compactMap { line -> Int64? in
                line.hasPrefix("committed ") ? Int64(line.dropFirst("committed ".count)) : nil
            }
            tally.add(child.lines.contains { $0.hasPrefix("ready") } ? "killed while committing" : "killed before ready")
            record.inputs += committed.count
            do {
                let landedUnreported = try await ledger.verify(path: path, mode: mode, key: key, reported: committed)
                if landedUnreported { tally.add("last commit landed before it was reported") }
            } catch {
                Issue.record("round \(round) (killed after \(delay) ms, \(committed.count) commits reported): \(error)")
                record.failures += 1
                break
            }
            record.rounds += 1
        }
        tally.add("transactions committed in total", Int(ledger.last))
        await Self.finish(&record, ledger, path: path, mode: mode, key: key, tally: tally)
        #expect(ledger.last > 0, "no transaction was ever committed: the kills came too early to test anything")
    }
}

extension CrashSafetyTests {
    /// Kills inside a `VACUUM` (which rewrites every page through the journal or the WAL), aimed
    /// by the writer's `vacuuming N` line: every reported commit stays, integrity holds, and no
    /// byte of the rows' text is on disk in the file, its `-wal` or its `-journal`.
    @Test(arguments: JournalMode.allCases)
    func killedDuringVacuumLosesNothingAndWritesNoPlaintext(_ mode: JournalMode) async throws {
        let scenario = "SIGKILL during VACUUM (\(mode.rawValue))"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        var tally = Tally()
        let dir = TemporaryDirectory()
        let path = dir.path("vacuum.db")
        let key = rawKey(44)
        var ledger = CrashLedgerState()
        for round in 1...Reliability.count(short: 20, long: 300) {
            let child = try KillableChild(helperArguments: ["crash-writer", path, mode.rawValue, hex(key), "vacuum"])
            guard child.waitForLine(startingWith: "vacuuming") != nil else {
                child.killAndCollect()
                Issue.record("round \(round): the writer never reached a VACUUM: \(child.lines) \(child.standardError)")
                record.failures += 1
                break
            }
            // Somewhere inside the VACUUM (a few to some tens of milliseconds) or just after it.
            usleep(UInt32(Int.random(in: 0...40_000, using: &random)))
            guard child.killAndCollect() else {
                Issue.record("round \(round): the writer exited by itself: \(child.lines) \(child.standardError)")
                record.failures += 1
                break
            }
            record.faults += 1
            let vacuumed = child.lines.last { $0.hasPrefix("vacuum") }?.hasPrefix("vacuumed") == true
            tally.add(vacuumed ? "killed after a VACUUM ended" : "killed inside a VACUUM")
            let committed = child.lines.compactMap { $0.hasPrefix("committed ") ? Int64($0.dropFirst(10)) : nil }
            record.inputs += committed.count
            // The journal a kill leaves is read before anything opens the file (which rolls it back).
            let files = [path, path + "-wal", path + "-journal"].filter { FileManager.default.fileExists(atPath: $0) }
            for file in files {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
                if bytes.range(of: Data("entry ".utf8)) != nil {
                    Issue.record("round \(round): plaintext of the rows in \(file)")
                    record.failures += 1
                }
            }
            do {
                _ = try await ledger.verify(path: path, mode: mode, key: key, reported: committed)
            } catch {
                Issue.record("round \(round) (\(committed.count) commits reported): \(error)")
                record.failures += 1
                break
            }
            record.rounds += 1
        }
        await Self.finish(&record, ledger, path: path, mode: mode, key: key, tally: tally)
    }

    /// The end of every kill loop: every row of every round checked byte for byte, the record
    /// written with the tally, and no failure.
    static func finish(_ record: inout ScenarioRecord, _ ledger: CrashLedgerState, path: String, mode: JournalMode,
                       key: Data, tally: Tally) async {
        do {
            try await ledger.verifyAllRows(path: path, mode: mode, key: key)
        } catch {
            Issue.record("final check: \(error)")
            record.failures += 1
        }
        record.notes = tally.summary
        record.record()
        #expect(record.failures == 0)
    }
}

extension CrashSafetyTests {
    /// Kills during the creation of a new file: opening it, writing the first pages, the package's
    /// own on-disk ciphertext probe, the schema. Each round starts from no file. Afterwards the
    /// file must open with the key and hold either nothing or the whole schema, and nothing of the
    /// package's own (no leftover probe table).
    @Test(arguments: JournalMode.allCases)
    func killedDuringCreationLeavesNoTrace(_ mode: JournalMode) async throws {
        let scenario = "SIGKILL during creation (\(mode.rawValue))"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        var tally = Tally()
        let key = rawKey(43)
        for round in 1...Reliability.count(short: 15, long: 300) {
            let dir = TemporaryDirectory()
            let path = dir.path("new.db")
            let child = try KillableChild(helperArguments: ["crash-writer", path, mode.rawValue, hex(key)])
            if Int.random(in: 0..<5, using: &random) == 0 {
                // Anywhere in the start-up, before the file may exist.
                usleep(UInt32(Int.random(in: 0...60, using: &random) * 1000))
            } else {
                // Aimed at the creation itself, which takes a few milliseconds from the moment the
                // file appears (start-up time varies too much with the machine's load to aim from
                // the start).
                // Polls for the file; the bound only stops a hang (a kill without it is still valid).
                let deadline = Date().addingTimeInterval(60)
                while !FileManager.default.fileExists(atPath: path) && Date() < deadline { usleep(200) }
                usleep(UInt32(Int.random(in: 0...15_000, using: &random)))
            }
            child.killAndCollect()
            record.faults += 1
            record.rounds += 1
            let committed = child.lines.filter { $0.hasPrefix("committed ") }.count
            var ledger = CrashLedgerState()
            do {
                if !FileManager.default.fileExists(atPath: path) {
                    tally.add("killed before the file existed")
                    continue
                }
                let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
                _ = try await ledger.verify(path: path, mode: mode, key: key,
                                            reported: child.lines.compactMap { $0.hasPrefix("committed ") ? Int64($0.dropFirst(10)) : nil })
                tally.add(size == 0 ? "killed with an empty file" : committed > 0 ? "killed after commits" : "killed while creating")
            } catch {
                Issue.record("round \(round): \(error)")
                record.failures += 1
            }
        }
        record.notes = tally.summary
        record.record()
    }
}

/// The deterministic content of the crash scenario's transactions: the same formulas as the
/// helper's `CrashLedger` (Sources/sqlcipherkit-test-helper/CrashWriterCommand.swift). The helper
/// is a separate program, so the two are kept in step by hand; a difference fails every round.
enum CrashLedgerExpectation {
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

    static func entryCount(_ n: Int64) -> Int64 { n % 7 + 1 }

    static func entryBody(_ n: Int64, _ k: Int64) -> String { "entry \(n)/\(k) " + String(repeating: "x", count: Int((n + k) % 50)) }
}

/// A violated promise, with what was found.
struct ReliabilityViolation: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What the parent knows of the ledger: the last transaction it has verified.
struct CrashLedgerState {
    private(set) var last: Int64 = 0

    /// Checks the file after a kill. Returns whether a transaction committed without being
    /// reported (the kill landed between the commit and the report), which is allowed once.
    mutating func verify(path: String, mode: JournalMode, key: Data, reported: [Int64]) async throws -> Bool {
        let maxReported = reported.max() ?? last
        if !FileManager.default.fileExists(atPath: path) {
            guard reported.isEmpty && last == 0 else { throw ReliabilityViolation("the database file is gone") }
            return false
        }
        let db = try Database(path: path, rawKey: key, journalMode: mode)
        // Closed before the next writer starts, on success and on failure alike.
        do {
            let landed = try await verify(db, mode: mode, reported: reported, maxReported: maxReported)
            await db.close()
            return landed
        } catch {
            await db.close()
            throw error
        }
    }

    private mutating func verify(_ db: Database, mode: JournalMode, reported: [Int64], maxReported: Int64) async throws -> Bool {
        let tables = try await db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
        if tables.isEmpty {
            // Killed before the schema transaction committed: nothing may exist yet (not even the
            // probe table of an interrupted creation, which opening the file again removes).
            guard reported.isEmpty && last == 0 else { throw ReliabilityViolation("the schema is gone after \(last) commits") }
            let count = try await db.query("SELECT count(*) FROM sqlite_master").first?.get(0, as: Int.self)
            guard count == 0 else {
                let names = try await db.query("SELECT name FROM sqlite_master").compactMap { $0.get("name", as: String.self) }
                throw ReliabilityViolation("a half-created schema without meta: \(names)")
            }
            return false
        }
        guard let meta = try await db.query("SELECT last, total FROM meta WHERE id = 1").first,
              let newLast = meta.get("last", as: Int64.self), let total = meta.get("total", as: Int64.self) else {
            throw ReliabilityViolation("meta row missing")
        }
        for n in reported where n > newLast {
            throw ReliabilityViolation("commit \(n) was reported but meta.last is \(newLast)")
        }
        guard newLast >= last else { throw ReliabilityViolation("meta.last went back from \(last) to \(newLast)") }
        guard newLast <= maxReported + 1 else {
            throw ReliabilityViolation("meta.last is \(newLast), more than one past the last reported commit \(maxReported)")
        }
        // Aggregates over everything: counts and sizes must match the formulas exactly.
        let expectedEntries = (1...max(newLast, 1)).reduce(Int64(0)) { $0 + (newLast == 0 ? 0 : CrashLedgerExpectation.entryCount($1)) }
        guard let ledger = try await db.query("SELECT count(*) AS n, min(n) AS lo, max(n) AS hi FROM ledger").first,
              let entries = try await db.query("SELECT count(*) AS n, max(n) AS hi FROM entries").first else {
            throw ReliabilityViolation("cannot count rows")
        }
        guard ledger.get("n", as: Int64.self) == newLast, newLast == 0 || ledger.get("hi", as: Int64.self) == newLast,
              newLast == 0 || ledger.get("lo", as: Int64.self) == 1 else {
            throw ReliabilityViolation("ledger has \(ledger) but meta.last is \(newLast)")
        }
        guard entries.get("n", as: Int64.self) == expectedEntries, total == expectedEntries else {
            throw ReliabilityViolation("entries \(entries), meta.total \(total), expected \(expectedEntries)")
        }
        // The rows this round added, byte for byte.
        if newLast > last {
            try await Self.checkRows(db, from: last + 1, through: newLast)
        }
        try await Self.checkIntegrity(db, mode: mode)
        let landedUnreported = newLast == maxReported + 1
        last = newLast
        return landedUnreported
    }

    /// Every row of the ledger, byte for byte.
    func verifyAllRows(path: String, mode: JournalMode, key: Data) async throws {
        guard last > 0 else { return }
        let db = try Database(path: path, rawKey: key, journalMode: mode)
        do {
            try await Self.checkRows(db, from: 1, through: last)
            try await Self.checkIntegrity(db, mode: mode)
            await db.close()
        } catch {
            await db.close()
            throw error
        }
    }

    private static func checkRows(_ db: Database, from first: Int64, through last: Int64) async throws {
        let rows = try await db.query("SELECT n, payload, size FROM ledger WHERE n BETWEEN ? AND ? ORDER BY n", first, last)
        guard rows.count == Int(last - first + 1) else {
            throw ReliabilityViolation("ledger rows \(first)...\(last): found \(rows.count)")
        }
        for row in rows {
            guard let n = row.get("n", as: Int64.self) else { throw ReliabilityViolation("a ledger row without n") }
            let expected = CrashLedgerExpectation.payload(n)
            guard row.get("payload", as: Data.self) == expected, row.get("size", as: Int.self) == expected.count else {
                throw ReliabilityViolation("ledger row \(n) holds other bytes than were committed")
            }
        }
        let entries = try await db.query("SELECT n, k, body FROM entries WHERE n BETWEEN ? AND ? ORDER BY n, k", first, last)
        var expected: [(Int64, Int64)] = []
        for n in first...last { for k in 1...CrashLedgerExpectation.entryCount(n) { expected.append((n, k)) } }
        guard entries.count == expected.count else {
            throw ReliabilityViolation("entries of \(first)...\(last): found \(entries.count), expected \(expected.count)")
        }
        for (row, (n, k)) in zip(entries, expected) {
            guard row.get("n", as: Int64.self) == n, row.get("k", as: Int64.self) == k,
                  row.get("body", as: String.self) == CrashLedgerExpectation.entryBody(n, k) else {
                throw ReliabilityViolation("entry \(n)/\(k) is missing or different: \(row)")
            }
        }
    }

    /// SQLite's integrity check, and SQLCipher's page-by-page HMAC check on 4.x.
    static func checkIntegrity(_ db: Database, mode: JournalMode) async throws {
        let problems = try await integrityProblems(db)
        guard problems.isEmpty else { throw ReliabilityViolation("integrity: \(problems)") }
    }
}
