import Foundation

/// One variant of a workload, run in turn with the other variants of the same workload.
///
/// `prepare` and `settle` run before and after each timed `body` and are not timed: they reset
/// data, or wait for observers to catch up so that one variant's aftermath never lands in the
/// next one's timing.
struct Trial {
    let name: String
    var prepare: () async throws -> Void = {}
    let body: () async throws -> Void
    var settle: () async throws -> Void = {}
}

/// The timed runs of one trial.
struct Samples {
    /// Wall-clock time of each run (ContinuousClock): what the targets are about.
    private(set) var durations: [Duration]
    /// CPU time the whole process used during each run (user + system, every thread): steadier
    /// than wall-clock time on a busy machine, since time spent waiting for a core is left out.
    var cpuDurations: [Duration] = []

    /// The median, in milliseconds (the mean of the two middle runs for an even count).
    var medianMilliseconds: Double {
        let sorted = durations.map(\.milliseconds).sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var milliseconds: [Double] { durations.map(\.milliseconds) }

    mutating func append(_ wall: Duration, cpu: Duration) {
        durations.append(wall)
        cpuDurations.append(cpu)
    }

    /// The median CPU time, in milliseconds.
    var cpuMedianMilliseconds: Double { Samples(durations: cpuDurations).medianMilliseconds }
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

/// Runs the trials round-robin, `runs` timed rounds after `warmups` untimed ones, so that slow
/// drifts of the machine (other processes, the page cache, frequency changes) reach every variant
/// alike. Returns the samples by trial name.
func measureInterleaved(_ trials: [Trial], runs: Int, warmups: Int = 1) async throws -> [String: Samples] {
    let clock = ContinuousClock()
    var samples: [String: Samples] = [:]
    for round in 0..<(warmups + runs) {
        for trial in trials {
            try await trial.prepare()
            let cpuStart = processCPUTime()
            let start = clock.now
            try await trial.body()
            let elapsed = clock.now - start
            let cpu = processCPUTime() - cpuStart
            try await trial.settle()
            if round >= warmups {
                samples[trial.name, default: Samples(durations: [])].append(elapsed, cpu: cpu)
            }
        }
    }
    return samples
}
