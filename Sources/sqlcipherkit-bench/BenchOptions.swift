import Foundation

/// What to run, from the command line.
struct BenchOptions: Sendable {
    /// Print one JSON object instead of the table.
    var json = false
    /// Small sizes and few runs, for CI smoke runs.
    var quick = false
    /// A library path given with `--library`; otherwise `SQLCIPHERKIT_LIBRARY` or discovery decides.
    var libraryPath: String?
    /// Timed runs per workload and variant; the median is reported.
    var runs = 7
    /// Timed runs of the opening workloads (cheap, so more of them).
    var openRuns = 21
    /// Timed runs of opening with a passphrase (each pays the full key derivation).
    var passphraseRuns = 5
    /// Rows written by the insert, save and upsert workloads.
    var writeRows = 50_000
    /// Rows read by the fetch workloads.
    var fetchRows = 200_000
    /// Rows of the page-cache workload's table (its file fits the package's default cache).
    var cacheRows = 100_000
    /// Rows of the streaming workload's table.
    var streamRows = 5_000_000
    /// Timed runs of the streaming workload (each reads every row three times).
    var streamRuns = 3
    /// Documents of the full-text search workload.
    var ftsDocuments = 100_000
    /// Observers in the observer workloads.
    var observers = 10
    /// The workload families to run; all when empty.
    var only: Set<String> = []

    /// The workload families, in the order they run.
    static let families = ["insert", "fetch", "entity", "open", "observers", "cache", "streaming", "pool", "tracing", "rekey", "durability", "interpolation", "backup", "fts"]

    func runs(_ family: String) -> Bool {
        only.isEmpty || only.contains(family)
    }

    static let usage = """
        usage: sqlcipherkit-bench [--json] [--quick] [--runs N] [--only FAMILY,...] [--library PATH]

        Times SqlCipherKit against the same loops written in C on the same loaded SQLCipher
        library (the floor), encrypted and unencrypted, and prints medians, ratios to the floor,
        the encryption overhead and PASS/MISS per target. Build with -c release for real figures.

          --json          print one JSON object with the same figures
          --quick         small sizes and few runs (a smoke run, not a measurement)
          --runs N        timed runs per workload (default 7; 3 with --quick)
          --only LIST     run only these workload families: insert, fetch, entity, open, observers,
                          cache, streaming, pool, tracing, rekey
          --library PATH  the SQLCipher library to load (default: $SQLCIPHERKIT_LIBRARY, then discovery)
        """

    /// Parses the arguments (without the program name).
    static func parse(_ arguments: [String]) throws -> BenchOptions {
        var options = BenchOptions()
        var runs: Int?
        var index = 0
        func value(after flag: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw BenchError("\(flag) needs a value\n\n\(usage)") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--json": options.json = true
            case "--quick": options.quick = true
            case "--runs":
                let text = try value(after: argument)
                guard let count = Int(text), count > 0 else {
                    throw BenchError("--runs needs a positive whole number, not \"\(text)\"")
                }
                runs = count
            case "--library": options.libraryPath = try value(after: argument)
            case "--only":
                let text = try value(after: argument)
                let names = Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                let unknown = names.subtracting(families)
                guard unknown.isEmpty, !names.isEmpty else {
                    throw BenchError("--only takes a comma-separated list of \(families.joined(separator: ", ")); "
                        + "not \"\(text)\"")
                }
                options.only = names
            case "--help", "-h": throw BenchError.usage
            default: throw BenchError("unknown argument \"\(argument)\"\n\n\(usage)")
            }
            index += 1
        }
        if options.quick {
            options.runs = 3
            options.openRuns = 3
            options.passphraseRuns = 1
            options.writeRows = 2_000
            options.fetchRows = 5_000
            options.streamRows = 20_000
            options.cacheRows = 5_000
            options.streamRuns = 1
        }
        if let runs {
            options.runs = runs
            options.openRuns = runs * 3
            options.passphraseRuns = min(runs, 5)
        }
        return options
    }
}

/// A failure the benchmark reports and exits on.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    /// Asked for `--help`: print the usage and exit successfully.
    var isUsage = false

    init(_ description: String) {
        self.description = description
    }

    static var usage: BenchError {
        var error = BenchError(BenchOptions.usage)
        error.isUsage = true
        return error
    }
}
