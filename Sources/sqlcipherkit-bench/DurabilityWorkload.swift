import SqlCipherKit

extension Bench {
    /// Durability against write speed: small transactions committed one by one on an encrypted
    /// database in WAL mode, with `synchronous = FULL` (the default: each commit is synced to
    /// disk) and with `NORMAL` (the `-wal` is synced only at checkpoints), both set through
    /// ``DatabaseConfiguration``. FULL is the floor each NORMAL run is divided by, run back to back
    /// in every round, so the ratio says what NORMAL saves on this machine's disk.
    func runDurability() async throws -> [WorkloadResult] {
        let commits = options.quick ? 50 : 500
        var result = WorkloadResult(
            name: "durability.normalOverFull",
            description: "\(commits) one-row transactions (db.execute(INSERT) each), encrypted, WAL; Swift: "
                + "synchronous = NORMAL, floor: synchronous = FULL (the default), both through DatabaseConfiguration",
            rows: commits, runs: options.runs)
        func open(_ mode: DatabaseConfiguration.Synchronous) async throws -> Database {
            var configuration = DatabaseConfiguration()
            configuration.synchronous = mode
            let db = try Database(path: path("durability-\(mode.rawValue)"), rawKey: BenchKey.rawKeyBytes,
                                  configuration: configuration)
            try await db.execute("CREATE TABLE log(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            return db
        }
        let full = try await open(.full)
        let normal = try await open(.normal)
        func trial(_ db: Database) -> Trial {
            Trial(prepare: { try await db.execute("DELETE FROM log") }, body: {
                for index in 0..<commits {
                    try await db.execute("INSERT INTO log(body) VALUES (?)", "entry \(index)")
                }
            })
        }
        let samples = try await measurePaired([Pair(name: "pair", floor: trial(full), swift: trial(normal))],
                                              runs: options.runs)
        let paired = samples["pair"]!
        result.encrypted = CaseFigures(paired)
        let fullMs = paired.floor?.medianMilliseconds ?? 0
        let normalMs = paired.swift.medianMilliseconds
        if fullMs > 0 { result.extra["full.commitsPerSecond"] = (Double(commits) / fullMs * 1000).rounded(places: 0) }
        if normalMs > 0 {
            result.extra["normal.commitsPerSecond"] = (Double(commits) / normalMs * 1000).rounded(places: 0)
        }
        for db in [full, normal] {
            let count = try await db.query("SELECT count(*) FROM log")[0].get(0, as: Int.self)
            guard count == commits else { throw BenchError("the durability pass left \(count ?? -1) rows, not \(commits)") }
            await db.close()
        }
        return [result]
    }
}
