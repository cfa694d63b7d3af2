import Foundation
import SqlCipherKit

extension Bench {
    /// Reading a large table row by row: a cursor inside `db.read` and a `db.stream` from outside,
    /// against the C floor's fetch of the same rows; the peak memory growth of each Swift pass;
    /// and how long a cancelled long query takes to stop.
    func runStreaming() async throws -> [WorkloadResult] {
        let rows = options.streamRows
        var cursor = WorkloadResult(
            name: "stream.cursor",
            description: "every row of a table of ten integer columns through conn.cursor inside db.read, "
                + "values by index; C: sqlite3_column_int64 into one array (extra: peak memory growth, "
                + "and that of db.query's whole [Row] for comparison)",
            rows: rows, runs: options.streamRuns)
        var stream = WorkloadResult(
            name: "stream.asyncSequence",
            description: "the same rows through for try await in db.stream (batches of 256), values by index; "
                + "C: as for the cursor",
            rows: rows, runs: options.streamRuns)
        var mainActor = WorkloadResult(
            name: "stream.mainActor",
            description: "the same for try await loop over db.stream, run on the main actor (as in top-level "
                + "code or a @MainActor model); extra: its median over that of the loop on the global executor "
                + "(stream.asyncSequence), target at most 1.2",
            rows: rows, runs: options.streamRuns)
        var cancel = WorkloadResult(
            name: "cancel.latency",
            description: "a query that runs for minutes, cancelled after 100 ms: the time from Task.cancel() "
                + "to the end of the call (extra: median and max in ms)",
            rows: nil, runs: options.runs)

        let file = path("stream")
        let db = try await makeSwiftTable(file, key: Encryption.encrypted.key)
        try await insertRows(db, count: rows)
        let floor = try FloorConnection(path: file, key: Encryption.encrypted.key)
        let expected = FetchTotals(rows: rows, checksum: BenchSchema.expectedChecksum(rows: rows))
        @Sendable func check(_ totals: FetchTotals, _ what: String) throws {
            guard totals == expected else {
                throw BenchError("\(what) read \(totals.rows) rows with checksum \(totals.checksum); expected \(expected)")
            }
        }

        // Memory first, before the C floor's array raises the process's footprint.
        cursor.extra["peakMemoryGrowthMiB"] = try await peakGrowth { try check(await streamByCursor(db), "the cursor") }
        stream.extra["peakMemoryGrowthMiB"] = try await peakGrowth { try check(await streamBySequence(db), "the stream") }
        // The same rows as one [Row]: what the streaming forms save, and proof that the sampling sees growth.
        cursor.extra["wholeResultPeakMemoryGrowthMiB"] = try await peakGrowth {
            try check(await fetchByIndex(db), "the whole-result fetch")
        }

        let floorTrial = Trial(body: { try check(floor.fetchByIndex(BenchSchema.selectSQL), "the C fetch") })
        let samples = try await measurePaired([
            Pair(name: "cursor", floor: floorTrial, swift: Trial(body: { try check(await streamByCursor(db), "the cursor") })),
            Pair(name: "stream", floor: floorTrial,
                 swift: Trial(body: { try check(await streamBySequence(db), "the stream") })),
            Pair(name: "mainActor", floor: floorTrial,
                 swift: Trial(body: { try check(await streamBySequenceOnMainActor(db), "the main-actor stream") })),
        ], runs: options.streamRuns)
        cursor.encrypted = CaseFigures(samples["cursor"]!)
        stream.encrypted = CaseFigures(samples["stream"]!)
        mainActor.encrypted = CaseFigures(samples["mainActor"]!)
        if let onMain = mainActor.encrypted?.swiftMedianMs, let detached = stream.encrypted?.swiftMedianMs, detached > 0 {
            mainActor.extra["ratioToGlobalExecutor"] = (onMain / detached).rounded(places: 3)
        }

        var latencies: [Double] = []
        for _ in 0..<options.runs {
            latencies.append(try await cancellationLatency(db))
        }
        latencies.sort()
        cancel.extra["medianMs"] = latencies[latencies.count / 2].rounded(places: 3)
        cancel.extra["maxMs"] = (latencies.last ?? 0).rounded(places: 3)
        await db.close()
        return [cursor, stream, mainActor, cancel]
    }

    /// Runs `body` once; returns how far the allocated bytes rose above their count at the start,
    /// in MiB (``peakMemoryRun(_:)``), or, where the C library does not count them, how far the
    /// resident set rose, from samples every 5 ms.
    private func peakGrowth(_ body: @escaping @Sendable () async throws -> Void) async throws -> Double {
        if let growth = try await peakMemoryRun(Trial(body: body)) {
            return (Double(growth) / 1_048_576).rounded(places: 1)
        }
        let before = residentBytes()
        let sampler = Task {
            var peak = before
            while !Task.isCancelled {
                peak = max(peak, residentBytes())
                try? await Task.sleep(for: .milliseconds(5))
            }
            return peak
        }
        try await body()
        let after = residentBytes()
        sampler.cancel()
        let peak = max(await sampler.value, after)
        return (Double(max(0, peak - before)) / 1_048_576).rounded(places: 1)
    }

    /// Milliseconds from cancelling a running long query to the end of the call.
    private func cancellationLatency(_ db: Database) async throws -> Double {
        let query = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 2000000000) SELECT sum(x) FROM c"
        let clock = ContinuousClock()
        let task = Task { () -> ContinuousClock.Instant in
            _ = try? await db.query(query)
            return clock.now
        }
        try await Task.sleep(for: .milliseconds(100))
        let cancelled = clock.now
        task.cancel()
        let ended = await task.value
        return (ended - cancelled).milliseconds
    }
}

/// Every row through a cursor, values by index.
func streamByCursor(_ db: Database) async throws -> FetchTotals {
    try await db.read { conn in
        let cursor = try conn.cursor(BenchSchema.selectSQL)
        var rows = 0
        var sum: Int64 = 0
        while let row = try cursor.next() {
            rows += 1
            for column in 0..<10 { sum &+= Int64(row.get(column, as: Int.self) ?? 0) }
        }
        return FetchTotals(rows: rows, checksum: sum)
    }
}

/// Every row through the async sequence, values by index, with the loop on `isolation` (the
/// caller's actor; none from a nonisolated caller, which runs it on the global executor).
func streamBySequence(_ db: Database, isolation: isolated (any Actor)? = #isolation) async throws -> FetchTotals {
    var rows = 0
    var sum: Int64 = 0
    for try await row in db.stream(BenchSchema.selectSQL) {
        rows += 1
        for column in 0..<10 { sum &+= Int64(row.get(column, as: Int.self) ?? 0) }
    }
    return FetchTotals(rows: rows, checksum: sum)
}

/// Every row through the async sequence, with the loop on the main actor: the iterator's
/// `next(isolation:)` keeps it there, so only each batch crosses to the database's executor.
@MainActor
func streamBySequenceOnMainActor(_ db: Database) async throws -> FetchTotals {
    try await streamBySequence(db)
}

/// The process's resident set size now (VmRSS of /proc/self/status), in bytes.
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kib = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kib * 1024
}
