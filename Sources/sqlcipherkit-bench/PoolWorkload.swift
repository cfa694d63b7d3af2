import Dispatch
import Foundation
import SqlCipherKit

extension Bench {
    /// `DatabasePool` against `Database`, in the same run: opening with a passphrase and reading on
    /// four readers at once, read throughput of two tasks, the latency of a small read while a
    /// long one runs, and reads while a write transaction holds the writer.
    func runPool() async throws -> [WorkloadResult] {
        let file = path("pool")
        let setup = try Database(path: file, key: BenchKey.passphraseText)
        try await setup.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, a INTEGER, b TEXT)")
        let rows = options.quick ? 2_000 : 20_000
        try await setup.transaction { conn in
            for index in 0..<rows { try conn.execute("INSERT INTO items(a, b) VALUES (?, ?)", index, "row \(index)") }
        }
        await setup.close()
        return [try await poolOpen(file), try await poolThroughput(file, rows: rows),
                try await poolLatency(file), try await poolReadsDuringWrite(file),
                try await externalChangeLatency(file)]
    }

    /// How long a live query of a `Database`, and of a pool, takes to show a row committed by
    /// another connection (which SQLite's hooks do not report; the watch of `PRAGMA data_version`
    /// does). Design bound: one check interval (100 ms) plus one fetch.
    private func externalChangeLatency(_ file: String) async throws -> WorkloadResult {
        let count = LiveRequest(placeholder: -1) { conn in
            try conn.query("SELECT count(*) FROM items")[0].get(0, as: Int.self) ?? -1
        }
        let other = try Database(path: file, key: BenchKey.passphraseText)
        func latencies(_ observed: some DatabaseAccess) async throws -> [Double] {
            var iterator = observed.values(of: count).makeAsyncIterator()
            guard var last = try await iterator.next() else { throw BenchError("no first value") }
            var samples: [Double] = []
            for _ in 0..<(options.quick ? 3 : 10) {
                // Between the watch's checks, as a write from elsewhere would fall.
                try await Task.sleep(for: .milliseconds(Int.random(in: 10...90)))
                try await other.execute("INSERT INTO items(a, b) VALUES (0, 'external')")
                let start = ContinuousClock.now
                guard let value = try await iterator.next(), value == last + 1 else { throw BenchError("wrong value") }
                samples.append(milliseconds(ContinuousClock.now - start))
                last = value
            }
            return samples
        }
        let db = try Database(path: file, key: BenchKey.passphraseText)
        let dbSamples = try await latencies(db)
        await db.close()
        let pool = try DatabasePool(path: file, key: BenchKey.passphraseText)
        let poolSamples = try await latencies(pool)
        await pool.close()
        await other.close()
        var result = WorkloadResult(
            name: "live.externalChange", description: "a live count sees a row committed by another connection "
                + "(time from that commit to the new value)", rows: nil, runs: dbSamples.count)
        result.extra["databaseMedianMs"] = median(dbSamples)
        result.extra["databaseMaxMs"] = dbSamples.max() ?? 0
        result.extra["poolMedianMs"] = median(poolSamples)
        result.extra["poolMaxMs"] = poolSamples.max() ?? 0
        return result
    }

    /// Pool open with a passphrase plus one read on each of four readers at once, over one
    /// `Database` open with the same passphrase plus one read (target <= 1.2x).
    private func poolOpen(_ file: String) async throws -> WorkloadResult {
        var database: [Double] = []
        var pool: [Double] = []
        for _ in 0..<options.passphraseRuns {
            let dbStart = ContinuousClock.now
            let db = try Database(path: file, key: BenchKey.passphraseText)
            _ = try await db.query("SELECT count(*) FROM items")
            database.append(milliseconds(ContinuousClock.now - dbStart))
            await db.close()

            let poolStart = ContinuousClock.now
            let opened = try DatabasePool(path: file, key: BenchKey.passphraseText)
            try await readOnFourReaders(opened)
            pool.append(milliseconds(ContinuousClock.now - poolStart))
            guard opened.openReaderCount == 4 else { throw BenchError("the pool opened \(opened.openReaderCount) readers, not 4") }
            await opened.close()
        }
        var result = WorkloadResult(
            name: "pool.open", description: "DatabasePool(path:key:) + one read on each of 4 readers at once, "
                + "over Database(path:key:) + one read (same passphrase, default KDF)", rows: nil, runs: pool.count)
        // Paired per run (the Database and the pool opened back to back), like the floor ratios.
        let ratios = zip(pool, database).map { $0 / $1 }
        result.extra["databaseMedianMs"] = median(database)
        result.extra["poolMedianMs"] = median(pool)
        result.extra["ratioToDatabase"] = median(ratios)
        result.extra["ratioToDatabaseMin"] = ratios.min() ?? 0
        result.extra["ratioToDatabaseMax"] = ratios.max() ?? 0
        return result
    }

    /// Four reads that overlap: each waits until all four are running.
    private func readOnFourReaders(_ pool: DatabasePool) async throws {
        let started = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await pool.read { conn in
                        _ = try conn.query("SELECT count(*) FROM items")
                        started.increment()
                        let deadline = Date().addingTimeInterval(10)
                        while started.value < 4 && Date() < deadline { usleep(100) }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Two tasks each running the same read queries, against one `Database` and against a pool
    /// (target: the pool >= 1.7x the reads per second on 2 cores).
    private func poolThroughput(_ file: String, rows: Int) async throws -> WorkloadResult {
        let queries = options.quick ? 20 : 100
        func twoTasks(_ access: some DatabaseAccess) async throws -> Double {
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        for _ in 0..<queries {
                            let sum = try await access.query("SELECT sum(a), count(b) FROM items WHERE b LIKE 'row%'")
                            guard sum.count == 1 else { throw BenchError("no sum") }
                        }
                    }
                }
                try await group.waitForAll()
            }
            return milliseconds(ContinuousClock.now - start)
        }
        let db = try Database(path: file, key: BenchKey.passphraseText)
        let pool = try DatabasePool(path: file, key: BenchKey.passphraseText)
        _ = try await twoTasks(db)
        _ = try await twoTasks(pool)
        var database: [Double] = []
        var pooled: [Double] = []
        for _ in 0..<max(3, options.runs / 2) {
            database.append(try await twoTasks(db))
            pooled.append(try await twoTasks(pool))
        }
        await db.close()
        await pool.close()
        var result = WorkloadResult(
            name: "pool.readThroughput", description: "2 tasks x \(queries) aggregate reads of \(rows) rows, "
                + "one Database against a pool", rows: rows, runs: pooled.count)
        let speedups = zip(database, pooled).map { $0 / $1 }
        result.extra["databaseMedianMs"] = median(database)
        result.extra["poolMedianMs"] = median(pooled)
        result.extra["speedup"] = median(speedups)
        result.extra["speedupMin"] = speedups.min() ?? 0
        result.extra["speedupMax"] = speedups.max() ?? 0
        return result
    }

    /// `SELECT 1` while another task runs a read of about two seconds (target: under 5 ms on a pool).
    private func poolLatency(_ file: String) async throws -> WorkloadResult {
        let longRead: @Sendable (borrowing Connection) throws -> Void = { conn in
            let deadline = Date().addingTimeInterval(2)
            while Date() < deadline { _ = try conn.query("SELECT sum(a) FROM items") }
        }
        func latency(_ access: some DatabaseAccess) async throws -> [Double] {
            let long = Task { try await access.read(longRead) }
            try await Task.sleep(for: .milliseconds(200))
            var samples: [Double] = []
            for _ in 0..<5 {
                let start = ContinuousClock.now
                _ = try await access.query("SELECT 1")
                samples.append(milliseconds(ContinuousClock.now - start))
                try await Task.sleep(for: .milliseconds(100))
            }
            try await long.value
            return samples
        }
        let pool = try DatabasePool(path: file, key: BenchKey.passphraseText)
        let poolSamples = try await latency(pool)
        await pool.close()
        let db = try Database(path: file, key: BenchKey.passphraseText)
        let dbSamples = try await latency(db)
        await db.close()
        var result = WorkloadResult(
            name: "pool.latencyDuringLongRead", description: "SELECT 1 while another task runs a 2-second read",
            rows: nil, runs: poolSamples.count)
        result.extra["poolMedianMs"] = median(poolSamples)
        result.extra["poolMaxMs"] = poolSamples.max() ?? 0
        // The first sample on a Database waits for the whole long read; the later ones do not.
        result.extra["databaseMaxMs"] = dbSamples.max() ?? 0
        return result
    }

    /// Reads completed while a write transaction holds the writer for one second.
    private func poolReadsDuringWrite(_ file: String) async throws -> WorkloadResult {
        let pool = try DatabasePool(path: file, key: BenchKey.passphraseText)
        let write = Task {
            try await pool.transaction { conn in
                try conn.execute("UPDATE items SET a = a + 1 WHERE id = 1")
                usleep(1_000_000)
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        var reads = 0
        var slowest = 0.0
        let end = ContinuousClock.now + .milliseconds(800)
        while ContinuousClock.now < end {
            let start = ContinuousClock.now
            _ = try await pool.query("SELECT a FROM items WHERE id = 1")
            slowest = max(slowest, milliseconds(ContinuousClock.now - start))
            reads += 1
        }
        try await write.value
        await pool.close()
        var result = WorkloadResult(
            name: "pool.readsDuringWrite", description: "reads on a pool during the 800 ms of a 1-second write transaction",
            rows: nil, runs: 1)
        result.extra["reads"] = Double(reads)
        result.extra["slowestReadMs"] = slowest
        return result
    }
}

/// A counter shared by the tasks of one measurement.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

private func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}
