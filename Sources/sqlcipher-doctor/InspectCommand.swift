import SqlCipherKit

/// `sqlcipher-doctor inspect FILE...`: says what each file is, without a key, and changes nothing.
enum InspectCommand {
    /// The files to inspect, from the command line. Throws when there are none.
    static func files(_ arguments: CommandLineArguments) throws(UsageError) -> [String] {
        guard !arguments.files.isEmpty else { throw UsageError(message: "inspect needs at least one FILE", command: .inspect) }
        return arguments.files
    }

    /// Inspects the files and returns the output and the exit code: 0 when every file was found
    /// and read, 1 when one is missing or could not be read.
    static func run(files: [String], json: Bool) -> (output: String, status: Int32) {
        let reports = files.map(DatabaseFileInspector.inspect)
        let failed = reports.contains(where: isFailure)
        let output = json ? JSONOutput.text(self.json(reports, ok: !failed)) : text(reports)
        return (output, failed ? 1 : 0)
    }

    /// A file that makes the exit code 1: missing, or one whose size could not be read (no
    /// regular file, or no permission).
    static func isFailure(_ report: DatabaseFileInspection) -> Bool {
        report.kind == .missing || (report.kind == .notADatabase && report.size == nil)
    }

    /// The JSON document (docs/doctor.md).
    struct JSON: Encodable {
        var ok: Bool
        var files: [File]
    }

    struct File: Encodable {
        var path: String
        var kind: String
        var detail: String
        @Nullable var size: Int?
        @Nullable var pageSize: Int?
        @Nullable var journalMode: String?
        @Nullable var reservedBytes: Int?
        @Nullable var pageCount: Int?
        @Nullable var assumedPageSize: Int?
        var pageCountIsAmbiguous: Bool
        var companionFiles: [Companion]
    }

    struct Companion: Encodable {
        var suffix: String
        var path: String
        var size: Int
    }

    static func json(_ reports: [DatabaseFileInspection], ok: Bool) -> JSON {
        JSON(ok: ok, files: reports.map { report in
            File(path: report.path, kind: report.kind.rawValue, detail: report.detail, size: report.size,
                 pageSize: report.pageSize, journalMode: report.journalMode?.rawValue, reservedBytes: report.reservedBytes,
                 pageCount: report.pageCount, assumedPageSize: report.assumedPageSize,
                 pageCountIsAmbiguous: report.pageCountIsAmbiguous,
                 companionFiles: report.companionFiles.map { Companion(suffix: $0.suffix, path: $0.path, size: $0.size) })
        })
    }

    static func text(_ reports: [DatabaseFileInspection]) -> String {
        TerminalText.lines(reports.flatMap { ["\($0.path): \($0.kind.rawValue)", "  \($0.detail)"] })
    }
}
