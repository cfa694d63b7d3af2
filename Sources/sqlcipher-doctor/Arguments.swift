/// The doctor's commands. The report has no command word.
enum Command: String, CaseIterable {
    case report, inspect, verify

    /// What each command accepts, and its help.
    var spec: CommandSpec {
        switch self {
        case .report: return .report
        case .inspect: return .inspect
        case .verify: return .verify
        }
    }
}

/// A command line the doctor does not accept (exit code 2).
struct UsageError: Error, Equatable {
    let message: String
    /// The command whose usage goes with the message.
    var command: Command = .report
}

/// What one command accepts: flags, options with a value, file names, and options refused with a
/// reason. The parser knows nothing else about the commands.
struct CommandSpec {
    let command: Command
    /// Options without a value, e.g. `--json`.
    let flags: Set<String>
    /// Options with a value, e.g. `--library` (as `--library PATH` or `--library=PATH`).
    let valued: Set<String>
    /// Whether the command takes file names (and so `--`).
    let takesFiles: Bool
    /// Options refused with a message that says why and what to use instead.
    let refused: [String: String]
    /// The help text.
    let help: String
}

/// A parsed command line.
struct CommandLineArguments: Equatable {
    let command: Command
    /// `-h` or `--help` was given: print ``CommandSpec/help`` and nothing else.
    var help = false
    var flags: Set<String> = []
    var values: [String: String] = [:]
    var files: [String] = []

    func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// The one argument parser of every doctor command (hand-written: the package depends on nothing).
///
/// The first word that is not an option chooses the command (`inspect`, `verify`); without one it
/// is the report. Options may come before or after the command word. `--name=value` and
/// `--name value` are the same; an option with a value given twice, an unknown option, a flag
/// with a value and file names for the report are usage errors. After `--` every argument is a
/// file name. `-h`/`--help` anywhere before `--` asks for the command's help.
enum ArgumentParser {
    static func parse(_ arguments: [String]) throws(UsageError) -> CommandLineArguments {
        let (command, commandIndex) = findCommand(arguments)
        let spec = command.spec
        var parsed = CommandLineArguments(command: command)
        let separator = arguments.firstIndex(of: "--") ?? arguments.count
        if arguments[..<separator].contains(where: { $0 == "-h" || $0 == "--help" }) {
            parsed.help = true
            return parsed
        }
        func usage(_ message: String) -> UsageError { UsageError(message: message, command: command) }
        var optionsEnded = false
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if index - 1 == commandIndex { continue }
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                if spec.takesFiles {
                    parsed.files.append(argument)
                } else if command == .report {
                    throw usage("unknown command \(shown(argument, at: index)) (the commands are "
                        + Command.allCases.filter { $0 != .report }.map(\.rawValue).joined(separator: " and ") + ")")
                } else {
                    throw usage("unexpected argument \(shown(argument, at: index))")
                }
                continue
            }
            if argument == "--" {
                guard spec.takesFiles else {
                    throw usage("'--' is only used after inspect or verify, before file names")
                }
                optionsEnded = true
                continue
            }
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            let inline: String? = argument.contains("=") ? String(argument.drop { $0 != "=" }.dropFirst()) : nil
            // Refused by any command: a key on the command line is wrong wherever it is put.
            if let reason = Command.allCases.lazy.compactMap({ $0.spec.refused[name] }).first {
                throw usage(reason)
            }
            if spec.flags.contains(name) {
                guard inline == nil else { throw usage("\(name) takes no value") }
                parsed.flags.insert(name)
            } else if spec.valued.contains(name) {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard index < arguments.count, index != commandIndex else { throw usage("\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                guard !value.isEmpty else { throw usage("\(name) needs a value") }
                guard parsed.values[name] == nil else { throw usage("\(name) is given twice") }
                parsed.values[name] = value
            } else if let owner = Command.allCases.first(where: { $0.spec.flags.contains(name) || $0.spec.valued.contains(name) }) {
                throw usage(name == "--library" && command == .inspect
                    ? "--library has no effect on inspect, which reads files without SQLCipher"
                    : "\(name) is an option of \(owner == .report ? "the report (no command)" : owner.rawValue), not of \(command.rawValue)")
            } else {
                throw usage("unknown option \(shown(name, at: index))")
            }
        }
        return parsed
    }

    /// An argument the parser does not know, as a usage error may repeat it: quoted when it is
    /// spelled like a command word or a long option (`frobnicate`, `--bogus`: lower-case ASCII
    /// letters and `-`), and otherwise by its position only. A key typed on the command line is
    /// refused wherever it stands, and a message must not print it back: glued to a short option as
    /// other tools take it (`-pS3cret`, `-k'my passphrase'`), or standing where a command belongs,
    /// it was repeated in full (found by the attack review).
    static func shown(_ argument: String, at position: Int) -> String {
        let bytes = Array(argument.utf8)
        let body = bytes.drop { $0 == UInt8(ascii: "-") }
        let dashes = bytes.count - body.count
        let spelledLikeAWord = body.allSatisfy { $0 == UInt8(ascii: "-") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
        // One dash before several letters is a short option with a value glued to it.
        if !body.isEmpty, body.count <= 40, spelledLikeAWord, dashes != 1 || body.count == 1 {
            return "'\(argument)'"
        }
        return "(argument \(position), not repeated here in case it is a key: give a key with --key-env NAME, "
            + "--key-file PATH or --key-stdin)"
    }

    /// A value of a setting's option (`--kdf-iter`, `--cipher-page-size`, `--kdf-algorithm`, ...)
    /// that the option refuses, as its usage error may repeat it: quoted when it is spelled like
    /// the number or digest that was meant (`1e6`, `-1`, `4,000`, `HMAC_SHA384`, `md5`), and
    /// otherwise not at all, as ``shown(_:at:)`` does: a key typed into that slot (the option's
    /// number left out, `--kdf-iter 'my passphrase'`) was printed back in full (found by the attack
    /// review).
    static func shownValue(_ value: String) -> String {
        let bytes = Array(value.utf8)
        let numberLike = !bytes.isEmpty && bytes.count <= 24
            && bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || "+-.,_eE".utf8.contains($0) }
        var digest = Substring(value.lowercased())
        for prefix in ["pbkdf2_", "hmac_"] where digest.hasPrefix(prefix) { digest = digest.dropFirst(prefix.count) }
        let digestLike = digest == "md5" || (digest.hasPrefix("sha") && digest.count <= 9
            && digest.dropFirst(3).allSatisfy { $0.isASCII && ($0.isNumber || $0 == "-" || $0 == "_") })
        return numberLike || digestLike ? "'\(value)'" : "the value given (not repeated here in case it is a key)"
    }

    /// The command word and its position: the first argument that is neither an option nor the
    /// value of one, before `--`. Nil position for the report.
    private static func findCommand(_ arguments: [String]) -> (Command, Int?) {
        let valued = Set(Command.allCases.flatMap { $0.spec.valued })
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument.hasPrefix("-") && argument != "-" {
                if !argument.contains("=") && valued.contains(argument) { index += 1 }
                index += 1
                continue
            }
            if let command = Command(rawValue: argument), command != .report { return (command, index) }
            break
        }
        return (.report, nil)
    }
}
