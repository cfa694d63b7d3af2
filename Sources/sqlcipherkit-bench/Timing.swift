import CSqlCipherBenchFloor
import Foundation
import Synchronization

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
    /// How far the allocated bytes rose during the memory run, one untimed run after the timed
    /// ones (``peakMemoryRun(_:)``).
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

/// One timed run of a trial.
struct TimedRun {
    let wall: Duration
    let cpu: Duration
    let peakGrowth: Int?
}

/// Runs `trial` once: prepares it, times its body (wall clock, CPU), settles it.
func timedRun(_ trial: Trial) async throws -> TimedRun {
    let clock = ContinuousClock()
    try await trial.prepare()
    let cpuStart = processCPUTime()
    let start = clock.now
    try await trial.body()
    let elapsed = clock.now - start
    let cpu = processCPUTime() - cpuStart
    try await trial.settle()
    return TimedRun(wall: elapsed, cpu: cpu, peakGrowth: nil)
}

/// Runs `trial` once, untimed, and returns how far the bytes the C allocator has handed out
/// (``scbf_heap_in_use()``: Swift's objects and arrays, SQLite's page cache and buffers, the C
/// floor's array) rose during its body above their count at the start; nil where the C library
/// does not report it.
///
/// Apart from the timed runs, so that measuring costs them nothing: a thread of its own reads the
/// count every 0.2 ms while the body runs. Allocated bytes rather than the resident set, which
/// the allocator's reuse of freed pages makes depend on what ran before.
func peakMemoryRun(_ trial: Trial) async throws -> Int? {
    try await trial.prepare()
    let before = scbf_heap_in_use()
    guard before >= 0 else {
        try await trial.body()
        try await trial.settle()
        return nil
    }
    let sampler = HeapSampler()
    heapProbePeak.store(0, ordering: .relaxed)
    sampler.start()
    try await trial.body()
    let probed = heapProbePeak.exchange(-1, ordering: .relaxed)
    let peak = max(sampler.stop(), probed, Int(scbf_heap_in_use()))
    try await trial.settle()
    return max(0, peak - Int(before))
}

/// The largest count ``probeHeap()`` read during a memory run; -1 outside one.
private let heapProbePeak = Atomic<Int>(-1)

/// Reads the allocator's count now, when a memory run is under way (a relaxed load otherwise).
///
/// The sampling thread alone missed a `[Row]` result on a loaded machine: the result lived a few
/// milliseconds, and the thread was not scheduled in them. A workload calls this where what it
/// holds is largest (a whole result, before it is released), so that the peak it reports does
/// not depend on the scheduler.
@inline(__always)
func probeHeap() {
    guard heapProbePeak.load(ordering: .relaxed) >= 0 else { return }
    let now = Int(scbf_heap_in_use())
    var seen = heapProbePeak.load(ordering: .relaxed)
    while seen >= 0 && now > seen {
        let (exchanged, original) = heapProbePeak.compareExchange(expected: seen, desired: now, ordering: .relaxed)
        if exchanged { break }
        seen = original
    }
}

/// Samples ``scbf_heap_in_use()`` on a thread of its own (not the cooperative pool, which the
/// measured work may occupy) and keeps the largest value.
final class HeapSampler: @unchecked Sendable {
    // Written by the sampling thread, read after it stopped (the lock orders both).
    private let lock = NSLock()
    private var running = true
    private var largest = 0
    private let done = DispatchSemaphore(value: 0)

    func start() {
        let thread = Thread { [self] in
            while true {
                let value = Int(scbf_heap_in_use())
                lock.lock()
                largest = max(largest, value)
                let keepGoing = running
                lock.unlock()
                if !keepGoing { break }
                usleep(200)
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops sampling and returns the largest count seen, in bytes.
    func stop() -> Int {
        lock.lock()
        running = false
        lock.unlock()
        done.wait()
        lock.lock()
        defer { lock.unlock() }
        return largest
    }
}

/// Times every pair `runs` times after `warmups` untimed rounds, then runs each side once more,
/// untimed, for its memory (``peakMemoryRun(_:)``). In each round each pair's two
/// trials run back to back, the floor first in even rounds and the Swift trial first in odd ones,
/// so that both see the same moment of a busy machine and neither always inherits the other's
/// aftermath; each round yields one Swift/floor ratio per pair. Pairs take turns within a
/// round, so that slow drifts (other processes, the page cache, frequency changes) reach all.
func measurePaired(_ pairs: [Pair], runs: Int, warmups: Int = 1) async throws -> [String: PairedSamples] {
    var samples: [String: PairedSamples] = [:]
    var floorGrowth: [String: Int] = [:]
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
            if round == warmups + runs - 1 {
                // After the last timed round: each side's memory, in a run of its own.
                if let growth = try await peakMemoryRun(pair.swift) { entry.swift.peakGrowth.append(growth) }
                if let floor = pair.floor, let growth = try await peakMemoryRun(floor) { floorGrowth[pair.name] = growth }
            }
            entry.swift.append(swiftRun)
            if let floorRun {
                var floor = entry.floor ?? Samples(durations: [])
                floor.append(floorRun)
                if let growth = floorGrowth[pair.name] { floor.peakGrowth.append(growth) }
                entry.floor = floor
                entry.ratios.append(swiftRun.wall.milliseconds / max(floorRun.wall.milliseconds, 1e-9))
                entry.cpuRatios.append(swiftRun.cpu.milliseconds / max(floorRun.cpu.milliseconds, 1e-9))
            }
            samples[pair.name] = entry
        }
    }
    return samples
}
