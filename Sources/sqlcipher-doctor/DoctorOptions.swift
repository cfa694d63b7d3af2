/// What the command line asks for.
enum DoctorCommand: Equatable {
    /// Load, audit and self-test the library; `library` is the `--library` path.
    case report(json: Bool, library: String?)
    /// Inspect files without a key.
    case inspect(json: Bool, files: [String])
    /// Print the help.
    case help
}

/// A command line the doctor does not accept (exit code 2).
struct UsageError: Error, Equatable {
    let message: String
}

enum DoctorOptions {
    /// The help text, also printed (to standard error) after a usage error.
    static let usage = """
        usage: sqlcipher-doctor [--json] [--library PATH]
               sqlcipher-doctor inspect [--json] FILE...
               sqlcipher-doctor --help

        Without a command: loads the SQLCipher library the way SqlCipherKit does, proves the binding
        (relocation audit, cipher identity), lists the other SQLite libraries in the process and runs
        an encryption self-test in a temporary folder, then prints a report.

          --json          print one JSON object instead of the report
          --library PATH  use the SQLCipher library at PATH (default: $SQLCIPHERKIT_LIBRARY, then
                          discovery of libsqlcipher.so.1, then libsqlcipher.so.0)
          -h, --help      print this help

        inspect FILE...: says what each file is without a key (missing, empty, plaintext,
        plaintext-header, encrypted, not-a-database) and never modifies it. `--` ends the options.

        Exit codes: 0 every check passed (inspect: every file was found and read), 1 a check failed
        (inspect: a file is missing or unreadable), 2 usage error.
        """

    /// Parses the arguments (without the program name).
    static func parse(_ arguments: [String]) throws(UsageError) -> DoctorCommand {
        var json = false
        var library: String?
        var inspect = false
        var files: [String] = []
        var optionsEnded = false
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || (!argument.hasPrefix("-") || argument == "-") {
                if !inspect && !optionsEnded {
                    guard argument == "inspect" else {
                        throw UsageError(message: "unknown command '\(argument)' (the only command is inspect)")
                    }
                    inspect = true
                } else if inspect {
                    files.append(argument)
                } else {
                    throw UsageError(message: "unexpected argument '\(argument)'")
                }
                continue
            }
            switch argument {
            case "--":
                guard inspect else { throw UsageError(message: "'--' is only used after inspect, before file names") }
                optionsEnded = true
            case "-h", "--help":
                return .help
            case "--json":
                json = true
            case "--library":
                guard index < arguments.count, !arguments[index].isEmpty else {
                    throw UsageError(message: "--library needs a path")
                }
                guard library == nil else { throw UsageError(message: "--library is given twice") }
                library = arguments[index]
                index += 1
            case let option where option.hasPrefix("--library="):
                let value = String(option.dropFirst("--library=".count))
                guard !value.isEmpty else { throw UsageError(message: "--library needs a path") }
                guard library == nil else { throw UsageError(message: "--library is given twice") }
                library = value
            default:
                throw UsageError(message: "unknown option '\(argument)'")
            }
        }
        if inspect {
            guard library == nil else {
                throw UsageError(message: "--library has no effect on inspect, which reads files without SQLCipher")
            }
            guard !files.isEmpty else { throw UsageError(message: "inspect needs at least one FILE") }
            return .inspect(json: json, files: files)
        }
        return .report(json: json, library: library)
    }
}
