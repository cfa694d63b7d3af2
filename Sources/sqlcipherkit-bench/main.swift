import Dispatch
import Foundation

// sqlcipherkit-bench: SqlCipherKit against the same loops in C on the same loaded SQLCipher
// library. See BenchOptions.usage and docs/performance.md.
//
// The top level does not await: the work runs in a task while the main thread runs its run loop
// until a semaphore is signalled. An async main parks the main thread in libdispatch's signal
// wait, which valgrind (callgrind, the profiler docs/performance.md uses) cannot run.

let options: BenchOptions
do {
    options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch let error as BenchError where error.isUsage {
    print(error.description)
    exit(0)
} catch {
    FileHandle.standardError.write(Data("sqlcipherkit-bench: \(error)\n".utf8))
    exit(2)
}

/// The outcome of the benchmark task, handed to the main thread.
final class Outcome: @unchecked Sendable {
    // Written by the task before it signals, read by the main thread after the wait.
    var output: String?
    var failure: String?
}

let outcome = Outcome()
let finished = DispatchSemaphore(value: 0)
// Detached: a task started here would inherit the main actor, whose thread is about to wait.
Task.detached { [options] in
    do {
        let bench = try Bench(options: options)
        defer { bench.removeFolder() }
        let report = try await bench.run { stage in
            // Progress goes to stderr so that --json output stays one clean object.
            FileHandle.standardError.write(Data("sqlcipherkit-bench: \(stage)...\n".utf8))
        }
        outcome.output = options.json ? try report.jsonText() : report.text()
    } catch {
        outcome.failure = "\(error)"
    }
    finished.signal()
}
// The main thread serves the main queue (the main actor's executor) while it waits, so that the
// streaming workload can measure a loop on the main actor; it polls its run loop rather than
// parking in the signal wait an async main would use.
while finished.wait(timeout: .now()) == .timedOut {
    _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
}
if let failure = outcome.failure {
    FileHandle.standardError.write(Data("sqlcipherkit-bench: \(failure)\n".utf8))
    exit(1)
}
print(outcome.output ?? "")
