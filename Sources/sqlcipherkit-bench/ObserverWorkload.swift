import Foundation
import SqlCipherKit
import Synchronization

/// What the consumer tasks of one database have seen: the latest value of each observer.
final class ObserverMonitor: Sendable {
    private struct State {
        var latest: [Int]
        var deliveries = 0
        var failure: String?
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(latest: Array(repeating: -1, count: count)))
    }

    func record(_ index: Int, _ value: Int) {
        state.withLock {
            $0.latest[index] = value
            $0.deliveries += 1
        }
    }

    func fail(_ index: Int, _ error: any Error) {
        state.withLock { $0.failure = "observer \(index) failed: \(error)" }
    }

    var deliveries: Int { state.withLock { $0.deliveries } }

    /// Waits until every observer holds `value`, or throws after `timeout`.
    func waitUntilAll(see value: Int, timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (done, failure) = state.withLock { state in (state.latest.allSatisfy { $0 == value }, state.failure) }
            if let failure { throw BenchError(failure) }
            if done { return }
            guard ContinuousClock.now < deadline else {
                throw BenchError("observers did not all see \(value) within \(timeout): \(state.withLock { $0.latest })")
            }
            try await Task.sleep(for: .microseconds(200))
        }
    }
}

extension Bench {
    /// The insert workload on three databases: without observers, with observers of other tables,
    /// and with observers of the written table (each a task iterating db.values(of:)). Timed is the
    /// writer's transaction; for observers of the same table, the time until every one of them
    /// has the new value is reported apart.
    func runObservers() async throws -> [WorkloadResult] {
        let rows = options.writeRows
        let count = options.observers
        var none = WorkloadResult(
            name: "insert.observers.none",
            description: "the insert workload on a database nobody observes (baseline of the observer workloads)",
            rows: rows, runs: options.runs)
        var other = WorkloadResult(
            name: "insert.observers.otherTables",
            description: "the insert workload while \(count) tasks iterate db.values(of:) of \(count) other tables",
            rows: rows, runs: options.runs)
        var same = WorkloadResult(
            name: "insert.observers.sameTable",
            description: "the insert workload while \(count) tasks iterate db.values(of:) of the written table "
                + "(SELECT count(*)); timed is the write; visibleToAll is from the start of the write until all "
                + "\(count) consumers hold the new count",
            rows: rows, runs: options.runs)

        for encryption in Encryption.allCases {
            let floor = try makeFloorTable(path("observers-c-\(encryption)"), key: encryption.key)
            let dbNone = try await makeSwiftTable(path("observers-none-\(encryption)"), key: encryption.key)
            let dbOther = try await makeSwiftTable(path("observers-other-\(encryption)"), key: encryption.key)
            let dbSame = try await makeSwiftTable(path("observers-same-\(encryption)"), key: encryption.key)

            let otherMonitor = ObserverMonitor(count: count)
            let sameMonitor = ObserverMonitor(count: count)
            var tasks: [Task<Void, Never>] = []
            defer { tasks.forEach { $0.cancel() } }
            for index in 0..<count {
                try await dbOther.execute("CREATE TABLE other\(index)(id INTEGER PRIMARY KEY, value INTEGER)")
                tasks.append(observe(dbOther, "SELECT count(*) FROM other\(index)", index: index, monitor: otherMonitor))
                tasks.append(observe(dbSame, "SELECT count(*) FROM \(BenchSchema.table)", index: index, monitor: sameMonitor))
            }
            try await otherMonitor.waitUntilAll(see: 0)
            try await sameMonitor.waitUntilAll(see: 0)
            let otherDeliveries = otherMonitor.deliveries

            let clock = ContinuousClock()
            var writeStart = clock.now
            var visible: [Duration] = []
            let samples = try await measureInterleaved([
                Trial(name: "c", prepare: { try floor.execute(BenchSchema.deleteSQL) },
                      body: { try floor.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows) }),
                Trial(name: "none", prepare: { try await dbNone.execute(BenchSchema.deleteSQL) },
                      body: { try await insertRows(dbNone, count: rows) }),
                Trial(name: "other", prepare: { try await dbOther.execute(BenchSchema.deleteSQL) },
                      body: { try await insertRows(dbOther, count: rows) }),
                Trial(name: "same", prepare: {
                    try await dbSame.execute(BenchSchema.deleteSQL)
                    try await sameMonitor.waitUntilAll(see: 0)
                }, body: {
                    writeStart = clock.now
                    try await insertRows(dbSame, count: rows)
                }, settle: {
                    try await sameMonitor.waitUntilAll(see: rows)
                    visible.append(clock.now - writeStart)
                }),
            ], runs: options.runs)

            // Writes to other tables must wake nobody: a delivery here would mean a refetch was timed.
            guard otherMonitor.deliveries == otherDeliveries else {
                throw BenchError("observers of other tables were woken \(otherMonitor.deliveries - otherDeliveries) "
                    + "times by writes to \(BenchSchema.table)")
            }
            for db in [dbNone, dbOther, dbSame] {
                try await verifyRows(db, count: rows, salt: 0, what: "the observed insert")
            }
            tasks.forEach { $0.cancel() }
            for db in [dbNone, dbOther, dbSame] { await db.close() }

            let floorSamples = samples["c"]!
            none[encryption] = CaseFigures(swift: samples["none"]!, floor: floorSamples)
            other[encryption] = CaseFigures(swift: samples["other"]!, floor: floorSamples)
            same[encryption] = CaseFigures(swift: samples["same"]!, floor: floorSamples)
            let baseline = samples["none"]!.medianMilliseconds
            other.extra["\(encryption.rawValue).ratioToNoObservers"] =
                (samples["other"]!.medianMilliseconds / baseline).rounded(places: 3)
            same.extra["\(encryption.rawValue).ratioToNoObservers"] =
                (samples["same"]!.medianMilliseconds / baseline).rounded(places: 3)
            // The first round was the untimed warm-up.
            same.extra["\(encryption.rawValue).visibleToAllMedianMs"] =
                Samples(durations: Array(visible.suffix(options.runs))).medianMilliseconds.rounded(places: 3)
        }
        return [none, other, same]
    }

    /// A consumer task: iterates `db.values(of:)` of a count query and records each value.
    private func observe(_ db: Database, _ sql: String, index: Int, monitor: ObserverMonitor) -> Task<Void, Never> {
        Task {
            do {
                for try await rows in db.values(of: .query(sql)) {
                    monitor.record(index, rows.first?.get(0, as: Int.self) ?? -1)
                }
            } catch {
                monitor.fail(index, error)
            }
        }
    }
}
