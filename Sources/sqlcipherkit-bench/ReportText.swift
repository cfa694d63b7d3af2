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
        lines.append("Medians in milliseconds. ratio = SqlCipherKit / C floor (same loops in C, same loaded library), the")
        lines.append("median of per-round ratios, each from a Swift run and the floor run right before or after it;")
        lines.append("spread = the smallest and largest of those. Wall-clock time (ContinuousClock); CPU ratio = the")
        lines.append("same in CPU time of the process. peak MiB = largest rise of the bytes malloc has handed out")
        lines.append("(mallinfo2: Swift's objects, SQLite's pages and buffers, the C array) during one untimed run.")
        var table = [["workload", "rows", "variant", "SqlCipherKit", "C floor", "ratio", "spread", "CPU ratio",
                      "peak MiB", "C peak"]]
        for workload in workloads {
            for encryption in Encryption.allCases {
                guard let figures = workload[encryption] else { continue }
                var spread = "-"
                if let low = figures.ratioMin, let high = figures.ratioMax {
                    spread = String(format: "%.2f-%.2f", low, high)
                }
                table.append([
                    workload.name, workload.rows.map(String.init) ?? "-", encryption.rawValue,
                    format(figures.swiftMedianMs), figures.floorMedianMs.map(format) ?? "-",
                    figures.ratioToFloor.map { String(format: "%.2fx", $0) } ?? "-", spread,
                    figures.cpuRatioToFloor.map { String(format: "%.2fx", $0) } ?? "-",
                    figures.swiftPeakMiB.map { String(format: "%.1f", $0) } ?? "-",
                    figures.floorPeakMiB.map { String(format: "%.1f", $0) } ?? "-",
                ])
            }
        }
        lines += render(table, rightAligned: [1, 3, 4, 5, 6, 7, 8, 9])

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
        var targetTable = [["status", "target", "variant", "measured", "spread"]]
        for target in targets {
            let measured = target.unit == "ms" ? format(target.measured) + " ms" : String(format: "%.3fx", target.measured)
            let spread = target.spread.map { String(format: "%.2f-%.2f", $0[0], $0[1]) } ?? "-"
            targetTable.append([target.status, target.target, target.variant, measured, spread])
        }
        lines += render(targetTable, rightAligned: [3, 4])
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
