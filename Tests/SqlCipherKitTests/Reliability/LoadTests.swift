import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// Load: many tasks on one Database with live observers attached, and two Database values on one
/// file, for a fixed number of operations. Every operation is a read-modify-write transaction
/// (read a counter, write it plus one, log the operation), so a lost or duplicated update shows in
/// the final sums; readers and observers check that they only ever see whole transactions
/// (the counters' sum always equals the number of logged operations).
@Suite struct LoadTests {
    static let schema = """
        CREATE TABLE counters(id INTEGER PRIMARY KEY, value INTEGER NOT NULL);
        CREATE TABLE ops(writer INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY(writer, seq));
        INSERT INTO counters(id, value) VALUES (0, 0), (1, 0), (2, 0), (3, 0);
        """
    static let snapshotSQL = "SELECT (SELECT sum(value) FROM counters) AS total, (SELECT count(*) FROM ops) AS ops"

    @Test func manyTasksOnOneDatabaseWithLiveObservers() async throws {
        let scenario = "tasks on one Database with live observers"
        var record = ScenarioRecord(suite: "Load", scenario: scenario)
        var tally = Tally()
        let writers = Reliability.count(short: 8, long: 32)
        let perWriter = Reliability.count(short: 40, long: 400)
        let observers = Reliability.count(short: 4, long: 16)
        let total = writers * perWriter
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("load.db"), rawKey: rawKey(21))
        try await db.execute(Self.schema)
        let torn = SharedCounter()

        try await withThrowingTaskGroup(of: String.self) { group in
            // Observers: each follows the totals until it sees the final state.
            for observer in 0..<observers {
                group.addTask {
                    var seen = 0
                    var last = -1
                    for try await rows in db.values(of: .query(Self.snapshotSQL)) {
                        let value = rows.first?.get("total", as: Int.self) ?? -1
                        let ops = rows.first?.get("ops", as: Int.self) ?? -2
                        if value != ops || value < last { torn.add() }
                        last = value
                        seen += 1
                        if value == total { return "observer \(observer) reached the final state after \(seen) values" }
                    }
                    return "observer \(observer) ended early at \(last)"
                }
            }
            // Writers.
            for writer in 0..<writers {
                group.addTask {
                    for seq in 0..<perWriter {
                        try await db.transaction { conn in
                            let id = (writer + seq) % 4
                            let current = try conn.query("SELECT value FROM counters WHERE id = ?", id)[0].get("value", as: Int.self) ?? 0
                            try conn.execute("UPDATE counters SET value = ? WHERE id = ?", current + 1, id)
                            try conn.execute("INSERT INTO ops(writer, seq) VALUES (?, ?)", writer, seq)
                        }
                        if seq % 10 == 0 { await Task.yield() }
                    }
                    return "writer done"
                }
            }
            // Plain readers between the writes.
            for _ in 0..<2 {
                group.addTask {
                    var reads = 0
                    while true {
                        let row = try await db.query(Self.snapshotSQL)[0]
                        let value = row.get("total", as: Int.self) ?? -1
                        if value != row.get("ops", as: Int.self) { torn.add() }
                        reads += 1
                        if value == total { return "reader done after \(reads) reads" }
                        await Task.yield()
                    }
                }
            }
            // A watchdog: observers that never reach the final state fail the test, not hang it.
            // A guard against a hang only, not a deadline: on a loaded machine (CI's, or a whole
            // suite beside a build) 320 observed transactions took more than 120 s.
            group.addTask {
                do {
                    try await Task.sleep(for: .seconds(600))
                    return "watchdog fired"
                } catch {
                    return "watchdog cancelled"
                }
            }
            var remaining = observers + writers + 2
            for try await outcome in group {
                if outcome == "watchdog fired" {
                    Issue.record("the load did not finish in time: \(remaining) tasks still running")
                    record.failures += 1
                    group.cancelAll()
                    break
                }
                if outcome.contains("ended early") {
                    Issue.record("an observer stopped before the final state: \(outcome)")
                    record.failures += 1
                }
                if outcome.hasPrefix("observer") && !outcome.contains("early") { tally.add("observers at the final state") }
                remaining -= 1
                if remaining == 0 { group.cancelAll() }
            }
        }

        let final = try await db.query(Self.snapshotSQL)[0]
        let distinct = try await db.query("SELECT count(DISTINCT writer * 1000000 + seq) AS n FROM ops")[0]
        #expect(final.get("total", as: Int.self) == total, "lost or duplicated updates: \(final)")
        #expect(final.get("ops", as: Int.self) == total)
        #expect(distinct.get("n", as: Int.self) == total)
        #expect(torn.value == 0, "a reader or observer saw part of a transaction")
        record.rounds = total
        record.inputs = observers
        record.failures += (final.get("total", as: Int.self) == total ? 0 : 1) + torn.value
        tally.add("\(writers) writers × \(perWriter) transactions")
        record.notes = tally.summary
        record.record()
        await db.close()
    }

    @Test(arguments: JournalMode.allCases)
    func twoDatabaseValuesOnOneFile(_ mode: JournalMode) async throws {
        let scenario = "two Database values on one file (\(mode.rawValue))"
        var record = ScenarioRecord(suite: "Load", scenario: scenario)
        var tally = Tally()
        let writers = Reliability.count(short: 6, long: 24)
        let perWriter = Reliability.count(short: 30, long: 300)
        let total = writers * perWriter
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db")
        let first = try Database(path: path, rawKey: rawKey(22), journalMode: mode)
        try await first.execute(Self.schema)
        let second = try Database(path: path, rawKey: rawKey(22), journalMode: mode)
        let busy = SharedCounter()
        let torn = SharedCounter()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let db = writer % 2 == 0 ? first : second
                group.addTask {
                    for seq in 0..<perWriter {
                        // A writer of the other Database may hold the lock past the busy timeout
                        // under load: that is a typed SQLITE_BUSY, retried; the count stays exact.
                        while true {
                            do {
                                try await db.transaction { conn in
                                    let id = (writer + seq) % 4
                                    let current = try conn.query("SELECT value FROM counters WHERE id = ?", id)[0].get("value", as: Int.self) ?? 0
                                    try conn.execute("UPDATE counters SET value = ? WHERE id = ?", current + 1, id)
                                    try conn.execute("INSERT INTO ops(writer, seq) VALUES (?, ?)", writer, seq)
                                }
                                break
                            } catch SqlCipherError.sqlite(5, _, _, _) {
                                busy.add()
                            }
                        }
                    }
                }
            }
            for db in [first, second] {
                group.addTask {
                    while true {
                        let row: Row
                        do {
                            row = try await db.query(Self.snapshotSQL)[0]
                        } catch SqlCipherError.sqlite(5, _, _, _) {
                            busy.add()
                            continue
                        }
                        let value = row.get("total", as: Int.self) ?? -1
                        if value != row.get("ops", as: Int.self) { torn.add() }
                        if value == total { return }
                        try await Task.sleep(for: .milliseconds(2))  // a polling interval; the watchdog bounds it
                    }
                }
            }
            try await group.waitForAll()
        }

        for db in [first, second] {
            let final = try await db.query(Self.snapshotSQL)[0]
            #expect(final.get("total", as: Int.self) == total, "lost or duplicated updates: \(final)")
            #expect(final.get("ops", as: Int.self) == total)
        }
        let problems = try await integrityProblems(first)
        #expect(problems.isEmpty, "\(problems)")
        #expect(torn.value == 0, "a reader saw part of a transaction")
        record.rounds = total
        record.faults = busy.value
        record.failures = torn.value + (problems.isEmpty ? 0 : 1)
        tally.add("\(writers) writers × \(perWriter) transactions")
        if busy.value > 0 { tally.add("SQLITE_BUSY retried", busy.value) }
        record.notes = tally.summary
        record.record()
        await first.close()
        await second.close()
    }
}

/// A counter shared by concurrent tasks.
final class SharedCounter: Sendable {
    private let count = Atomic<Int>(0)
    func add(_ n: Int = 1) { count.add(n, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
