// sqlcipher-doctor: proves that SqlCipherKit can use a SQLCipher library in this process (load,
// relocation audit, identity, encryption self-test) and inspects database files without a key.
// Usage and exit codes: DoctorOptions.usage and docs/doctor.md.
import Foundation

/// Writes text to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

let command: DoctorCommand
do {
    command = try DoctorOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    printError("sqlcipher-doctor: \(error.message)\n\n\(DoctorOptions.usage)")
    exit(2)
}

switch command {
case .help:
    print(DoctorOptions.usage)
    exit(0)
case let .inspect(json, files):
    let result = InspectCommand.run(files: files, json: json)
    print(result.output)
    exit(result.status)
case let .report(json, library):
    let report = await DoctorReport.collect(libraryPath: library)
    print(json ? report.json.serialized() : report.text)
    exit(report.ok ? 0 : 1)
}
