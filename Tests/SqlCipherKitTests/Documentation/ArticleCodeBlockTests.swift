import Foundation
import Testing

/// Every Swift block of every article in the DocC catalog is checked: either some test file holds
/// it line for line (indentation and blank lines aside, its `import` lines as the file's own
/// imports), where it is compiled and, unless its paths are the reader's own, run against a
/// temporary database; or its first line marks it as a fragment, with the reason
/// (``DocumentationBlocks/fragmentMarker``).
@Suite struct ArticleCodeBlockTests {
    /// The test sources, each as normalized lines.
    private static func testSources() throws -> [[String]] {
        let root = DocumentationBlocks.catalog
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests")
        guard let files = FileManager.default.enumerator(atPath: root.path) else { return [] }
        return try files.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.map { file in
            DocumentationBlocks.normalized(
                try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n"))
        }
    }

    @Test func everySwiftBlockIsCompiledByATestOrMarkedAsAFragment() throws {
        let sources = try Self.testSources()
        var checked = 0
        for article in try DocumentationBlocks.articleNames() {
            for (index, block) in try DocumentationBlocks.swiftBlocks(ofArticle: article).enumerated() {
                checked += 1
                if let reason = DocumentationBlocks.fragmentReason(block) {
                    #expect(reason.count >= 20, "\(article).md block \(index + 1): a fragment says why it is one")
                    continue
                }
                let compiled = sources.contains { DocumentationBlocks.contains($0, block) }
                #expect(compiled, """
                    \(article).md block \(index + 1) is neither compiled by a test nor marked as a fragment:
                    \(block.joined(separator: "\n"))
                    """)
            }
        }
        // The catalog has Swift blocks (a wrong catalog path would check nothing).
        #expect(checked > 50)
    }
}
