import SqlCipherKit
import Synchronization

/// Counts trace events, as the cheapest useful tracer does.
final class EventCounter: Sendable {
    private let count = Atomic<Int>(0)

    func record(_ event: TraceEvent) {
        if !event.isInternal { count.wrappingAdd(1, ordering: .relaxed) }
    }

    var value: Int { count.load(ordering: .relaxed) }
}

extension Bench {
    /// The insert workload and the fetch-by-index workload on two databases of the same content:
    /// one with no tracer, one with a tracer installed (it counts the events), run in turn with the
    /// C floor. The traced variants carry `ratioToTracingOff`, the price of tracing; the untraced
    /// ones measure the cost of tracing when nothing listens (compare them with `insert` and
    /// `fetch.byIndex`, and with a build before tracing existed: docs/performance.md).
    func runTracing() async throws -> [WorkloadResult] {
        let rows = options.writeRows
        let fetchRows = options.fetchRows
        var insertOff = WorkloadResult(
            name: "tracing.insert.off", description: "the insert workload on a database without a tracer",
            rows: rows, runs: options.runs)
        var insertOn = WorkloadResult(
            name: "tracing.insert.on",
            description: "the insert workload with a tracer installed (db.trace counting events: one per row)",
            rows: rows, runs: options.runs)
        var fetchOff = WorkloadResult(
            name: "tracing.fetch.off", description: "the fetch-by-index workload on a database without a tracer",
            rows: fetchRows, runs: options.runs)
        var fetchOn = WorkloadResult(
            name: "tracing.fetch.on",
            description: "the fetch-by-index workload with a tracer installed (one event per query)",
            rows: fetchRows, runs: options.runs)

        for encryption in Encryption.allCases {
            let floor = try makeFloorTable(path("tracing-c-\(encryption)"), key: encryption.key)
            let plain = try await makeSwiftTable(path("tracing-off-\(encryption)"), key: encryption.key)
            let traced = try await makeSwiftTable(path("tracing-on-\(encryption)"), key: encryption.key)
            let counter = EventCounter()
            let token = try await traced.trace(counter.record)
            defer { token.cancel() }

            let inserts = try await measureInterleaved([
                Trial(name: "c", prepare: { try floor.execute(BenchSchema.deleteSQL) },
                      body: { try floor.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows) }),
                Trial(name: "off", prepare: { try await plain.execute(BenchSchema.deleteSQL) },
                      body: { try await insertRows(plain, count: rows) }),
                Trial(name: "on", prepare: { try await traced.execute(BenchSchema.deleteSQL) },
                      body: { try await insertRows(traced, count: rows) }),
            ], runs: options.runs)
            let events = counter.value
            // Warm-up and timed rounds, each a delete and `rows` inserts.
            guard events == (options.runs + 1) * (rows + 1) else {
                throw BenchError("the tracer saw \(events) events; expected \((options.runs + 1) * (rows + 1))")
            }

            for db in [plain, traced] {
                try await db.execute(BenchSchema.deleteSQL)
                try await insertRows(db, count: fetchRows)
            }
            try floor.execute(BenchSchema.deleteSQL)
            try floor.insertRows(BenchSchema.insertSQL, firstID: 1, count: fetchRows)
            let expected = FetchTotals(rows: fetchRows, checksum: BenchSchema.expectedChecksum(rows: fetchRows))
            func check(_ totals: FetchTotals, _ what: String) throws {
                guard totals == expected else {
                    throw BenchError("\(what) read \(totals.rows) rows with checksum \(totals.checksum)")
                }
            }
            let fetches = try await measureInterleaved([
                Trial(name: "c", body: { try check(floor.fetchByIndex(BenchSchema.selectSQL), "the C fetch") }),
                Trial(name: "off", body: { try check(await fetchByIndex(plain), "the untraced fetch") }),
                Trial(name: "on", body: { try check(await fetchByIndex(traced), "the traced fetch") }),
            ], runs: options.runs)
            await plain.close()
            await traced.close()

            insertOff[encryption] = CaseFigures(swift: inserts["off"]!, floor: inserts["c"]!)
            insertOn[encryption] = CaseFigures(swift: inserts["on"]!, floor: inserts["c"]!)
            fetchOff[encryption] = CaseFigures(swift: fetches["off"]!, floor: fetches["c"]!)
            fetchOn[encryption] = CaseFigures(swift: fetches["on"]!, floor: fetches["c"]!)
            insertOn.extra["\(encryption.rawValue).ratioToTracingOff"] =
                (inserts["on"]!.medianMilliseconds / inserts["off"]!.medianMilliseconds).rounded(places: 3)
            fetchOn.extra["\(encryption.rawValue).ratioToTracingOff"] =
                (fetches["on"]!.medianMilliseconds / fetches["off"]!.medianMilliseconds).rounded(places: 3)
        }
        return [insertOff, insertOn, fetchOff, fetchOn]
    }
}
