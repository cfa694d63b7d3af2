import Foundation

// sqlcipherkit-bench: SqlCipherKit against the same loops in C on the same loaded SQLCipher
// library. See BenchOptions.usage and docs/performance.md.

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

do {
    let bench = try Bench(options: options)
    defer { bench.removeFolder() }
    let report = try await bench.run { stage in
        // Progress goes to stderr so that --json output stays one clean object.
        FileHandle.standardError.write(Data("sqlcipherkit-bench: \(stage)...\n".utf8))
    }
    print(options.json ? try report.jsonText() : report.text())
} catch {
    FileHandle.standardError.write(Data("sqlcipherkit-bench: \(error)\n".utf8))
    exit(1)
}
