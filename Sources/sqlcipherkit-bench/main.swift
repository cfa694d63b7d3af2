import Dispatch
import Foundation

// sqlcipherkit-bench: SqlCipherKit against the same loops in C on the same loaded SQLCipher
// library. See BenchOptions.usage and docs/performance.md.
//
// The top level does not await: the work runs in a detached task while the main thread serves the
// main queue. (An await at the top level would make the same process; this form keeps the
// option parsing synchronous and the exit status explicit.)

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

// Detached: a task started here would inherit the main actor, whose queue the main thread serves.
Task.detached { [options] in
    do {
        let bench = try Bench(options: options)
        defer { bench.removeFolder() }
        let report = try await bench.run { stage in
            // Progress goes to stderr so that --json output stays one clean object.
            FileHandle.standardError.write(Data("sqlcipherkit-bench: \(stage)...\n".utf8))
        }
        print(options.json ? try report.jsonText() : report.text())
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("sqlcipherkit-bench: \(error)\n".utf8))
        exit(1)
    }
}
// The main thread serves the main queue, the main actor's executor, exactly as the async top level
// of a user's program does (the runtime ends it in dispatch_main too), so that stream.mainActor
// measures a loop on the main actor as users run it. The task above ends the process.
dispatchMain()
