import Foundation

/// One line of the reliability results file, as the suites write it
/// (Tests/SqlCipherKitTests/Reliability/ReliabilitySupport.swift, `ScenarioRecord`).
struct ReliabilityResultLine: Decodable {
    var suite: String
    var scenario: String
    var library: String
    var mode: String
    var seed: UInt64
    var rounds: Int
    var faults: Int
    var inputs: Int
    var failures: Int
    var knownIssues: Int?
    var notes: String
}

/// Turns the JSON lines the reliability suites recorded into Markdown tables and writes them into
/// a document between the markers `<!-- reliability-results:begin -->` and
/// `<!-- reliability-results:end -->` (the rest of the document is kept as it is).
let reliabilityReportCommand = HelperCommand(
    name: "reliability-report",
    usage: "reliability-report RESULTS.jsonl DOCUMENT.md [HEADER-LINE...]: writes the results tables into the document"
) { arguments in
    guard arguments.count >= 2 else {
        throw HelperUsageError(message: "usage: reliability-report RESULTS.jsonl DOCUMENT.md [HEADER-LINE...]")
    }
    let text = try String(contentsOfFile: arguments[0], encoding: .utf8)
    let decoder = JSONDecoder()
    let lines = try text.split(separator: "\n").map { try decoder.decode(ReliabilityResultLine.self, from: Data($0.utf8)) }
    let tables = ReliabilityReport(lines: lines, header: Array(arguments.dropFirst(2))).markdown
    let begin = "<!-- reliability-results:begin -->", end = "<!-- reliability-results:end -->"
    var document = (try? String(contentsOfFile: arguments[1], encoding: .utf8)) ?? "# Reliability\n\n\(begin)\n\(end)\n"
    guard let start = document.range(of: begin), let stop = document.range(of: end), start.upperBound <= stop.lowerBound else {
        throw HelperUsageError(message: "\(arguments[1]) has no \(begin) ... \(end) section")
    }
    document.replaceSubrange(start.upperBound..<stop.lowerBound, with: "\n" + tables + "\n")
    try document.write(toFile: arguments[1], atomically: true, encoding: .utf8)
    report("wrote \(lines.count) results into \(arguments[1])")
    return 0
}

/// The Markdown of the results: a summary per library, then one table per suite.
struct ReliabilityReport {
    let lines: [ReliabilityResultLine]
    let header: [String]

    static let suiteOrder = ["Fixtures", "Crash safety", "Faults", "Tampering", "Leaks", "Hostile input", "Load"]

    var markdown: String {
        var out: [String] = []
        out += header.map { "\($0)  " }
        if !header.isEmpty { out.append("") }
        let libraries = Array(Set(lines.map(\.library))).sorted(by: >)
        out.append("| library | mode | seed | scenarios | rounds | faults injected | inputs tried | failures found | known-issue hits |")
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|")
        for library in libraries {
            let mine = lines.filter { $0.library == library }
            let modes = Set(mine.map(\.mode)).sorted().joined(separator: ", ")
            let seeds = Set(mine.map(\.seed)).sorted().map(String.init).joined(separator: ", ")
            out.append("| SQLCipher \(library) | \(modes) | \(seeds) | \(mine.count) | \(mine.map(\.rounds).reduce(0, +)) | "
                + "\(mine.map(\.faults).reduce(0, +)) | \(mine.map(\.inputs).reduce(0, +)) | \(mine.map(\.failures).reduce(0, +)) | "
                + "\(mine.map { $0.knownIssues ?? 0 }.reduce(0, +)) |")
        }
        let suites = Self.suiteOrder.filter { suite in lines.contains { $0.suite == suite } }
            + Set(lines.map(\.suite)).subtracting(Self.suiteOrder).sorted()
        for suite in suites {
            out.append("")
            out.append("### \(suite)")
            out.append("")
            let rows = lines.filter { $0.suite == suite }
            let scenarios = rows.map(\.scenario).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            if suite == "Fixtures" {
                out.append("| file | " + libraries.map { "SQLCipher \($0)" }.joined(separator: " | ") + " |")
                out.append("|---|" + libraries.map { _ in "---|" }.joined())
                for scenario in scenarios.sorted() {
                    let cells = libraries.map { library -> String in
                        guard let row = rows.first(where: { $0.scenario == scenario && $0.library == library }) else { return "not run" }
                        return (row.failures > 0 ? "**\(row.failures) failure(s)**: " : "") + Self.cell(row.notes)
                    }
                    out.append("| `\(scenario)` | " + cells.joined(separator: " | ") + " |")
                }
                continue
            }
            out.append("| scenario | library | rounds | faults injected | inputs tried | failures found | known-issue hits | observed |")
            out.append("|---|---|---:|---:|---:|---:|---:|---|")
            for scenario in scenarios {
                for library in libraries {
                    for row in rows where row.scenario == scenario && row.library == library {
                        out.append("| \(Self.cell(scenario)) | \(library) | \(row.rounds) | \(row.faults) | \(row.inputs) | "
                            + "\(row.failures > 0 ? "**\(row.failures)**" : "0") | \(row.knownIssues ?? 0) | \(Self.cell(row.notes)) |")
                    }
                }
            }
        }
        return out.joined(separator: "\n")
    }

    /// Text safe inside a Markdown table cell.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
