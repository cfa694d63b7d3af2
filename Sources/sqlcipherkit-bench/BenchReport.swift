import Foundation

/// The figures of one variant (encrypted or unencrypted) of a workload.
struct CaseFigures: Encodable {
    /// SqlCipherKit's median, in milliseconds.
    let swiftMedianMs: Double
    /// The C floor's median, when the workload has a floor.
    let floorMedianMs: Double?
    /// SqlCipherKit's median divided by the floor's.
    let ratioToFloor: Double?
    let swiftRunsMs: [Double]
    let floorRunsMs: [Double]?
    /// The same medians in CPU time of the whole process (user + system), and their ratio.
    let swiftCpuMedianMs: Double
    let floorCpuMedianMs: Double?
    let cpuRatioToFloor: Double?

    init(swift: Samples, floor: Samples?) {
        swiftMedianMs = swift.medianMilliseconds.rounded(places: 3)
        swiftRunsMs = swift.milliseconds.map { $0.rounded(places: 3) }
        floorMedianMs = floor.map { $0.medianMilliseconds.rounded(places: 3) }
        floorRunsMs = floor.map { $0.milliseconds.map { $0.rounded(places: 3) } }
        if let floor, floor.medianMilliseconds > 0 {
            ratioToFloor = (swift.medianMilliseconds / floor.medianMilliseconds).rounded(places: 3)
        } else {
            ratioToFloor = nil
        }
        swiftCpuMedianMs = swift.cpuMedianMilliseconds.rounded(places: 3)
        floorCpuMedianMs = floor.map { $0.cpuMedianMilliseconds.rounded(places: 3) }
        if let floor, floor.cpuMedianMilliseconds > 0 {
            cpuRatioToFloor = (swift.cpuMedianMilliseconds / floor.cpuMedianMilliseconds).rounded(places: 3)
        } else {
            cpuRatioToFloor = nil
        }
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
    var status: String { measured <= limit ? "PASS" : "MISS" }

    private enum CodingKeys: String, CodingKey {
        case target, workload, variant, limit, unit, measured, status
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(target, forKey: .target)
        try container.encode(workload, forKey: .workload)
        try container.encode(variant, forKey: .variant)
        try container.encode(limit, forKey: .limit)
        try container.encode(unit, forKey: .unit)
        try container.encode(measured, forKey: .measured)
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
