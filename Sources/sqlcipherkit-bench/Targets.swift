/// The targets (ratios to the C floor, release build), checked against a report.
enum Targets {
    private struct Spec: Sendable {
        let target: String
        let workload: String
        let limit: Double
        let unit: String
        let measure: @Sendable (WorkloadResult, Encryption) -> Double?
    }

    @Sendable private static func ratio(_ result: WorkloadResult, _ encryption: Encryption) -> Double? {
        result[encryption]?.ratioToFloor
    }

    private static let specs: [Spec] = [
        Spec(target: "raw-SQL insert <= 1.3x the C floor", workload: "insert", limit: 1.3, unit: "x", measure: ratio),
        Spec(target: "fetch by index <= 1.3x the C floor", workload: "fetch.byIndex", limit: 1.3, unit: "x",
             measure: ratio),
        Spec(target: "fetch by name <= 2x the C floor", workload: "fetch.byName", limit: 2, unit: "x", measure: ratio),
        Spec(target: "Codable entity fetch <= 3x the C floor", workload: "fetch.entity", limit: 3, unit: "x",
             measure: ratio),
        Spec(target: "entity save <= 3x the C floor", workload: "entity.save", limit: 3, unit: "x", measure: ratio),
        Spec(target: "opening with a raw key under 5 ms", workload: "open.rawKey", limit: 5, unit: "ms",
             measure: { result, encryption in result[encryption]?.swiftMedianMs }),
        Spec(target: "10 observers of other tables add <= 5% to writes", workload: "insert.observers.otherTables",
             limit: 1.05, unit: "x",
             measure: { result, encryption in result.extra["\(encryption.rawValue).ratioToNoObservers"] }),
        Spec(target: "a pool with a passphrase and 4 readers opens in <= 1.2x one Database", workload: "pool.open",
             limit: 1.2, unit: "x", measure: { result, encryption in
                 encryption == .encrypted ? result.extra["ratioToDatabase"] : nil }),
        Spec(target: "2 reading tasks: a pool does >= 1.7x the reads of one Database (as time <= 1/1.7)",
             workload: "pool.readThroughput", limit: 1 / 1.7, unit: "x", measure: { result, encryption in
                 encryption == .encrypted ? result.extra["speedup"].map { 1 / $0 } : nil }),
        Spec(target: "SELECT 1 during a 2-second read on a pool under 5 ms", workload: "pool.latencyDuringLongRead",
             limit: 5, unit: "ms", measure: { result, encryption in
                 encryption == .encrypted ? result.extra["poolMaxMs"] : nil }),
    ]

    /// One result per target and variant that the report has figures for.
    static func evaluate(_ workloads: [WorkloadResult]) -> [TargetResult] {
        specs.flatMap { spec -> [TargetResult] in
            guard let result = workloads.first(where: { $0.name == spec.workload }) else { return [] }
            return Encryption.allCases.compactMap { encryption in
                spec.measure(result, encryption).map {
                    TargetResult(target: spec.target, workload: spec.workload, variant: encryption.rawValue,
                                 limit: spec.limit, unit: spec.unit, measured: $0)
                }
            }
        }
    }
}
