import Foundation

/// One timed piece of work: a Swift workload or its C floor.
///
/// `prepare` and `settle` run before and after each timed `body` and are not timed: they reset
/// data, or wait for observers to catch up so that one trial's aftermath never lands in the next
/// one's timing.
struct Trial {
    var prepare: () async throws -> Void = {}
    let body: () async throws -> Void
    var settle: () async throws -> Void = {}
}

/// A Swift trial and the floor it is divided by, timed back to back in every round.
struct Pair {
    let name: String
    /// The C floor (nil for a figure without one, such as the page-cache rows).
    var floor: Trial?
    let swift: Trial
}

/// The timed runs of one trial.
struct Samples {
    /// Wall-clock time of each run (ContinuousClock): what the targets are about.
    private(set) var durations: [Duration]
    /// CPU time the whole process used during each run (user + system, every thread): steadier
    /// than wall-clock time on a busy machine, since time spent waiting for a core is left out.
    var cpuDurations: [Duration] = []
    /// How far the resident set rose above its value at the start of each run (Linux), in bytes.
    var peakGrowth: [Int] = []

    /// The median, in milliseconds (the mean of the two middle runs for an even count).
    var medianMilliseconds: Double { median(durations.map(\.milliseconds)) }

    var milliseconds: [Double] { durations.map(\.milliseconds) }

    mutating func append(_ run: TimedRun) {
        durations.append(run.wall)
        cpuDurations.append(run.cpu)
        if let peak = run.peakGrowth { peakGrowth.append(peak) }
    }

    /// The median CPU time, in milliseconds.
    var cpuMedianMilliseconds: Double { median(cpuDurations.map(\.milliseconds)) }

    /// The largest peak growth of any run, in MiB; nil where the kernel does not report it.
    var peakGrowthMiB: Double? {
        peakGrowth.max().map { (Double($0) / 1_048_576).rounded(places: 1) }
    }
}

/// A pair's runs: each side's samples and the ratio of every round's Swift run to the floor run
/// that ran right before or after it.
struct PairedSamples {
    var swift = Samples(durations: [])
    var floor: Samples?
    /// Swift / floor, one per round, wall-clock.
    var ratios: [Double] = []
    /// The same in CPU time.
    var cpuRatios: [Double] = []
}

/// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The CPU time this process has used so far, every thread, user and system
/// (https://man7.org/linux/man-pages/man2/getrusage.2.html).
func processCPUTime() -> Duration {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func duration(_ time: timeval) -> Duration {
        .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec))
    }
    return duration(usage.ru_utime) + duration(usage.ru_stime)
}

extension Duration {
    var milliseconds: Double {
        let parts = components
        return Double(parts.seconds) * 1_000 + Double(parts.attoseconds) / 1e15
    }
}

/// The process's peak resident set, as the kernel tracks it: `VmHWM` of /proc/self/status, which
/// writing `5` to /proc/self/clear_refs resets to the current resident set (Linux 4.0+,
/// https://man7.org/linux/man-pages/man5/proc_pid_clear_refs.5.html). Exact and free of sampling,
/// unlike polling the resident set from another thread.
enum PeakMemory {
    /// Resets the peak to the current resident set and returns that, in bytes; nil when the
    /// kernel does not offer it.
    ///
    /// First hands the allocator's free pages back to the kernel (`malloc_trim`): memory freed
    /// by an earlier run stays resident otherwise, and a run that reuses it would show no growth.
    static func reset() -> Int? {
        if let trim = mallocTrim { _ = trim(0) }
        guard let file = fopen("/proc/self/clear_refs", "w") else { return nil }
        let written = fputs("5", file)
        fclose(file)
        guard written >= 0 else { return nil }
        return status("VmRSS:")
    }

    /// glibc's `malloc_trim`, found at run time (its header is not part of the Glibc module).
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// The peak resident set since the last ``reset()``, in bytes.
    static func peak() -> Int? {
        status("VmHWM:")
    }

    private static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
              let kib = Int(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kib * 1024
    }
}

/// One timed run of a trial.
struct TimedRun {
    let wall: Duration
    let cpu: Duration
    let peakGrowth: Int?
}

/// Runs `trial` once: prepares it, times its body (wall clock, CPU, peak memory growth), settles it.
func timedRun(_ trial: Trial) async throws -> TimedRun {
    let clock = ContinuousClock()
    try await trial.prepare()
    let before = PeakMemory.reset()
    let cpuStart = processCPUTime()
    let start = clock.now
    try await trial.body()
    let elapsed = clock.now - start
    let cpu = processCPUTime() - cpuStart
    let peak = PeakMemory.peak()
    try await trial.settle()
    var growth: Int?
    if let before, let peak { growth = max(0, peak - before) }
    return TimedRun(wall: elapsed, cpu: cpu, peakGrowth: growth)
}

/// Times every pair `runs` times after `warmups` untimed rounds. In each round each pair's two
/// trials run back to back, the floor first in even rounds and the Swift trial first in odd ones,
/// so that both see the same moment of a busy machine and neither always inherits the other's
/// aftermath; each round yields one Swift/floor ratio per pair. Pairs take turns within a
/// round, so that slow drifts (other processes, the page cache, frequency changes) reach all.
func measurePaired(_ pairs: [Pair], runs: Int, warmups: Int = 1) async throws -> [String: PairedSamples] {
    var samples: [String: PairedSamples] = [:]
    for round in 0..<(warmups + runs) {
        for pair in pairs {
            var swiftRun: TimedRun
            var floorRun: TimedRun?
            if round % 2 == 0 {
                if let floor = pair.floor { floorRun = try await timedRun(floor) }
                swiftRun = try await timedRun(pair.swift)
            } else {
                swiftRun = try await timedRun(pair.swift)
                if let floor = pair.floor { floorRun = try await timedRun(floor) }
            }
            guard round >= warmups else { continue }
            var entry = samples[pair.name] ?? PairedSamples()
            entry.swift.append(swiftRun)
            if let floorRun {
                var floor = entry.floor ?? Samples(durations: [])
                floor.append(floorRun)
                entry.floor = floor
                entry.ratios.append(swiftRun.wall.milliseconds / max(floorRun.wall.milliseconds, 1e-9))
                entry.cpuRatios.append(swiftRun.cpu.milliseconds / max(floorRun.cpu.milliseconds, 1e-9))
            }
            samples[pair.name] = entry
        }
    }
    return samples
}
