import Foundation
import Testing

/// The Swift code blocks of the DocC catalog's articles, for `ArticleCodeBlockTests`, which finds
/// each of them line for line in its article's guide test file (or marked as a fragment), so an
/// example edited in the documentation without its test copy fails the run.
enum DocumentationBlocks {
    /// The catalog, found from this file's path (the tests run from the package's checkout).
    static let catalog = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/SqlCipherKit/SqlCipherKit.docc")

    /// The ```` ```swift ```` blocks of `<name>.md` in the catalog, in order, one array of lines each.
    /// A fence may be indented (a block inside a list item), so it is found after its leading blanks.
    static func swiftBlocks(ofArticle name: String) throws -> [[String]] {
        let text = try String(contentsOf: catalog.appendingPathComponent("\(name).md"), encoding: .utf8)
        var blocks: [[String]] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let fence = line.drop(while: { $0 == " " || $0 == "\t" })
            if fence.hasPrefix("```swift") {
                current = []
            } else if fence.hasPrefix("```"), let block = current {
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

    /// The marker that makes a block a fragment: its first line is `// Fragment: ` and the reason
    /// it cannot be compiled as it stands (a listing of results, the reader's own paths).
    static let fragmentMarker = "// Fragment: "

    /// The reason a block gives for being a fragment, or nil when it is code to compile.
    static func fragmentReason(_ block: [String]) -> String? {
        guard let first = normalized(block).first, first.hasPrefix(fragmentMarker) else { return nil }
        return String(first.dropFirst(fragmentMarker.count))
    }

    /// The names of the catalog's articles (`*.md`), sorted.
    static func articleNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: catalog.path)
            .filter { $0.hasSuffix(".md") }.map { String($0.dropLast(3)) }.sorted()
    }

    /// Whether `block` appears in `source` (normalized lines of a test file) line for line, its
    /// `import` lines aside: those must be imports of the file itself, since a function body cannot
    /// hold them.
    static func contains(_ source: [String], _ block: [String]) -> Bool {
        let lines = normalized(block)
        let imports = lines.filter { $0.hasPrefix("import ") }
        guard imports.allSatisfy({ line in
            let name = importName(line)
            return source.contains { importName($0) == name || importName($0).hasSuffix(" " + name) }
        }) else { return false }
        let wanted = lines.filter { !$0.hasPrefix("import ") }
        guard !wanted.isEmpty else { return true }
        return source.indices.contains { start in
            start + wanted.count <= source.count && Array(source[start..<(start + wanted.count)]) == wanted
        }
    }

    /// `import Foundation   // Data` -> `import Foundation`; `@testable import X` counts as `import X`.
    private static func importName(_ line: String) -> String {
        String(line.split(separator: "/", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces)
    }
}
