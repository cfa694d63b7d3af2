import Foundation
import SqlCipherKit
import Synchronization

/// What the consumer tasks of one database have seen: the latest value of each observer.
///
/// A waiter is resumed by the observer whose value completes it, so that the time until every
/// observer holds a value is measured to the delivery, not to the next poll.
final class ObserverMonitor: Sendable {
    private struct State {
        var latest: [Int]
        var deliveries = 0
        var failure: String?
        /// The value being waited for and the waiting continuation.
        var waiter: (value: Int, continuation: CheckedContinuation<Void, any Error>)?
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(latest: Array(repeating: -1, count: count)))
    }

    func record(_ index: Int, _ value: Int) {
        let ready = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.latest[index] = value
            state.deliveries += 1
            guard let waiter = state.waiter, state.latest.allSatisfy({ $0 == waiter.value }) else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        ready?.resume()
    }

    func fail(_ index: Int, _ error: any Error) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.failure = "observer \(index) failed: \(error)"
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(throwing: BenchError("observer \(index) failed: \(error)"))
    }

    var deliveries: Int { state.withLock { $0.deliveries } }

    /// Returns as soon as every observer holds `value`; throws after `timeout`.
    func waitUntilAll(see value: Int, timeout: Duration = .seconds(60)) async throws {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled, let self else { return }
            let waiter = self.state.withLock { state -> (CheckedContinuation<Void, any Error>, [Int])? in
                defer { state.waiter = nil }
                return state.waiter.map { ($0.continuation, state.latest) }
            }
            waiter?.0.resume(throwing: BenchError("observers did not all see \(value) within \(timeout): \(waiter?.1 ?? [])"))
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Bool, BenchError> in
                if let failure = state.failure { return .failure(BenchError(failure)) }
                if state.latest.allSatisfy({ $0 == value }) { return .success(true) }
                state.waiter = (value, continuation)
                return .success(false)
            }
            switch outcome {
            case .failure(let error): continuation.resume(throwing: error)
            case .success(true): continuation.resume()
            case .success(false): break
            }
        }
    }
}

extension Bench {
    /// The insert workload on three databases: without observers, with observers of other tables,
    /// and with observers of the written table (each a task iterating db.values(of:)). Timed is
    /// the writer's transaction and, for observers of the written table, the wait until every one
    /// of them holds the new count: what a program waits for before its views show the write.
    func runObservers() async throws -> [WorkloadResult] {
        let rows = options.writeRows
        let count = options.observers
        var none = WorkloadResult(
            name: "insert.observers.none",
            description: "the insert workload on a database nobody observes (baseline of the observer workloads)",
            rows: rows, runs: options.runs)
        var other = WorkloadResult(
            name: "insert.observers.otherTables",
            description: "the insert workload while \(count) tasks iterate db.values(of:) of \(count) other tables "
                + "(extra: ratioToNoObservers, the median of each round's ratio to the unobserved insert)",
            rows: rows, runs: options.runs)
        var same = WorkloadResult(
            name: "insert.observers.sameTable",
            description: "the insert workload while \(count) tasks iterate db.values(of:) of the written table "
                + "(SELECT count(*)); timed from the start of the write until all \(count) consumers hold the new count",
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

            let floorTrial = Trial(prepare: { try floor.execute(BenchSchema.deleteSQL) },
                                   body: { try floor.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows) })
            let noneTrial = Trial(prepare: { try await dbNone.execute(BenchSchema.deleteSQL) },
                                  body: { try await insertRows(dbNone, count: rows) })
            let samples = try await measurePaired([
                Pair(name: "none", floor: floorTrial, swift: noneTrial),
                // Observers of other tables against the same write without observers, back to back.
                Pair(name: "otherVsNone", floor: noneTrial, swift: Trial(
                    prepare: { try await dbOther.execute(BenchSchema.deleteSQL) },
                    body: { try await insertRows(dbOther, count: rows) })),
                Pair(name: "other", floor: floorTrial, swift: Trial(
                    prepare: { try await dbOther.execute(BenchSchema.deleteSQL) },
                    body: { try await insertRows(dbOther, count: rows) })),
                Pair(name: "same", floor: floorTrial, swift: Trial(prepare: {
                    try await dbSame.execute(BenchSchema.deleteSQL)
                    try await sameMonitor.waitUntilAll(see: 0)
                }, body: {
                    try await insertRows(dbSame, count: rows)
                    try await sameMonitor.waitUntilAll(see: rows)
                })),
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

            none[encryption] = CaseFigures(samples["none"]!)
            other[encryption] = CaseFigures(samples["other"]!)
            same[encryption] = CaseFigures(samples["same"]!)
            let otherVsNone = samples["otherVsNone"]!.ratios
            other.extra["\(encryption.rawValue).ratioToNoObservers"] = median(otherVsNone).rounded(places: 3)
            other.extra["\(encryption.rawValue).ratioToNoObserversMin"] = (otherVsNone.min() ?? 0).rounded(places: 3)
            other.extra["\(encryption.rawValue).ratioToNoObserversMax"] = (otherVsNone.max() ?? 0).rounded(places: 3)
            // The same table's figure against the unobserved write of the same rounds.
            let sameRatios = zip(samples["same"]!.swift.milliseconds, samples["none"]!.swift.milliseconds).map { $0 / $1 }
            same.extra["\(encryption.rawValue).ratioToNoObservers"] = median(sameRatios).rounded(places: 3)
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
