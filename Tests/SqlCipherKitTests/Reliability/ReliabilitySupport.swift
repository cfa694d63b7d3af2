import Foundation
import SqlCipherKit
import Synchronization

/// Settings shared by the reliability suites: short by default (CI), long with
/// `SQLCIPHERKIT_LONG_TESTS=1`, and seeded so that a failing run can be replayed with
/// `SQLCIPHERKIT_SEED=<printed seed>`.
enum Reliability {
    /// Whether the long versions run.
    static let isLong: Bool = {
        let value = ProcessInfo.processInfo.environment["SQLCIPHERKIT_LONG_TESTS"] ?? ""
        return !value.isEmpty && value != "0"
    }()

    /// `short` in the default run, `long` with `SQLCIPHERKIT_LONG_TESTS=1`.
    static func count(short: Int, long: Int) -> Int { isLong ? long : short }

    /// The base seed: `SQLCIPHERKIT_SEED` when set, else a fresh random one. Each scenario derives
    /// its own seed from it and its name, so scenarios do not disturb each other's sequences.
    static let baseSeed: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["SQLCIPHERKIT_SEED"], let seed = UInt64(text) {
            return seed
        }
        return UInt64.random(in: 1...UInt64(UInt32.max))
    }()

    /// A generator for one scenario; prints the seed so that a failure can be replayed.
    static func generator(for scenario: String) -> SeededGenerator {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in scenario.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        print("[reliability] \(scenario): SQLCIPHERKIT_SEED=\(baseSeed) (\(isLong ? "long" : "short") run)")
        return SeededGenerator(seed: baseSeed ^ hash)
    }

    /// "3.4.1" or "4.6.1": the loaded library's version, as the fixtures manifest spells it.
    static var libraryVersion: String {
        let version = (try? SqlCipherLibrary.shared.cipherVersion) ?? "unknown"
        return version.split(separator: " ").first.map(String.init) ?? version
    }
}

/// SplitMix64: small, fast and reproducible across platforms (unlike the system generator).
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// The figures of one scenario, written as one JSON line to the results file named by
/// `SQLCIPHERKIT_RELIABILITY_RESULTS` (scripts/reliability-report.sh sets it and turns the lines
/// into docs/reliability.md). Without the variable the figures are only printed.
struct ScenarioRecord: Codable, Sendable {
    var suite: String
    var scenario: String
    var library: String = Reliability.libraryVersion
    var mode: String = Reliability.isLong ? "long" : "short"
    var seed: UInt64 = Reliability.baseSeed
    /// Rounds run (kills, fault positions, files opened, tasks, ...).
    var rounds: Int = 0
    /// Faults injected, bytes flipped or kills sent.
    var faults: Int = 0
    /// Inputs tried (keys, paths, values, generated queries).
    var inputs: Int = 0
    /// Violations of the scenario's promise. A passing run records 0; the test fails otherwise.
    var failures: Int = 0
    /// Failures of a known issue (reported with `withKnownIssue`, see docs/reliability.md): the
    /// run passes, the figure shows how often the issue was hit.
    var knownIssues: Int = 0
    /// What was observed, in a few words (error kinds seen, how faults surfaced).
    var notes: String = ""

    init(suite: String, scenario: String) {
        self.suite = suite
        self.scenario = scenario
    }

    /// Prints the figures and appends them to the results file, if one is configured.
    func record() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(self) else { return }
        line.append(UInt8(ascii: "\n"))
        print("[reliability] " + String(decoding: line.dropLast(), as: UTF8.self))
        guard let path = ProcessInfo.processInfo.environment["SQLCIPHERKIT_RELIABILITY_RESULTS"], !path.isEmpty else {
            return
        }
        // One write(2) per line with O_APPEND: lines from tests running in parallel do not interleave.
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}

/// Counts observations by label, for the `notes` of a record ("keyFailed ×3, corrupt ×5").
struct Tally: Sendable {
    private(set) var counts: [String: Int] = [:]

    mutating func add(_ label: String, _ count: Int = 1) { counts[label, default: 0] += count }

    var summary: String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }
}

/// A short name for the case of an error, for tallies ("keyFailed", "sqlite(11)").
func errorKind(_ error: any Error) -> String {
    guard let error = error as? SqlCipherError else { return "untyped \(type(of: error))" }
    if case let .sqlite(code, _, _, _) = error { return "sqlite(\(code))" }
    if let label = Mirror(reflecting: error).children.first?.label { return label }
    switch error {
    case .emptyKey: return "emptyKey"
    case .notEncrypted: return "notEncrypted"
    case .databaseClosed: return "databaseClosed"
    case .connectionNotUsable: return "connectionNotUsable"
    default: return String(describing: error)
    }
}

/// The repository's root directory, found from this file's location.
func repositoryRoot(filePath: String = #filePath) -> URL {
    var url = URL(fileURLWithPath: filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
    }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
}

/// The bytes of a hex string, or nil when it is not hex.
func bytes(fromHex hex: String) -> Data? {
    var data = Data()
    var iterator = hex.utf8.makeIterator()
    while let high = iterator.next() {
        guard let low = iterator.next(), let h = hexValue(high), let l = hexValue(low) else { return nil }
        data.append(h << 4 | l)
    }
    return data
}

private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// The integrity problems of an open database, from ``Database/verifyIntegrity()``: SQLCipher's
/// page HMAC check on 4.x (after a WAL checkpoint) and SQLite's integrity_check. Throws when the
/// HMAC check did not run on an encrypted 4.x database, or claims to have run on 3.4.1.
func integrityProblems(_ db: Database) async throws -> [String] {
    let report = try await db.verifyIntegrity()
    let hmacRan = report.checksRun.contains(.cipherHMAC)
    if db.isEncrypted && hmacRan != isSQLCipher4() {
        throw ReliabilityViolation("verifyIntegrity ran \(report.checksRun), skipped \(report.skipped) on \(Reliability.libraryVersion)")
    }
    return report.problems
}
