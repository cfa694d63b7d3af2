import Foundation
import SqlCipherKit
import Synchronization

extension Bench {
    /// Hot backup of a live database: a file of about 100 MB (10 MB with `--quick`) copied by
    /// `backup(to:key:)` while a writer commits one row every 10 ms, on a `DatabasePool` (one
    /// reader's snapshot) and on a `Database` (steps between the writer's calls). The floor is a
    /// plain copy of the same file (`FileManager.copyItem`), run back to back with each backup;
    /// the extra figures are the writer's worst and median commit latency during the backups.
    func runBackup() async throws -> [WorkloadResult] {
        let megabytes = options.quick ? 10 : 100
        let source = path("backup-source")
        let rows = megabytes * 256  // 4 KiB per row
        do {
            let db = try Database(path: source, rawKey: BenchKey.rawKeyBytes)
            try await db.execute("CREATE TABLE blobs(id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
            try await db.execute("CREATE TABLE log(id INTEGER PRIMARY KEY, at REAL NOT NULL)")
            try await db.transaction { conn in
                let insert = try conn.prepare("INSERT INTO blobs(body) VALUES (randomblob(4000))")
                for _ in 0..<rows { try insert.execute() }
            }
            await db.close()
        }
        let copies = path("backup-copies")
        try? FileManager.default.removeItem(atPath: copies)
        try FileManager.default.createDirectory(atPath: copies, withIntermediateDirectories: true)
        let counter = Atomic<Int>(0)
        func target() -> String { copies + "/copy-\(counter.add(1, ordering: .relaxed).newValue).db" }
        let plainCopy = Trial(body: { try FileManager.default.copyItem(atPath: source, toPath: target()) })

        var results: [WorkloadResult] = []
        for kind in ["pool", "database"] {
            let access: any DatabaseAccess = kind == "pool"
                ? try DatabasePool(path: source, rawKey: BenchKey.rawKeyBytes)
                : try Database(path: source, rawKey: BenchKey.rawKeyBytes)
            let latencies = Mutex<[Double]>([])
            let writing = Atomic<Bool>(true)
            let writer = Task {
                while writing.load(ordering: .relaxed) {
                    let start = ContinuousClock.now
                    try await access.execute("INSERT INTO log(at) VALUES (?)", Date().timeIntervalSince1970)
                    let elapsed = ContinuousClock.now - start
                    latencies.withLock { $0.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000) }
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            let backup = Trial(body: {
                try await access.backup(to: target(), key: .rawKey(BenchKey.rawKeyBytes), pagesPerStep: 256, progress: nil)
            })
            let samples = try await measurePaired([Pair(name: kind, floor: plainCopy, swift: backup)], runs: options.runs)
            writing.store(false, ordering: .relaxed)
            try await writer.value
            await access.close()
            var result = WorkloadResult(
                name: "backup.\(kind)",
                description: "backup(to:key:) of a \(megabytes) MB encrypted database on a "
                    + (kind == "pool" ? "DatabasePool" : "Database")
                    + " while a writer commits every 10 ms (its latency is taken over the whole run); floor: FileManager.copyItem of the same file",
                rows: rows, runs: options.runs)
            result.encrypted = CaseFigures(samples[kind]!)
            let seen = latencies.withLock { $0.sorted() }
            if let worst = seen.last { result.extra["writer.worstCommitMs"] = worst.rounded(places: 2) }
            if !seen.isEmpty { result.extra["writer.medianCommitMs"] = seen[seen.count / 2].rounded(places: 2) }
            result.extra["writer.commits"] = Double(seen.count)
            results.append(result)
            try? FileManager.default.removeItem(atPath: copies)
            try FileManager.default.createDirectory(atPath: copies, withIntermediateDirectories: true)
        }
        return results
    }
}
