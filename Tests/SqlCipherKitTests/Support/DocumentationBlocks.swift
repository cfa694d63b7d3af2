import Foundation
import Testing

/// The Swift code blocks of the DocC catalog's articles, for the tests that compile an article's
/// examples: each such test copies the blocks line for line and checks, with
/// ``expectEveryBlock(ofArticles:count:isIn:)``, that every block of the article is still in its file,
/// so an example edited in the documentation without its test copy fails the run.
enum DocumentationBlocks {
    /// The catalog, found from this file's path (the tests run from the package's checkout).
    static let catalog = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/SqlCipherKit/SqlCipherKit.docc")

    /// The ```` ```swift ```` blocks of `<name>.md` in the catalog, in order, one array of lines each.
    static func swiftBlocks(ofArticle name: String) throws -> [[String]] {
        let text = try String(contentsOf: catalog.appendingPathComponent("\(name).md"), encoding: .utf8)
        var blocks: [[String]] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```swift") {
                current = []
            } else if line.hasPrefix("```"), let block = current {
                blocks.append(block)
                current = nil
            } else if current != nil {
                current?.append(String(line))
            }
        }
        return blocks
    }

    /// Lines without indentation and without blank lines, for comparing code at different depths.
    static func normalized(_ lines: [String]) -> [String] {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Expects the articles to hold `count` Swift blocks in all (so a block added to an article
    /// needs its test copy too), each found line for line (indentation and blank lines aside) in
    /// the test file at `testFile`.
    static func expectEveryBlock(
        ofArticles names: [String], count: Int, isIn testFile: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let blocks = try names.flatMap { try swiftBlocks(ofArticle: $0) }
        #expect(blocks.count == count, "Swift blocks in \(names)", sourceLocation: sourceLocation)
        let source = normalized(
            try String(contentsOf: URL(fileURLWithPath: testFile), encoding: .utf8).components(separatedBy: "\n"))
        for block in blocks {
            let wanted = normalized(block)
            let found = source.indices.contains { start in
                start + wanted.count <= source.count && Array(source[start..<(start + wanted.count)]) == wanted
            }
            #expect(found, "not compiled by \(testFile):\n\(block.joined(separator: "\n"))",
                    sourceLocation: sourceLocation)
        }
    }
}
