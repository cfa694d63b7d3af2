import Foundation
import SqlCipherKit

/// One benchmark run: the options, the loaded library, and a scratch folder removed at the end.
struct Bench {
    let options: BenchOptions
    let library: SqlCipherLibrary
    let folder: URL

    init(options: BenchOptions) throws {
        self.options = options
        do {
            if let path = options.libraryPath {
                library = try SqlCipherLibrary.load(from: path)
            } else {
                library = try SqlCipherLibrary.shared
            }
        } catch {
            throw BenchError("cannot load SQLCipher: \(error)")
        }
        try FloorConnection.load()
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("sqlcipherkit-bench-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// A path in the scratch folder.
    func path(_ name: String) -> String {
        folder.appendingPathComponent(name + ".db").path
    }

    func removeFolder() {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs every workload and checks the targets.
    func run(progress: (String) -> Void) async throws -> BenchReport {
        var report = BenchReport(
            mode: options.quick ? "quick" : "full", build: Self.buildConfiguration,
            library: .init(path: library.path, cipherVersion: library.cipherVersion, sqliteVersion: library.sqliteVersion,
                           selectedBy: Self.librarySelection(options)),
            machine: MachineInfo.current())
        let families: [(String, () async throws -> [WorkloadResult])] = [
            ("insert", runInsert),
            ("fetch", runFetch),
            ("entity", runEntityWrites),
            ("entity", runEntitySets),
            ("open", runOpen),
            ("observers", runObservers),
            ("cache", runCache),
            ("streaming", runStreaming),
            ("pool", runPool),
            ("tracing", runTracing),
            ("rekey", runRekey),
            ("durability", runDurability),
            ("interpolation", runInterpolation),
            ("backup", runBackup),
            ("fts", runFullTextSearch),
        ]
        for (family, run) in families where options.runs(family) {
            progress(family)
            report.workloads += try await run()
        }
        report.machine.loadAverageAtEnd = MachineInfo.loadAverage()
        report.targets = Targets.evaluate(report.workloads)
        return report
    }

    static var buildConfiguration: String {
        #if DEBUG
        return "debug"
        #else
        return "release"
        #endif
    }

    private static func librarySelection(_ options: BenchOptions) -> String {
        if options.libraryPath != nil { return "--library" }
        if let value = ProcessInfo.processInfo.environment[SqlCipherLibrary.environmentVariable], !value.isEmpty {
            return SqlCipherLibrary.environmentVariable
        }
        return "discovery"
    }
}

/// What the report says about the machine.
enum MachineInfo {
    static func current() -> BenchReport.Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let cpu = cpuinfo.split(separator: "\n")
            .first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let os = release.split(separator: "\n")
            .first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            ?? ProcessInfo.processInfo.operatingSystemVersionString
        return BenchReport.Machine(
            cpu: cpu, cores: ProcessInfo.processInfo.activeProcessorCount, os: os,
            memoryGiB: (Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824).rounded(places: 1),
            loadAverageAtStart: loadAverage(), loadAverageAtEnd: nil)
    }

    /// The load averages from /proc/loadavg, or nil where there is none.
    static func loadAverage() -> [Double]? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        let values = text.split(separator: " ").prefix(3).compactMap { Double($0) }
        return values.count == 3 ? values : nil
    }
}
