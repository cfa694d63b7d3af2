import Foundation

/// The figures of one variant (encrypted or unencrypted) of a workload.
struct CaseFigures: Encodable {
    /// SqlCipherKit's median, in milliseconds.
    let swiftMedianMs: Double
    /// The C floor's median, when the workload has a floor.
    let floorMedianMs: Double?
    /// The median of the per-round ratios SqlCipherKit / floor, each from a Swift run and the
    /// floor run right before or after it (the paired method; docs/performance.md).
    let ratioToFloor: Double?
    /// The smallest and largest per-round ratio: the spread the machine gave this figure.
    let ratioMin: Double?
    let ratioMax: Double?
    /// Every round's ratio, in round order.
    let ratiosPerRun: [Double]?
    let swiftRunsMs: [Double]
    let floorRunsMs: [Double]?
    /// The medians in CPU time of the whole process (user + system), and the median of the
    /// per-round CPU ratios.
    let swiftCpuMedianMs: Double
    let floorCpuMedianMs: Double?
    let cpuRatioToFloor: Double?
    /// The largest rise of the process's resident set during one run over its value at the run's
    /// start (VmHWM), in MiB; nil where the kernel does not report it.
    let swiftPeakMiB: Double?
    let floorPeakMiB: Double?

    init(_ paired: PairedSamples) {
        let swift = paired.swift
        let floor = paired.floor
        swiftMedianMs = swift.medianMilliseconds.rounded(places: 3)
        swiftRunsMs = swift.milliseconds.map { $0.rounded(places: 3) }
        floorMedianMs = floor.map { $0.medianMilliseconds.rounded(places: 3) }
        floorRunsMs = floor.map { $0.milliseconds.map { $0.rounded(places: 3) } }
        let hasRatios = floor != nil && !paired.ratios.isEmpty
        ratioToFloor = hasRatios ? median(paired.ratios).rounded(places: 3) : nil
        ratioMin = hasRatios ? paired.ratios.min().map { $0.rounded(places: 3) } : nil
        ratioMax = hasRatios ? paired.ratios.max().map { $0.rounded(places: 3) } : nil
        ratiosPerRun = hasRatios ? paired.ratios.map { $0.rounded(places: 3) } : nil
        swiftCpuMedianMs = swift.cpuMedianMilliseconds.rounded(places: 3)
        floorCpuMedianMs = floor.map { $0.cpuMedianMilliseconds.rounded(places: 3) }
        cpuRatioToFloor = hasRatios ? median(paired.cpuRatios).rounded(places: 3) : nil
        swiftPeakMiB = swift.peakGrowthMiB
        floorPeakMiB = floor?.peakGrowthMiB
    }
}

/// How much slower the encrypted variant is than the unencrypted one (a ratio of medians).
struct EncryptionOverhead: Encodable {
    let swift: Double
    let floor: Double?
}

/// The results of one workload.
struct WorkloadResult: Encodable {
    /// A stable identifier, e.g. `insert` or `fetch.byName`.
    let name: String
    let description: String
    /// Rows written or read per run (nil for the opening workloads).
    let rows: Int?
    /// Timed runs per variant.
    let runs: Int
    var encrypted: CaseFigures?
    var unencrypted: CaseFigures?
    /// Further figures of the workload, e.g. the ratio to the same writes without observers.
    var extra: [String: Double] = [:]

    var encryptionOverhead: EncryptionOverhead? {
        guard let encrypted, let unencrypted, unencrypted.swiftMedianMs > 0 else { return nil }
        var floor: Double?
        if let encryptedFloor = encrypted.floorMedianMs, let plainFloor = unencrypted.floorMedianMs, plainFloor > 0 {
            floor = (encryptedFloor / plainFloor).rounded(places: 3)
        }
        return EncryptionOverhead(swift: (encrypted.swiftMedianMs / unencrypted.swiftMedianMs).rounded(places: 3),
                                  floor: floor)
    }

    init(name: String, description: String, rows: Int?, runs: Int) {
        self.name = name
        self.description = description
        self.rows = rows
        self.runs = runs
    }

    subscript(encryption: Encryption) -> CaseFigures? {
        get { encryption == .encrypted ? encrypted : unencrypted }
        set {
            if encryption == .encrypted { encrypted = newValue } else { unencrypted = newValue }
        }
    }

    private enum CodingKeys: String, CodingKey {
        case name, description, rows, runs, encrypted, unencrypted, encryptionOverhead, extra
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(description, forKey: .description)
        try container.encodeIfPresent(rows, forKey: .rows)
        try container.encode(runs, forKey: .runs)
        try container.encodeIfPresent(encrypted, forKey: .encrypted)
        try container.encodeIfPresent(unencrypted, forKey: .unencrypted)
        try container.encodeIfPresent(encryptionOverhead, forKey: .encryptionOverhead)
        if !extra.isEmpty { try container.encode(extra, forKey: .extra) }
    }
}

/// One target of the issue, checked against a measured figure.
struct TargetResult: Encodable {
    /// What is promised, e.g. `raw-SQL insert <= 1.3x the C floor`.
    let target: String
    let workload: String
    /// `encrypted` or `unencrypted`.
    let variant: String
    let limit: Double
    /// `x` (a ratio) or `ms`.
    let unit: String
    let measured: Double
    /// The smallest and largest per-round value behind `measured`, when it is a median of rounds.
    var spread: [Double]?
    var status: String { measured <= limit ? "PASS" : "MISS" }

    private enum CodingKeys: String, CodingKey {
        case target, workload, variant, limit, unit, measured, spread, status
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(target, forKey: .target)
        try container.encode(workload, forKey: .workload)
        try container.encode(variant, forKey: .variant)
        try container.encode(limit, forKey: .limit)
        try container.encode(unit, forKey: .unit)
        try container.encode(measured, forKey: .measured)
        try container.encodeIfPresent(spread, forKey: .spread)
        try container.encode(status, forKey: .status)
    }
}

/// Everything one run of the benchmark measured.
struct BenchReport: Encodable {
    struct Library: Encodable {
        let path: String
        let cipherVersion: String
        let sqliteVersion: String
        let selectedBy: String
    }

    struct Machine: Encodable {
        let cpu: String
        let cores: Int
        let os: String
        let memoryGiB: Double
        /// The 1-, 5- and 15-minute load averages when the run started and ended (Linux): other
        /// work on the machine slows both sides and blurs the ratios.
        let loadAverageAtStart: [Double]?
        var loadAverageAtEnd: [Double]?
    }

    let tool = "sqlcipherkit-bench"
    /// `full` or `quick`.
    let mode: String
    /// `release` or `debug`: targets only mean something for release builds.
    let build: String
    let library: Library
    var machine: Machine
    var workloads: [WorkloadResult] = []
    var targets: [TargetResult] = []
    /// Workloads this build could not run, and why.
    var missing: [String] = []
}

extension Double {
    func rounded(places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
