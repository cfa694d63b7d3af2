import SqlCipherKit

/// `sqlcipher-doctor inspect FILE...`: says what each file is, without a key, and changes nothing.
enum InspectCommand {
    /// Inspects the files and returns the output and the exit code: 0 when every file was found
    /// and read, 1 when one is missing or could not be read.
    static func run(files: [String], json: Bool) -> (output: String, status: Int32) {
        let reports = DatabaseFileInspector.inspect(files)
        let output = json ? self.json(reports).serialized() : text(reports)
        let failed = reports.contains { $0.kind == .missing || ($0.kind == .notADatabase && $0.size == nil) }
        return (output, failed ? 1 : 0)
    }

    static func json(_ reports: [DatabaseFileInspection]) -> JSONValue {
        .object([("files", .array(reports.map { report in
            .object([
                ("path", .string(report.path)),
                ("kind", .string(report.kind.rawValue)),
                ("detail", .string(report.detail)),
                ("size", report.size.map(JSONValue.int) ?? .null),
                ("page_size", report.pageSize.map(JSONValue.int) ?? .null),
                ("journal_mode", .optional(report.journalMode?.rawValue)),
                ("reserved_bytes", report.reservedBytes.map(JSONValue.int) ?? .null),
                ("page_count", report.pageCount.map(JSONValue.int) ?? .null),
                ("companion_files", .array(report.companionFiles.map {
                    .object([("suffix", .string($0.suffix)), ("path", .string($0.path)), ("size", .int($0.size))])
                })),
            ])
        }))])
    }

    static func text(_ reports: [DatabaseFileInspection]) -> String {
        reports.map { "\($0.path): \($0.kind.rawValue)\n  \($0.detail)" }.joined(separator: "\n")
    }
}
