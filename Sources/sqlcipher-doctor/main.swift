// sqlcipher-doctor: proves that SqlCipherKit can use a SQLCipher library in this process (load,
// relocation audit, identity, encryption self-test), inspects database files without a key and
// verifies them with one. Usage and exit codes: CommandSpecs.swift and docs/doctor.md.
import Foundation

/// Writes text to standard error, its control characters escaped (``TerminalText``): a message
/// may name a path given on the command line.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((TerminalText.lines(text.components(separatedBy: "\n")) + "\n").utf8))
}

/// Prints a usage error with the command's synopsis and exits 2.
func exitWithUsage(_ error: UsageError) -> Never {
    let help = error.command.spec.help
    let synopsis = help.components(separatedBy: "\n\n").first ?? help
    let more = error.command == .report ? "sqlcipher-doctor --help" : "sqlcipher-doctor \(error.command.rawValue) --help"
    printError("sqlcipher-doctor: \(error.message)\n\n\(synopsis)\n\nRun '\(more)' for the options.")
    exit(2)
}

let arguments: CommandLineArguments
do {
    arguments = try ArgumentParser.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    exitWithUsage(error)
}

// Swift decodes the command line as UTF-8, replacing what is not: a file whose name is not valid
// UTF-8 (`\xff.db`, from another system's encoding) was looked up under another name and reported
// as missing, with no word of why. Said once parsing has refused what it refuses (a key typed on
// the command line among them); the argument is named by position only.
if let position = (1..<Int(CommandLine.argc)).first(where: { index in
    CommandLine.unsafeArgv[index].map { String(validatingCString: $0) == nil } ?? false
}) {
    exitWithUsage(UsageError(
        message: "argument \(position) is not valid UTF-8 text; the doctor (like SqlCipherKit) takes file names as UTF-8, "
            + "so it would look at another name. Give the file a UTF-8 name (or a symbolic link with one) and pass that",
        command: arguments.command))
}

if arguments.help {
    print(arguments.command.spec.help)
    exit(0)
}

switch arguments.command {
case .report:
    let report = await DoctorReport.collect(libraryPath: arguments.values["--library"])
    print(arguments.flag("--json") ? JSONOutput.text(report.json) : report.text)
    exit(report.ok ? 0 : 1)
case .inspect:
    do {
        let result = InspectCommand.run(files: try InspectCommand.files(arguments), json: arguments.flag("--json"))
        print(result.output)
        exit(result.status)
    } catch {
        exitWithUsage(error)
    }
case .verify:
    do {
        let result = try VerifyCommand.run(try VerifyCommand.options(arguments)) { printError("sqlcipher-doctor: \($0)") }
        print(result.output)
        exit(result.status)
    } catch {
        exitWithUsage(error)
    }
}
