import Foundation

extension BenchReport {
    /// The report as one JSON object.
    func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The report as tables for a terminal.
    func text() -> String {
        var lines: [String] = []
        lines.append("sqlcipherkit-bench (\(mode) mode, \(build) build)")
        lines.append("library: \(library.path) (SQLCipher \(library.cipherVersion), SQLite \(library.sqliteVersion); "
            + "chosen by \(library.selectedBy))")
        lines.append("machine: \(machine.cpu), \(machine.cores) cores, \(String(format: "%.0f", machine.memoryGiB)) GiB, "
            + machine.os)
        if let start = machine.loadAverageAtStart, let end = machine.loadAverageAtEnd {
            lines.append("load average: \(start.map { String(format: "%.2f", $0) }.joined(separator: " ")) at the start, "
                + "\(end.map { String(format: "%.2f", $0) }.joined(separator: " ")) at the end")
        }
        if build != "release" {
            lines.append("note: a \(build) build; the targets are for release builds (swift run -c release sqlcipherkit-bench)")
        }
        lines.append("")
        lines.append("Medians in milliseconds; ratio = SqlCipherKit / C floor (same loops in C, same loaded library).")
        lines.append("Wall-clock time (ContinuousClock); CPU = CPU time of the process during the same runs.")
        var table = [["workload", "rows", "variant", "SqlCipherKit", "C floor", "ratio", "CPU ratio"]]
        for workload in workloads {
            for encryption in Encryption.allCases {
                guard let figures = workload[encryption] else { continue }
                table.append([
                    workload.name, workload.rows.map(String.init) ?? "-", encryption.rawValue,
                    format(figures.swiftMedianMs), figures.floorMedianMs.map(format) ?? "-",
                    figures.ratioToFloor.map { String(format: "%.2fx", $0) } ?? "-",
                    figures.cpuRatioToFloor.map { String(format: "%.2fx", $0) } ?? "-",
                ])
            }
        }
        lines += render(table, rightAligned: [1, 3, 4, 5, 6])

        let overheads = workloads.compactMap { workload in workload.encryptionOverhead.map { (workload.name, $0) } }
        if !overheads.isEmpty {
            lines.append("")
            lines.append("Encryption overhead (encrypted median / unencrypted median):")
            var overheadTable = [["workload", "SqlCipherKit", "C floor"]]
            for (name, overhead) in overheads {
                overheadTable.append([name, String(format: "%.2fx", overhead.swift),
                                      overhead.floor.map { String(format: "%.2fx", $0) } ?? "-"])
            }
            lines += render(overheadTable, rightAligned: [1, 2])
        }

        let extras = workloads.filter { !$0.extra.isEmpty }
        if !extras.isEmpty {
            lines.append("")
            lines.append("Other figures:")
            for workload in extras {
                for key in workload.extra.keys.sorted() {
                    lines.append("  \(workload.name) \(key): \(format(workload.extra[key]!))")
                }
            }
        }

        lines.append("")
        lines.append("Targets:")
        var targetTable = [["status", "target", "variant", "measured"]]
        for target in targets {
            let measured = target.unit == "ms" ? format(target.measured) + " ms" : String(format: "%.3fx", target.measured)
            targetTable.append([target.status, target.target, target.variant, measured])
        }
        lines += render(targetTable, rightAligned: [3])
        if !missing.isEmpty {
            lines.append("")
            lines.append("Not measured:")
            lines += missing.map { "  - \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    private func format(_ milliseconds: Double) -> String {
        String(format: milliseconds < 10 ? "%.3f" : "%.1f", milliseconds)
    }

    private func render(_ rows: [[String]], rightAligned: Set<Int>) -> [String] {
        guard let header = rows.first else { return [] }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ")
        }
    }
}
