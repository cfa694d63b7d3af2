import Foundation
import Testing
@testable import SqlCipherKit

/// `FTS5Pattern` from user input: never an FTS5 syntax error, never an injection, and matching
/// exactly the documents it should.
@Suite struct FTS5PatternTests {
    @Test func tokensAreQuotedStrings() {
        #expect(FTS5Pattern(matchingAllTokensIn: "Serrano \"ham\"")?.rawPattern == #""Serrano" AND "ham""#)
        #expect(FTS5Pattern(matchingAnyTokenIn: "a OR b")?.rawPattern == #""a" OR "OR" OR "b""#)
        #expect(FTS5Pattern(matchingPhrase: " said, \"hello\" ")?.rawPattern == #""said hello""#)
        #expect(FTS5Pattern(matchingAllPrefixesIn: "enc no*")?.rawPattern == #""enc"* AND "no"*"#)
        // Under trigram only white space separates, so a quote can be part of a token: it is doubled.
        #expect(FTS5Pattern(matchingAllTokensIn: #"a"b cde"#, tokenizer: .trigram())?.rawPattern == #""a""b" AND "cde""#)
        // ascii: every non-ASCII character is part of a word, punctuation separates.
        #expect(FTS5Pattern(matchingAllTokensIn: "🎉x,y", tokenizer: .ascii)?.rawPattern == #""🎉x" AND "y""#)
        // A combining accent stays with its letter; NUL and other controls always separate.
        #expect(FTS5Pattern.tokens(in: "cafe\u{301} a\0b\u{7}c", .unicode61) == ["cafe\u{301}", "a", "b", "c"])
        #expect(FTS5Pattern.tokens(in: "a\0b", .whitespace) == ["a", "b"])
    }

    @Test func inputWithoutTokensIsNil() {
        for text in ["", "   ", "\"", "\"\"\"\"", "*", "^", ":", "()", "🎉", "\0", "- + ,"] {
            #expect(FTS5Pattern(matchingAllTokensIn: text) == nil, "\(text.debugDescription)")
            #expect(FTS5Pattern(matchingAnyTokenIn: text) == nil)
            #expect(FTS5Pattern(matchingPhrase: text) == nil)
            #expect(FTS5Pattern(matchingAllPrefixesIn: text) == nil)
        }
        #expect(FTS5Pattern(matchingAllTokensIn: " \t\n", tokenizer: .trigram()) == nil)
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func thePatternIsBoundNotSpliced() throws {
        let hostile = "x'); DROP TABLE notes; --"
        let pattern = try #require(FTS5Pattern(matchingAllTokensIn: hostile))
        let index = TableName("notes_fts")
        let fragment = try Select(.all).from(index).where(index.match(pattern)).render()
        #expect(fragment.sql == #"SELECT * FROM "notes_fts" WHERE "notes_fts"."notes_fts" MATCH :l1"#)
        #expect(fragment.literals == [.text(pattern.rawPattern)])
        // The same shape for another pattern: one statement in the cache.
        #expect(try Select(.all).from(index).where(index.match(FTS5Pattern(matchingAllTokensIn: "b")!)).render().sql
            == fragment.sql)
        #expect(try Select(.all).from(index.as("f")).where(index.as("f").match(pattern)).render().sql
            == #"SELECT * FROM "notes_fts" AS "f" WHERE "f"."notes_fts" MATCH :l1"#)
        #expect(try Select(.all).from(index).where(col("body").match(pattern)).render().sql
            == #"SELECT * FROM "notes_fts" WHERE "body" MATCH :l1"#)
    }

    /// The documents every hostile search runs against; each hostile text must find exactly the
    /// ids listed, without an error.
    static let documents: [(String, String)] = [
        ("one", #"He said "hello" and 'bye'"#),
        ("two", "star* power ^caret"),
        ("three", "NEAR(alpha beta) AND OR NOT"),
        ("four", "title: colon filter {title body}"),
        ("five", "emoji 🎉 party"),
        ("six", "nul\0inside"),
        ("seven", "Café crème"),
    ]

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func hostileInputNeverFailsAndFindsExactlyItsDocuments() async throws {
        let t = try await NotesDatabase()
        for (title, body) in Self.documents { try await t.add(title, body) }
        let allTokens: [(String, [Int])] = [
            (#""hello""#, [1]), ("'bye'", [1]), (#"said "hello" and"#, [1]), (#"""#, []),
            ("star*", [2]), ("^caret", [2]), ("*power", [2]), ("+star -power", [2]),
            ("NEAR(alpha", [3]), ("NEAR(", [3]), ("AND OR NOT", [3]), ("alpha)", [3]), ("NOT", [3]),
            ("title:", [4]), ("title: colon", [4]), ("{title body}:", [4]), ("four:", [4]), ("body:", [4]),
            ("emoji 🎉", [5]), ("🎉party", [5]), ("nul\0inside", [6]), ("inside\0", [6]),
            ("cafe", [7]), ("CAFÉ CREME", [7]), ("one:said", [1]),
            ("hello zzz", []), ("(", []),
        ]
        for (text, expected) in allTokens {
            guard let pattern = FTS5Pattern(matchingAllTokensIn: text) else {
                #expect(expected.isEmpty, "no pattern for \(text.debugDescription)")
                continue
            }
            #expect(try await t.ids(matching: pattern) == expected, "all tokens of \(text.debugDescription)")
        }
        let anyToken: [(String, [Int])] = [
            ("zzz OR hello", [1, 3]), ("NOT caret", [2, 3]), ("\"bye\" 🎉 party", [1, 5]),
        ]
        for (text, expected) in anyToken {
            let pattern = try #require(FTS5Pattern(matchingAnyTokenIn: text))
            #expect(try await t.ids(matching: pattern) == expected, "any token of \(text.debugDescription)")
        }
        let phrases: [(String, [Int])] = [
            (#"said "hello""#, [1]), ("hello said", []), ("AND OR", [3]), ("OR AND", []), ("alpha) beta", [3]),
        ]
        for (text, expected) in phrases {
            let pattern = try #require(FTS5Pattern(matchingPhrase: text))
            #expect(try await t.ids(matching: pattern) == expected, "phrase \(text.debugDescription)")
        }
        let prefixes: [(String, [Int])] = [("he sa", [1]), ("st* ^car", [2]), ("N", [3, 6]), ("fi co", [4]), ("caf cr", [7])]
        for (text, expected) in prefixes {
            let pattern = try #require(FTS5Pattern(matchingAllPrefixesIn: text))
            #expect(try await t.ids(matching: pattern) == expected, "prefixes of \(text.debugDescription)")
        }
    }

    /// Under trigram a token of one or two characters holds no trigram and FTS5 finds no row for
    /// it: "hello w", typed into a search field, found nothing though "hello world" was there.
    @Test(.enabled(if: libraryHasFTS5() && sqliteVersionIsAtLeast(3_034_000), "needs FTS5's trigram"))
    func trigramPatternsLeaveOutTokensTooShortToMatch() async throws {
        #expect(FTS5Pattern(matchingAllTokensIn: "hello w", tokenizer: .trigram())?.rawPattern == #""hello""#)
        #expect(FTS5Pattern(matchingAnyTokenIn: "a bc", tokenizer: .trigram()) == nil)
        #expect(FTS5Pattern(matchingAllPrefixesIn: "wor h", tokenizer: .trigram())?.rawPattern == #""wor"*"#)
        #expect(FTS5Pattern(matchingPhrase: "o w", tokenizer: .trigram())?.rawPattern == #""o w""#)
        #expect(FTS5Pattern(matchingPhrase: "ab", tokenizer: .trigram()) == nil)
        // The characters are counted, not their bytes: "éé" is two.
        #expect(FTS5Pattern(matchingAllTokensIn: "éé", tokenizer: .trigram()) == nil)

        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("tri.db"), rawKey: rawKey(5))
        let tri = TableName("tri")
        try await db.migrate([FTSMigration("tri") { ctx in try ctx.execute(CreateFTS5Table(tri).column("text").tokenizer(.trigram())) }])
        try await db.execute("INSERT INTO tri(text) VALUES ('hello world'), ('goodbye')")
        func count(_ pattern: FTS5Pattern?) async throws -> Int {
            try await db.query(Select(col("rowid")).from(tri).where(tri.match(try #require(pattern)))).count
        }
        #expect(try await count(FTS5Pattern(matchingAllTokensIn: "hello w", tokenizer: .trigram())) == 1)
        #expect(try await count(FTS5Pattern(matchingAllPrefixesIn: "hel wo", tokenizer: .trigram())) == 1)
        #expect(try await count(FTS5Pattern(matchingAnyTokenIn: "bye x", tokenizer: .trigram())) == 1)
        #expect(try await count(FTS5Pattern(matchingPhrase: "o w", tokenizer: .trigram())) == 1)
        await db.close()
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func rawPatternsAreCheckedBySQLite() async throws {
        let valid = try FTS5Pattern(rawPattern: "alpha AND (beta OR gam*)")
        #expect(valid.rawPattern == "alpha AND (beta OR gam*)")
        for bad in ["NEAR(", "alpha AND", "\"unterminated", "a:b", "(", "AND", "*", ""] {
            #expect(throws: SqlCipherError.self, "\(bad.debugDescription)") { try FTS5Pattern(rawPattern: bad) }
        }
        do {
            _ = try FTS5Pattern(rawPattern: "alpha AND")
            Issue.record("no error")
        } catch let SqlCipherError.invalidQuery(reason) {
            #expect(reason.contains("FTS5 syntax") && reason.contains("matchingAllTokensIn"))
        }
        #expect(throws: SqlCipherError.self) { try FTS5Pattern(rawPattern: "a\0b") }
        // A column filter is checked against the columns given.
        #expect(throws: SqlCipherError.self) { try FTS5Pattern(rawPattern: "title: x", columns: ["body"]) }
        let filtered = try FTS5Pattern(rawPattern: "title: beta", columns: ["title", "body"])
        // A filter on a column not given says to give it, not to "fix the pattern"; columns that
        // make no FTS5 table say why.
        for (raw, columns) in [("title: x", [String]()), ("{title body}: x", ["title"]), ("-body: x", ["title"])] {
            let error = #expect(throws: SqlCipherError.self) { try FTS5Pattern(rawPattern: raw, columns: columns) }
            #expect(error?.description.contains("rawPattern:columns:") == true, "\(String(describing: error))")
        }
        for columns in [["rank"], ["a", "a"], ["body", "ROWID"]] {
            let error = #expect(throws: SqlCipherError.self) { try FTS5Pattern(rawPattern: "x", columns: columns) }
            #expect(error?.description.contains("each once, none named rank or rowid") == true, "\(String(describing: error))")
        }

        let t = try await NotesDatabase()
        try await t.add("beta", "alpha")
        try await t.add("alpha", "beta")
        #expect(try await t.ids(matching: filtered) == [1])
        #expect(try await t.ids(matching: valid) == [1, 2])
    }
}
