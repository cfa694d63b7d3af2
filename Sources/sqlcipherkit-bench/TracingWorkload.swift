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

            let floorInsert = Trial(prepare: { try floor.execute(BenchSchema.deleteSQL) },
                                    body: { try floor.insertRows(BenchSchema.insertSQL, firstID: 1, count: rows) })
            let inserts = try await measurePaired([
                Pair(name: "off", floor: floorInsert, swift: Trial(
                    prepare: { try await plain.execute(BenchSchema.deleteSQL) },
                    body: { try await insertRows(plain, count: rows) })),
                Pair(name: "on", floor: floorInsert, swift: Trial(
                    prepare: { try await traced.execute(BenchSchema.deleteSQL) },
                    body: { try await insertRows(traced, count: rows) })),
            ], runs: options.runs)
            let events = counter.value
            // Warm-up, timed and memory runs, each a delete and `rows` inserts: every one traced.
            guard events >= (options.runs + 1) * (rows + 1), events % (rows + 1) == 0 else {
                throw BenchError("the tracer saw \(events) events; expected a multiple of \(rows + 1), "
                    + "at least \((options.runs + 1) * (rows + 1))")
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
            let floorFetch = Trial(body: { try check(floor.fetchByIndex(BenchSchema.selectSQL), "the C fetch") })
            let fetches = try await measurePaired([
                Pair(name: "off", floor: floorFetch, swift: Trial(body: { try check(await fetchByIndex(plain), "the untraced fetch") })),
                Pair(name: "on", floor: floorFetch, swift: Trial(body: { try check(await fetchByIndex(traced), "the traced fetch") })),
            ], runs: options.runs)
            await plain.close()
            await traced.close()

            insertOff[encryption] = CaseFigures(inserts["off"]!)
            insertOn[encryption] = CaseFigures(inserts["on"]!)
            fetchOff[encryption] = CaseFigures(fetches["off"]!)
            fetchOn[encryption] = CaseFigures(fetches["on"]!)
            insertOn.extra["\(encryption.rawValue).ratioToTracingOff"] =
                (inserts["on"]!.swift.medianMilliseconds / inserts["off"]!.swift.medianMilliseconds).rounded(places: 3)
            fetchOn.extra["\(encryption.rawValue).ratioToTracingOff"] =
                (fetches["on"]!.swift.medianMilliseconds / fetches["off"]!.swift.medianMilliseconds).rounded(places: 3)
        }
        return [insertOff, insertOn, fetchOff, fetchOn]
    }
}
