import Foundation
import Testing

/// Every Swift block of every article in the DocC catalog is checked: either its article's guide
/// test file (``guideTestFiles``) holds it line for line (indentation and blank lines aside, its
/// `import` lines as the file's own imports), where it is compiled and, unless its paths are the
/// reader's own, run against a temporary database; or its first line marks it as a fragment, with
/// the reason (``DocumentationBlocks/fragmentMarker``).
@Suite struct ArticleCodeBlockTests {
    /// The one test file (under Tests/SqlCipherKitTests) that compiles each article's examples. One
    /// home per article keeps one copy of each example, beside the others of its article, instead of
    /// a second copy in whichever file happened to hold it first.
    static let guideTestFiles: [String: String] = [
        "Configuration": "Configuration/DatabaseConfigurationTests.swift",
        "CursorsAndStreams": "Concurrency/GuideConcurrencyExamplesTests.swift",
        "DatabasePools": "Pool/PoolGuideTests.swift",
        "FullTextSearch": "FullTextSearch/FullTextSearchGuideTests.swift",
        "FunctionsAndCollations": "Extensions/GuideExtensionExamplesTests.swift",
        "GettingStarted": "Database/BasicsGuideTests.swift",
        "HotBackup": "Files/HotBackupGuideTests.swift",
        "IsolationAndCancellation": "Concurrency/GuideConcurrencyExamplesTests.swift",
        "LiveQueries": "LiveQueries/LiveQueriesGuideTests.swift",
        "OpeningADatabase": "Database/OpeningGuideTests.swift",
        "QueryBuilder": "QueryBuilder/BuilderGuideExamplesTests.swift",
        "QueryingJSON": "QueryBuilder/JSONGuideTests.swift",
        "RawSQL": "Database/BasicsGuideTests.swift",
        "RekeyAndConversions": "Database/OpeningGuideTests.swift",
        "RowCoding": "Entity/EntityGuideTests.swift",
        "SQLInterpolation": "QueryBuilder/SQLInterpolationGuideTests.swift",
        "SchemaIntrospection": "Schema/SchemaGuideExamplesTests.swift",
        "SchemaMigrations": "Migrations/MigrationsGuideTests.swift",
        "Security": "Security/SecurityGuideTests.swift",
        "SqlCipherKit": "Database/BasicsGuideTests.swift",
        "TracingStatements": "Extensions/GuideExtensionExamplesTests.swift",
        "TransactionsAndSavepoints": "Database/BasicsGuideTests.swift",
        "WorkingWithEntities": "Entity/EntityGuideTests.swift",
    ]

    /// The test sources, each as normalized lines, by path under Tests/SqlCipherKitTests.
    private static func testSources() throws -> [String: [String]] {
        let root = DocumentationBlocks.catalog
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/SqlCipherKitTests")
        guard let files = FileManager.default.enumerator(atPath: root.path) else { return [:] }
        var sources: [String: [String]] = [:]
        for case let file as String in files where file.hasSuffix(".swift") {
            sources[file] = DocumentationBlocks.normalized(
                try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n"))
        }
        return sources
    }

    @Test func everySwiftBlockIsCompiledByItsGuideTestOrMarkedAsAFragment() throws {
        let sources = try Self.testSources()
        var checked = 0
        for article in try DocumentationBlocks.articleNames() {
            for (index, block) in try DocumentationBlocks.swiftBlocks(ofArticle: article).enumerated() {
                checked += 1
                let name = "\(article).md block \(index + 1)"
                if let reason = DocumentationBlocks.fragmentReason(block) {
                    #expect(reason.count >= 20, "\(name): a fragment says why it is one")
                    continue
                }
                guard let file = Self.guideTestFiles[article] else {
                    Issue.record("\(name): \(article) has no guide test file in ArticleCodeBlockTests.guideTestFiles")
                    continue
                }
                let source = try #require(sources[file], "\(file), the guide test file of \(article), is missing")
                let elsewhere = sources.filter { $0.key != file && DocumentationBlocks.contains($0.value, block) }.keys
                let found = DocumentationBlocks.contains(source, block)
                #expect(found, """
                    \(name) is neither compiled by \(file) nor marked as a fragment\
                    \(elsewhere.isEmpty ? "" : " (it is in \(elsewhere.sorted()): move it)"):
                    \(block.joined(separator: "\n"))
                    """)
            }
        }
        // The catalog has Swift blocks (a wrong catalog path would check nothing).
        #expect(checked > 50)
    }

    /// A guide test file named for an article that has no Swift block left, or a file that no
    /// longer exists, would be a home that checks nothing.
    @Test func everyGuideTestFileIsTheHomeOfAnArticleWithCode() throws {
        let sources = try Self.testSources()
        let articles = Set(try DocumentationBlocks.articleNames())
        for (article, file) in Self.guideTestFiles.sorted(by: { $0.key < $1.key }) {
            #expect(articles.contains(article), "\(article) is not an article of the catalog")
            #expect(sources[file] != nil, "\(file) (for \(article)) does not exist")
            let compiled = try articles.contains(article)
                ? DocumentationBlocks.swiftBlocks(ofArticle: article).filter { DocumentationBlocks.fragmentReason($0) == nil }
                : []
            #expect(!compiled.isEmpty, "\(article) has no compiled Swift block: remove it from guideTestFiles")
        }
    }

    /// An article is read in one sitting: none passes 300 lines (a longer one is split by topic, as
    /// WhyAnOpeningFails was split from OpeningADatabase), and every article is reachable from the
    /// landing page's topics, so that none exists only for whoever knows its name.
    @Test func everyArticleIsShortAndReachableFromTheLandingPage() throws {
        let landing = try String(contentsOf: DocumentationBlocks.catalog.appendingPathComponent("SqlCipherKit.md"), encoding: .utf8)
        for article in try DocumentationBlocks.articleNames() {
            let text = try String(contentsOf: DocumentationBlocks.catalog.appendingPathComponent(article + ".md"), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
            #expect(lines <= 300, "\(article).md has \(lines) lines: split it by topic")
            if article != "SqlCipherKit" {
                #expect(landing.contains("- <doc:\(article)>"), "\(article) is not in the landing page's topics")
            }
        }
    }
}
