import Foundation
import Testing
@testable import SqlCipherKit

/// The cipher pragma table of the DocC article "Raw SQL cannot undo the encryption"
/// (SqlCipherKit.docc/RawSQLGuards.md) is `CipherPragmaRule.all`, row for row: the rules are the
/// one source, and the article cannot drift from what the guard does.
@Suite struct CipherPragmaTableTests {
    /// The row the article shows for a rule.
    static func row(_ rule: CipherPragmaRule) -> String {
        let libraries = switch rule.versions {
        case .both: "3.4.1, 4.6.1"
        case .sqlcipher4: "4.6.1"
        }
        let setting = switch rule.setting {
        case .allowed: "yes"
        case .refused: "**no**"
        case .onlyOff: "only `off`"
        case .refusedWhenEncrypted: "plaintext databases only"
        }
        let read = rule.readAllowed ? "yes" : "**no**"
        let instead = rule.instead.isEmpty ? "—" : rule.instead
        return "| `\(rule.name)` | \(libraries) | \(read) | \(setting) | \(rule.why) | \(instead) |"
    }

    @Test func theArticlesTableIsTheRuleTable() throws {
        let text = try String(
            contentsOf: DocumentationBlocks.catalog.appendingPathComponent("RawSQLGuards.md"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let header = try #require(lines.firstIndex(of: "| pragma | libraries | read | set | why | use instead |"))
        #expect(lines[header + 1] == "|---|---|---|---|---|---|")
        let rows = Array(lines[(header + 2)...].prefix { $0.hasPrefix("|") })
        let expected = CipherPragmaRule.all.map(Self.row)
        #expect(rows.count == expected.count)
        for (index, row) in expected.enumerated() {
            #expect(index < rows.count && rows[index] == row, "row \(index + 1) should read:\n\(row)")
        }
    }
}
