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
    let durations: [Duration]

    /// The median, in milliseconds (the mean of the two middle runs for an even count).
    var medianMilliseconds: Double {
        let sorted = durations.map(\.milliseconds).sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var milliseconds: [Double] { durations.map(\.milliseconds) }
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
    var durations: [String: [Duration]] = [:]
    for round in 0..<(warmups + runs) {
        for trial in trials {
            try await trial.prepare()
            let start = clock.now
            try await trial.body()
            let elapsed = clock.now - start
            try await trial.settle()
            if round >= warmups { durations[trial.name, default: []].append(elapsed) }
        }
    }
    return durations.mapValues(Samples.init(durations:))
}
