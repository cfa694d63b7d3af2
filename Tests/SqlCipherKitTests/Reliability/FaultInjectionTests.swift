import Foundation
import SqlCipherKit
import Testing

/// Faults: a child registers the test VFS (Sources/CSqlCipherTestVFS) as the loaded library's
/// default VFS and runs a workload (open, a transaction over several pages, a read, close) with
/// the Nth read, write or sync failing, for N across the whole workload. Every failure must
/// surface as a typed error; afterwards the file must reopen with the normal VFS, hold every
/// committed row, and show no partial transaction.
@Suite struct FaultInjectionTests {
    struct Fault: Sendable, CustomTestStringConvertible {
        let mode: JournalMode
        let operation: String
        let code: Int32
        let codeName: String
        let persistent: Bool

        var testDescription: String {
            "\(persistent ? "every" : "one") \(operation) from N fails with \(codeName) (\(mode.rawValue))"
        }
    }

    static let faults: [Fault] = JournalMode.allCases.flatMap { mode in
        [
            Fault(mode: mode, operation: "write", code: 13, codeName: "SQLITE_FULL", persistent: false),
            Fault(mode: mode, operation: "write", code: 13, codeName: "SQLITE_FULL", persistent: true),
            Fault(mode: mode, operation: "write", code: 778, codeName: "SQLITE_IOERR_WRITE", persistent: false),
            Fault(mode: mode, operation: "sync", code: 1034, codeName: "SQLITE_IOERR_FSYNC", persistent: false),
            Fault(mode: mode, operation: "sync", code: 1034, codeName: "SQLITE_IOERR_FSYNC", persistent: true),
            Fault(mode: mode, operation: "read", code: 266, codeName: "SQLITE_IOERR_READ", persistent: false),
            Fault(mode: mode, operation: "read", code: 266, codeName: "SQLITE_IOERR_READ", persistent: true),
        ]
    }

    /// Whether the loaded SQLCipher keeps a connection in error once a page failed to decrypt on
    /// it (4.7 and later; `SQLiteMessageAdvice.codecErrorSticks`).
    static var codecErrorSticks: Bool {
        ((try? SqlCipherLibrary.shared)?.cipherVersionComponents ?? []).lexicographicallyPrecedes([4, 7]) == false
    }

    /// The libraries a child may load for a pool-reader fault: the suite's own, and a newer
    /// release (`SQLCIPHERKIT_NEWER_LIBRARY`) when one is named.
    static let poolFaultLibraries: [String?] = [nil] + (NewerReleaseInteropTests.library.map { [$0] } ?? [])

    /// One read of a pool's reader fails with `SQLITE_IOERR_READ`; the disk is well again at
    /// once. The read fails with a typed error and the reads after it succeed. On SQLCipher 4.7
    /// and later the failed read leaves the reader's connection in error for good (every later
    /// statement `SQLITE_NOMEM`); the pool kept it and failed every later read through it until
    /// the program restarted. It now closes such a reader and opens another. (The regression
    /// shows with a 4.7+ library: `SQLCIPHERKIT_NEWER_LIBRARY`, or the suite run on one.)
    @Test(arguments: poolFaultLibraries)
    func aPoolsReaderRecoversFromAFailedRead(library: String?) throws {
        let dir = TemporaryDirectory()
        var environment: [String: String?] = [:]
        if let library { environment[SqlCipherLibrary.environmentVariable] = library }
        let child = try runHelper(["pool-read-fault", dir.path("fault.db"), hex(rawKey(9))], environment: environment)
        let lines = child.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(child.stdout)\n\(child.stderr)")
        #expect(lines.first?.hasPrefix("first error 10") == true, "\(child.stdout)")
        #expect(lines.dropFirst().first == "second ok 45450", "\(child.stdout)")
        #expect(lines.dropFirst(2).first == "third ok 45450", "\(child.stdout)")
    }

    static let baselineAccounts = 40
    static let baselineBalance: Int64 = 100
    static let batchRows = 30

    @Test(arguments: faults)
    func faultAtEveryPositionLeavesACommittedState(_ fault: Fault) async throws {
        let scenario = fault.testDescription
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Faults", scenario: scenario)
        var tally = Tally()
        let dir = TemporaryDirectory()
        let key = rawKey(7)
        let baseline = dir.path("baseline.db")
        try await Self.makeBaseline(baseline, key: key, mode: fault.mode)

        // The counting run: how many operations of this kind the whole workload performs.
        let counting = try Self.runChild(dir: dir, baseline: baseline, key: key, fault: fault, positions: [0])
        let total = try #require(counting.first, "the counting run reported nothing")
        #expect(total.outcome == "ok", "the workload fails without any fault: \(total.message)")
        let count = fault.operation == "read" ? total.reads : fault.operation == "write" ? total.writes : total.syncs
        #expect(count > 0, "the workload performed no \(fault.operation)")
        try await Self.verify(dir.path("fault-0.db"), key: key, mode: fault.mode, result: total, expectBatch: true)

        // N across the whole workload: every position in the long run, a seeded sample otherwise
        // (always the first and the last).
        var positions: [Int64]
        if Reliability.isLong || count <= 40 {
            positions = Array(1...max(count, 1))
        } else {
            var sample: Set<Int64> = [1, count]
            while sample.count < 24 { sample.insert(Int64.random(in: 1...count, using: &random)) }
            positions = sample.sorted()
        }
        let results = try Self.runChild(dir: dir, baseline: baseline, key: key, fault: fault, positions: positions)
        #expect(results.count == positions.count, "the child reported \(results.count) of \(positions.count) runs")
        for result in results {
            record.rounds += 1
            record.faults += Int(result.injected)
            if result.outcome == "error" {
                tally.add("\(result.stage): \(result.kind)\(result.code != 0 ? "(\(result.code))" : "")")
                if result.kind.hasPrefix("untyped") {
                    Issue.record("N=\(result.nth): an untyped error: \(result.message)")
                    record.failures += 1
                }
            } else {
                tally.add(result.injected > 0 ? "absorbed by SQLite (no error)" : "position not reached")
            }
            if result.outcome == "error" && !result.retry.isEmpty {
                tally.add("retry on the same Database: \(result.retry)")
                // SQLCipher 4.7+ keeps a connection in error once a page failed to read or decrypt
                // (a read fault decrypts a buffer that was never read): the same Database then
                // refuses every statement with an error that says to open the file again, and the
                // helper checks that this works. 3.4.1 and 4.6.1 must run it on the same Database.
                if result.retry != "ok" && !(result.retry == "ok after reopening" && Self.codecErrorSticks) {
                    Issue.record("N=\(result.nth): after the fault, the same Database cannot run the transaction: \(result.message)")
                    record.failures += 1
                }
            }
            do {
                let applied = try await Self.verify(dir.path("fault-\(result.nth).db"), key: key, mode: fault.mode,
                                                    result: result, expectBatch: nil)
                if result.outcome == "error" && result.stage == "transaction" && applied > (result.retry.hasPrefix("ok") ? 1 : 0) {
                    // The transaction threw, yet its commit reached the file (e.g. the WAL frames
                    // were written and only their sync failed): allowed, and worth knowing.
                    tally.add("failed commit found applied on reopen")
                }
            } catch {
                Issue.record("N=\(result.nth) (\(result.outcome) at \(result.stage) \(result.kind)): \(error)")
                record.failures += 1
            }
        }
        tally.add("\(fault.operation)s in the workload", Int(count))
        record.notes = tally.summary
        record.record()
    }

    /// Runs the helper's fault-run command and decodes its result lines.
    static func runChild(dir: TemporaryDirectory, baseline: String, key: Data, fault: Fault,
                         positions: [Int64]) throws -> [FaultRunOutcome] {
        let result = try runHelper([
            "fault-run", dir.url.path, baseline, fault.mode.rawValue, hex(key), fault.operation,
            String(fault.code), fault.persistent ? "persistent" : "once",
            positions.map(String.init).joined(separator: ","),
        ])
        guard result.status == 0, !result.signaled else {
            throw ReliabilityViolation("the fault child failed (status \(result.status), signaled \(result.signaled)): "
                + result.stdout.suffix(2000) + result.stderr.suffix(2000))
        }
        let decoder = JSONDecoder()
        return try result.stdout.split(separator: "\n").map { try decoder.decode(FaultRunOutcome.self, from: Data($0.utf8)) }
    }

    static func makeBaseline(_ path: String, key: Data, mode: JournalMode) async throws {
        let db = try Database(path: path, rawKey: key, journalMode: mode)
        try await db.transaction { conn in
            try conn.execute("""
                CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
                CREATE TABLE log(id INTEGER PRIMARY KEY, batch INTEGER NOT NULL, body TEXT NOT NULL);
                CREATE TABLE meta(batch INTEGER NOT NULL);
                INSERT INTO meta VALUES (0);
                """)
            for i in 1...baselineAccounts {
                try conn.execute("INSERT INTO accounts(id, balance) VALUES (?, ?)", i, baselineBalance)
                try conn.execute("INSERT INTO log(batch, body) VALUES (0, ?)", String(repeating: "baseline \(i) ", count: 20))
            }
        }
        await db.close()
    }

    /// Reopens a file the workload ran on, with the normal VFS, and checks that it holds the
    /// baseline and either all of the workload's transaction or none of it.
    @discardableResult
    static func verify(_ path: String, key: Data, mode: JournalMode, result: FaultRunOutcome,
                       expectBatch: Bool?) async throws -> Int64 {
        let db: Database
        do {
            db = try Database(path: path, rawKey: key, journalMode: mode)
        } catch {
            throw ReliabilityViolation("does not reopen with the normal VFS: \(error)")
        }
        do {
            let applied = try await check(db, mode: mode, result: result, expectBatch: expectBatch)
            await db.close()
            return applied
        } catch {
            await db.close()
            throw error
        }
    }

    /// Returns how many batches the file holds.
    @discardableResult
    private static func check(_ db: Database, mode: JournalMode, result: FaultRunOutcome, expectBatch: Bool?) async throws -> Int64 {
        // Batches applied: the first attempt, and the retry after a failure. Each is all or nothing.
        guard let applied = try await db.query("SELECT batch FROM meta").first?.get("batch", as: Int64.self) else {
            throw ReliabilityViolation("meta is gone")
        }
        let promised = (result.committed ? 1 : 0) + (result.retry.hasPrefix("ok") ? 1 : 0)
        guard applied >= Int64(promised), applied <= (result.retry.isEmpty ? 1 : 2) else {
            throw ReliabilityViolation("meta.batch is \(applied) after \(promised) successful transaction(s)")
        }
        if let expectBatch, expectBatch != (applied == 1) {
            throw ReliabilityViolation("batches applied: \(applied), expected \(expectBatch ? 1 : 0)")
        }
        let accounts = try await db.query("SELECT count(*) AS n, min(balance) AS lo, max(balance) AS hi FROM accounts")
        let expectedBalance = baselineBalance + applied
        guard accounts.first?.get("n", as: Int.self) == baselineAccounts,
              accounts.first?.get("lo", as: Int64.self) == expectedBalance,
              accounts.first?.get("hi", as: Int64.self) == expectedBalance else {
            throw ReliabilityViolation("accounts \(accounts), expected \(baselineAccounts) rows of \(expectedBalance)")
        }
        let log = try await db.query("SELECT batch, count(*) AS n FROM log GROUP BY batch ORDER BY batch")
        let expectedLog: [[Int64]] = [[0, Int64(baselineAccounts)]] + (0..<applied).map { [$0 + 1, Int64(batchRows)] }
        guard log.map({ [$0.get("batch", as: Int64.self) ?? -1, $0.get("n", as: Int64.self) ?? -1] }) == expectedLog else {
            throw ReliabilityViolation("log batches \(log), expected \(expectedLog)")
        }
        let bodies = try await db.query("SELECT count(*) FROM log WHERE batch = 0 AND body LIKE 'baseline %'")
        guard bodies.first?.get(0, as: Int.self) == baselineAccounts else { throw ReliabilityViolation("baseline rows changed") }
        try await CrashLedgerState.checkIntegrity(db, mode: mode)
        return applied
    }
}

/// One result line of the helper's fault-run command (same fields as its `FaultRunResult`).
struct FaultRunOutcome: Decodable, Sendable {
    var nth: Int64
    var outcome: String
    var stage: String
    var kind: String
    var code: Int32
    var message: String
    var committed: Bool
    var retry: String
    var injected: Int64
    var reads: Int64
    var writes: Int64
    var syncs: Int64
}
