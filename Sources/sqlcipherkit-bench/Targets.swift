/// The targets of issues 10 and 13 (ratios to the C floor, release build), checked against a
/// report. Each ratio is the median of the per-round paired ratios; the spread goes with it.
enum Targets {
    private struct Spec: Sendable {
        let target: String
        let workload: String
        let limit: Double
        let unit: String
        /// The measured value and its spread (smallest, largest), for one variant.
        let measure: @Sendable (WorkloadResult, Encryption) -> (Double, [Double]?)?
    }

    @Sendable private static func ratio(_ result: WorkloadResult, _ encryption: Encryption) -> (Double, [Double]?)? {
        guard let figures = result[encryption], let ratio = figures.ratioToFloor else { return nil }
        var spread: [Double]?
        if let low = figures.ratioMin, let high = figures.ratioMax { spread = [low, high] }
        return (ratio, spread)
    }

    /// A figure of `extra` named `<variant>.<key>`, with `<key>Min` and `<key>Max` as its spread.
    private static func extra(_ key: String) -> @Sendable (WorkloadResult, Encryption) -> (Double, [Double]?)? {
        { result, encryption in
            let name = "\(encryption.rawValue).\(key)"
            guard let value = result.extra[name] else { return nil }
            var spread: [Double]?
            if let low = result.extra[name + "Min"], let high = result.extra[name + "Max"] { spread = [low, high] }
            return (value, spread)
        }
    }

    private static let specs: [Spec] = [
        // Issue 13.
        Spec(target: "typed-statement insert <= 1.15x the C floor", workload: "insert.prepared", limit: 1.15, unit: "x",
             measure: ratio),
        Spec(target: "cursor fetch by index <= 1.1x the C floor", workload: "cursor.byIndex", limit: 1.1, unit: "x",
             measure: ratio),
        Spec(target: "cursor fetch by name <= 1.4x the C floor", workload: "cursor.byName", limit: 1.4, unit: "x",
             measure: ratio),
        Spec(target: "[Row] fetch by index <= 1.25x the C floor", workload: "fetch.byIndex", limit: 1.25, unit: "x",
             measure: ratio),
        Spec(target: "row-protocol entity fetch <= 1.3x the C floor", workload: "fetch.entity.row", limit: 1.3, unit: "x",
             measure: ratio),
        Spec(target: "Codable entity fetch <= 2.2x the C floor", workload: "fetch.entity", limit: 2.2, unit: "x",
             measure: ratio),
        Spec(target: "Codable entity save <= 1.5x the C floor", workload: "entity.save", limit: 1.5, unit: "x",
             measure: ratio),
        Spec(target: "row-protocol entity save <= 1.5x the C floor", workload: "entity.save.row", limit: 1.5, unit: "x",
             measure: ratio),
        Spec(target: "an entity of many sets saves in <= 5x JSONEncoder's text inserted", workload: "entity.save.sets",
             limit: 5, unit: "x", measure: ratio),
        Spec(target: "raw-key open <= 1.2x the C floor's open", workload: "open.rawKey", limit: 1.2, unit: "x",
             measure: ratio),
        Spec(target: "10 observers of other tables add <= 3% to writes", workload: "insert.observers.otherTables",
             limit: 1.03, unit: "x", measure: extra("ratioToNoObservers")),
        Spec(target: "encrypted <= 1.1x plaintext when the table fits the default cache", workload: "cache.packageDefault",
             limit: 1.1, unit: "x", measure: { result, encryption in
                 guard encryption == .encrypted, let value = result.extra["encryptedOverUnencrypted"] else { return nil }
                 var spread: [Double]?
                 if let low = result.extra["encryptedOverUnencryptedMin"],
                    let high = result.extra["encryptedOverUnencryptedMax"] { spread = [low, high] }
                 return (value, spread)
             }),
        // Issue 10's targets that issue 13 did not replace.
        Spec(target: "raw-SQL insert <= 1.3x the C floor", workload: "insert", limit: 1.3, unit: "x", measure: ratio),
        Spec(target: "[Row] fetch by name <= 2x the C floor", workload: "fetch.byName", limit: 2, unit: "x", measure: ratio),
        Spec(target: "opening with a raw key under 5 ms", workload: "open.rawKey", limit: 5, unit: "ms",
             measure: { result, encryption in result[encryption].map { ($0.swiftMedianMs, nil) } }),
        // Issue 15.
        Spec(target: "a pool with a passphrase and 4 readers opens in <= 1.2x one Database", workload: "pool.open",
             limit: 1.2, unit: "x", measure: { result, encryption in
                 guard encryption == .encrypted, let value = result.extra["ratioToDatabase"] else { return nil }
                 return (value, [result.extra["ratioToDatabaseMin"] ?? value, result.extra["ratioToDatabaseMax"] ?? value])
             }),
        Spec(target: "2 reading tasks: a pool does >= 1.7x the reads of one Database (as time <= 1/1.7)",
             workload: "pool.readThroughput", limit: 1 / 1.7, unit: "x", measure: { result, encryption in
                 guard encryption == .encrypted, let speedup = result.extra["speedup"], speedup > 0 else { return nil }
                 let low = result.extra["speedupMax"] ?? speedup, high = result.extra["speedupMin"] ?? speedup
                 return (1 / speedup, [1 / low, 1 / high])
             }),
        Spec(target: "SELECT 1 during a 2-second read on a pool under 5 ms", workload: "pool.latencyDuringLongRead",
             limit: 5, unit: "ms", measure: { result, encryption in
                 encryption == .encrypted ? result.extra["poolMaxMs"].map { ($0, nil) } : nil }),
    ]

    /// One result per target and variant that the report has figures for.
    static func evaluate(_ workloads: [WorkloadResult]) -> [TargetResult] {
        specs.flatMap { spec -> [TargetResult] in
            guard let result = workloads.first(where: { $0.name == spec.workload }) else { return [] }
            return Encryption.allCases.compactMap { encryption in
                spec.measure(result, encryption).map { value, spread in
                    var target = TargetResult(target: spec.target, workload: spec.workload, variant: encryption.rawValue,
                                              limit: spec.limit, unit: spec.unit, measured: value)
                    target.spread = spread
                    return target
                }
            }
        }
    }
}
