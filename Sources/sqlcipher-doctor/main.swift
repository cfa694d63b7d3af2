// sqlcipher-doctor: proves that SqlCipherKit can use a SQLCipher library in this process (load,
// relocation audit, identity, encryption self-test), inspects database files without a key and
// verifies them with one. Usage and exit codes: CommandSpecs.swift and docs/doctor.md.
import Foundation

/// Writes text to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
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
