import Foundation
import Testing
@testable import SqlCipherKit

/// Whether the loaded library has SQLite's JSON functions (SQLCipher 4.6.1 does, 3.4.1 does not).
func libraryHasJSON() -> Bool {
    (try? loadedLibrary())?.capabilities.features.contains(.json) ?? false
}

/// Whether the loaded library has the `->` and `->>` operators (SQLite 3.38 and later).
func libraryHasJSONOperators() -> Bool {
    (try? loadedLibrary())?.capabilities.features.contains(.jsonOperators) ?? false
}

/// `json_extract`, `->`, `->>` and `json_each` as builder pieces: their SQL text, their results on
/// real documents, paths bound as values, and the typed refusal where the library lacks them.
@Suite struct JSONExpressionTests {
    static let notes = TableName("notes")

    /// An encrypted database with `notes(id, title, meta, tags)` and three notes.
    static func notesDatabase(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try builderTestDatabase(dir)
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, meta TEXT, tags TEXT)")
        let rows: [(String, String, String)] = [
            ("first", #"{"author": {"name": "Ada", "langs": ["en", "fr"]}, "stars": 5, "ratio": 0.5, "draft": true, "note": null}"#,
             #"["swift", "sqlite"]"#),
            ("second", #"{"author": {"name": "Grace"}, "stars": 3, "draft": false}"#, #"["cobol"]"#),
            ("third", #"{"stars": 4}"#, "[]"),
        ]
        for (title, meta, tags) in rows {
            try await db.execute("INSERT INTO notes(title, meta, tags) VALUES (?, ?, ?)", title, meta, tags)
        }
        return db
    }

    static func values<T: DatabaseValueConvertible>(_ rows: [Row], _ type: T.Type, column: Int = 0) -> [T?] {
        rows.map { $0.get(column, as: T.self) }
    }

    /// Hostile paths and documents get SQLite's error with what to do: SQLite's "bad JSON path: 'x'"
    /// and "malformed JSON" named neither the rule nor the remedy. Every builder form (json_extract,
    /// ->, ->>, json_each) and a raw statement say it; a path that is valid but finds nothing is NULL.
    @Test(.enabled(if: libraryHasJSON(), "needs the JSON functions"))
    func badPathsAndDocumentsSayWhatToDo() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        let meta = col("meta")
        for path in ["", "a", "$.", "$.\"a", "'; DROP TABLE notes; --", "\u{FFFF}", String(repeating: ".a", count: 100_000)] {
            var attempts: [Select] = [Select(meta.jsonExtract(atPath: path)).from(Self.notes)]
            if libraryHasJSONOperators(), path.hasPrefix("$") || path.isEmpty {
                attempts += [Select(meta.jsonRepresentation(atPath: path)).from(Self.notes),
                             Select(meta.jsonValue(atPath: path)).from(Self.notes)]
            }
            for select in attempts {
                let error = await #expect(throws: SqlCipherError.self) { try await db.query(select) }
                let message = error?.description ?? ""
                #expect(message.contains("bad JSON path") && message.contains("a JSON path starts with $"), "\(message.prefix(300))")
                #expect(message.count < 5_000)
            }
            let each = JSONEach(meta, atPath: path).as("e")
            let error = await #expect(throws: SqlCipherError.self) {
                try await db.query(literal: "SELECT \(each.value) FROM notes, \(each)")
            }
            #expect(error?.description.contains("Fix the path") == true, "\(String(describing: error).prefix(300))")
        }
        #expect(try await db.query(Select(meta.jsonExtract(atPath: "$.nothing[99999999999]")).from(Self.notes)).count == 3)
        try await db.execute("INSERT INTO notes(title, meta) VALUES ('broken', '{not json')")
        let malformed = await #expect(throws: SqlCipherError.self) {
            try await db.query(Select(meta.jsonExtract(atPath: "$.stars")).from(Self.notes))
        }
        #expect(malformed?.description.contains("json_valid") == true, "\(String(describing: malformed))")
        #expect(try await db.query("SELECT json_extract(meta, '$.stars') FROM notes WHERE json_valid(meta)").count == 3)
        await db.close()
    }

    // MARK: Rendered text

    @Test(.enabled(if: libraryHasJSONOperators(), "needs SQLite 3.38's -> and ->>"))
    func everyPathIsABoundValueInTheRenderedText() throws {
        let notes = Self.notes
        let fragment = try Select(
            col("meta").jsonExtract(atPath: "$.author.name").as("author"),
            col("meta").jsonRepresentation(atPath: "$.author").as("json"))
            .from(notes)
            .where(col("meta").jsonValue(atPath: "stars") >= 4)
            .orderBy(col("meta").jsonValue(atPath: "$.author").jsonValue(atPath: "name").descending)
            .render()
        #expect(fragment.sql == #"SELECT json_extract("meta", :l1) AS "author", "meta" -> :l2 AS "json" FROM "notes" "#
            + #"WHERE "meta" ->> :l3 >= :l4 ORDER BY "meta" ->> :l5 ->> :l6 DESC"#)
        #expect(fragment.literals == [.text("$.author.name"), .text("$.author"), .text("stars"), .integer(4),
                                      .text("$.author"), .text("name")])

        let tags = JSONEach(notes.col("tags"), atPath: "$").as("t")
        let joined = try Select(notes.col("id"), tags.value, tags.key, tags.type, tags.atom, tags.id, tags.parent,
                                tags.fullkey, tags.path)
            .from(notes).join(tags, on: tags.value == "swift").render()
        #expect(joined.sql == #"SELECT "notes"."id", "t"."value", "t"."key", "t"."type", "t"."atom", "t"."id", "#
            + #""t"."parent", "t"."fullkey", "t"."path" FROM "notes" INNER JOIN json_each("notes"."tags", :l1) AS "t" "#
            + #"ON "t"."value" = :l2"#)
        #expect(joined.literals == [.text("$"), .text("swift")])
        let unaliased = try Select(JSONEach(col("tags")).value).from(JSONEach(col("tags"))).render()
        #expect(unaliased.sql == #"SELECT "json_each"."value" FROM json_each("tags")"#)
    }

    @Test(.enabled(if: libraryHasJSONOperators(), "needs SQLite 3.38's -> and ->>"))
    func theOperatorsBindTighterThanComparisonsAndParenthesizeAComparisonOperand() throws {
        // `->>` binds tighter than `=`, so no parentheses; an operand that is a comparison gets them.
        let fragment = try Select(.all).from(Self.notes)
            .where((col("a") == col("b")).jsonValue(atPath: "$") == 1 && !col("meta").jsonValue(atPath: "x").isNull)
            .render()
        #expect(fragment.sql == #"SELECT * FROM "notes" WHERE ("a" = "b") ->> :l1 = :l2 AND NOT ("meta" ->> :l3 IS NULL)"#)
    }

    // MARK: Results

    @Test(.enabled(if: libraryHasJSON(), "needs the JSON functions"))
    func jsonExtractReadsScalarsObjectsArraysAndNestedPaths() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        let meta = col("meta")
        let rows = try await db.query(
            Select(meta.jsonExtract(atPath: "$.author.name"), meta.jsonExtract(atPath: "$.stars"), meta.jsonExtract(atPath: "$.ratio"),
                   meta.jsonExtract(atPath: "$.draft"), meta.jsonExtract(atPath: "$.note"), meta.jsonExtract(atPath: "$.author"),
                   meta.jsonExtract(atPath: "$.author.langs"), meta.jsonExtract(atPath: "$.author.langs[#-1]"),
                   meta.jsonExtract(atPath: "$.missing.deeper"))
                .from(Self.notes).where(col("id") == 1))
        let row = try #require(rows.first)
        #expect(row.get(0, as: String.self) == "Ada")
        #expect(row.get(1, as: Int.self) == 5)
        #expect(row.get(2, as: Double.self) == 0.5)
        #expect(row.get(3, as: Int.self) == 1)   // JSON true is the integer 1
        #expect(row[4] == .null)                 // JSON null
        #expect(row.get(5, as: String.self) == #"{"name":"Ada","langs":["en","fr"]}"#)
        #expect(row.get(6, as: String.self) == #"["en","fr"]"#)
        #expect(row.get(7, as: String.self) == "fr")
        #expect(row[8] == .null)                 // missing path

        // In WHERE and ORDER BY.
        let byStars = try await db.query(
            Select(col("title")).from(Self.notes).where(meta.jsonExtract(atPath: "$.stars") >= 4)
                .orderBy(meta.jsonExtract(atPath: "$.stars").descending))
        #expect(Self.values(byStars, String.self) == ["first", "third"])
    }

    @Test(.enabled(if: libraryHasJSONOperators(), "needs SQLite 3.38's -> and ->>"))
    func theArrowsReturnJSONTextAndSQLValues() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        let meta = col("meta")
        let rows = try await db.query(
            Select(meta.jsonRepresentation(atPath: "$.author.name"), meta.jsonValue(atPath: "$.author.name"),
                   meta.jsonRepresentation(atPath: "author").jsonValue(atPath: "langs").jsonValue(atPath: "$[0]"),
                   meta.jsonValue(atPath: "stars"), meta.jsonValue(atPath: "draft"),
                   meta.jsonRepresentation(atPath: "$.author.langs"), meta.jsonValue(atPath: "$.nothing"),
                   meta.jsonRepresentation(atPath: "nothing"))
                .from(Self.notes).where(col("id") == 1))
        let row = try #require(rows.first)
        #expect(row.get(0, as: String.self) == #""Ada""#)   // -> gives JSON text: a quoted string
        #expect(row.get(1, as: String.self) == "Ada")        // ->> gives the SQL value
        #expect(row.get(2, as: String.self) == "en")         // chained, labels without $
        #expect(row.get(3, as: Int.self) == 5)
        #expect(row.get(4, as: Int.self) == 1)
        #expect(row.get(5, as: String.self) == #"["en","fr"]"#)
        #expect(row[6] == .null)
        #expect(row[7] == .null)

        let byAuthor = try await db.query(
            Select(col("id")).from(Self.notes).where(meta.jsonValue(atPath: "$.author.name").isNotNull)
                .orderBy(meta.jsonValue(atPath: "$.author.name").descending))
        #expect(Self.values(byAuthor, Int.self) == [2, 1])
    }

    @Test(.enabled(if: libraryHasJSONOperators(), "needs SQLite 3.38's -> and ->>"))
    func hostilePathsArriveAsValuesAndNeverAsSQL() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        let hostile = "'; DROP TABLE notes; --"
        let quoted = "a.b'c"
        let document = try String(data: JSONSerialization.data(withJSONObject: [hostile: "dropped?", quoted: 7]),
                                  encoding: .utf8)!
        try await db.execute("INSERT INTO notes(id, meta) VALUES (10, ?)", document)

        let select = Select(col("meta").jsonValue(atPath: hostile), col("meta").jsonExtract(atPath: #"$."a.b'c""#))
            .from(Self.notes).where(col("id") == 10)
        let text = try select.render().sql
        #expect(!text.contains("DROP") && !text.contains("b'c"))
        let row = try #require(try await db.query(select).first)
        #expect(row.get(0, as: String.self) == "dropped?")   // the label found as written
        #expect(row.get(1, as: Int.self) == 7)

        // A path that is no JSON path is SQLite's error, typed, and the table is still there.
        await #expect {
            try await db.query(Select(col("meta").jsonExtract(atPath: "') OR 1=1 --")).from(Self.notes))
        } throws: { error in
            guard case SqlCipherError.sqlite(_, _, let message, _) = error else { return false }
            return message.contains("JSON path")
        }
        #expect(try await db.query(Select(.count).from(Self.notes))[0].get(0, as: Int.self) == 4)
    }

    @Test(.enabled(if: libraryHasJSON(), "needs the JSON functions"))
    func invalidJSONFailsWithATypedError() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        try await db.execute("INSERT INTO notes(id, meta, tags) VALUES (20, '{not json', '[1,')")
        await #expect {
            try await db.query(Select(col("meta").jsonExtract(atPath: "$.a")).from(Self.notes).where(col("id") == 20))
        } throws: { error in
            guard case SqlCipherError.sqlite(_, _, let message, _) = error else { return false }
            return message.contains("malformed JSON")
        }
        let tags = JSONEach(col("tags"))
        await #expect {
            // json_each has an `id` column of its own: the table's is qualified.
            try await db.query(Select(tags.value).from(Self.notes).join(tags, on: SQLExpression.value(true))
                .where(Self.notes.col("id") == 20))
        } throws: { error in
            guard case SqlCipherError.sqlite(_, _, let message, _) = error else { return false }
            return message.contains("malformed JSON")
        }
    }

    // MARK: json_each

    @Test(.enabled(if: libraryHasJSON(), "needs the JSON functions"))
    func jsonEachHasOneRowPerElementWithEveryColumn() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let each = JSONEach(SQLExpression.value(#"{"a": 1, "b": [2, "x"], "c": null}"#))
        let rows = try await db.query(
            Select(each.key, each.value, each.type, each.atom, each.id, each.parent, each.fullkey, each.path)
                .from(each).orderBy(each.key))
        #expect(Self.values(rows, String.self) == ["a", "b", "c"])
        #expect(rows[0].get(1, as: Int.self) == 1)
        #expect(rows[1].get(1, as: String.self) == #"[2,"x"]"#)
        #expect(rows[2][1] == .null)
        #expect(Self.values(rows, String.self, column: 2) == ["integer", "array", "null"])
        #expect(rows[0].get(3, as: Int.self) == 1)
        #expect(rows[1][3] == .null)   // no atom for an array
        #expect(rows.allSatisfy { $0.get(4, as: Int.self) != nil })
        #expect(rows.allSatisfy { $0[5] == .null })   // json_each does not descend
        #expect(Self.values(rows, String.self, column: 6) == ["$.a", "$.b", "$.c"])
        #expect(Self.values(rows, String.self, column: 7) == ["$", "$", "$"])

        // From a path, under an alias: the array's elements, keyed by index.
        let inner = JSONEach(SQLExpression.value(#"{"a": 1, "b": [2, "x"]}"#), atPath: "$.b").as("e")
        let elements = try await db.query(Select(inner.key, inner.value, inner.fullkey).from(inner).orderBy(inner.key))
        #expect(Self.values(elements, Int.self) == [0, 1])
        #expect(elements[1].get(1, as: String.self) == "x")
        #expect(Self.values(elements, String.self, column: 2) == ["$.b[0]", "$.b[1]"])
        // A document from a parameter: one template, run with several documents.
        let document = Param<String>("document")
        let fromParameter = JSONEach(document)
        let sum = Select(SQLExpression.total(fromParameter.value).as("sum")).from(fromParameter)
        #expect(try sum.render().sql == #"SELECT total("json_each"."value") AS "sum" FROM json_each(:p_document)"#)
        #expect(try await db.query(sum, document.set("[1, 2, 3]"))[0].get(0, as: Double.self) == 6)
        #expect(try await db.query(sum, document.set("[10]"))[0].get(0, as: Double.self) == 10)
        // A path to nothing walks nothing.
        let none = JSONEach(SQLExpression.value("[1]"), atPath: "$.nothing")
        #expect(try await db.query(Select(none.value).from(none)).isEmpty)
    }

    @Test(.enabled(if: libraryHasJSON(), "needs the JSON functions"))
    func jsonEachFollowsEachRowOfAnOuterTable() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        let notes = Self.notes
        let tags = JSONEach(notes.col("tags"))

        let tagged = try await db.query(
            Select(notes.col("id")).distinct().from(notes).join(tags, on: tags.value == "swift"))
        #expect(Self.values(tagged, Int.self) == [1])

        let counts = try await db.query(
            Select(notes.col("id"), .count(tags.value).as("n")).from(notes)
                .leftJoin(tags, on: SQLExpression.value(true)).groupBy(notes.col("id")).orderBy(notes.col("id")))
        #expect(Self.values(counts, Int.self, column: 1) == [2, 1, 0])   // the empty array's note kept

        // A correlated subquery, through an SQL literal.
        let wanted = "cobol"
        let inSubquery = try await db.query(
            literal: "SELECT id FROM notes WHERE \(wanted) IN (\(Select(tags.value).from(tags))) ORDER BY id")
        #expect(Self.values(inSubquery, Int.self) == [2])

        // The source itself interpolated into a literal's FROM, with its alias and bound path.
        let aliased = JSONEach(notes.col("tags"), atPath: "$").as("t \"x\"")
        let literal: SQL = "SELECT DISTINCT \(aliased.value) FROM notes, \(aliased) WHERE notes.id = \(1) ORDER BY 1"
        #expect(try literal.render().sql
            == #"SELECT DISTINCT "t ""x"""."value" FROM notes, json_each("notes"."tags", ?) AS "t ""x""" WHERE notes.id = ? ORDER BY 1"#)
        #expect(try literal.render().literals == [.text("$"), .integer(1)])
        #expect(Self.values(try await db.query(literal: literal), String.self).count == 2)
    }

    // MARK: Other statements and SQL literals

    @Test(.enabled(if: libraryHasJSON(), "needs the JSON functions"))
    func updateDeleteAndSQLLiteralsTakeJSONExpressions() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        let meta = col("meta")
        let changed = try await db.execute(
            Update(Self.notes).set(col("title"), to: meta.jsonExtract(atPath: "$.author.name"))
                .where(meta.jsonExtract(atPath: "$.author").isNotNull))
        #expect(changed == 2)
        let removed = try await db.execute(Delete(Self.notes).where(meta.jsonExtract(atPath: "$.stars") < 4))
        #expect(removed == 1)

        let path = "$.stars"
        let literal = try await db.query(
            literal: "SELECT title, \(meta.jsonExtract(atPath: path)) AS stars FROM notes WHERE \(meta.jsonExtract(atPath: path)) > \(4) ")
        #expect(Self.values(literal, String.self) == ["Ada"])
        #expect(literal.first?.get("stars", as: Int.self) == 5)
        let text = try ("SELECT \(meta.jsonExtract(atPath: path))" as SQL).render()
        #expect(text.sql == #"SELECT json_extract("meta", ?)"# && text.literals == [.text(path)])
    }

    @Test(.enabled(if: libraryHasJSON(), "needs the JSON functions"))
    func aLiveQueryOverJSONSeesAWriteToTheTableItReads() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        let notes = Self.notes
        let tags = JSONEach(notes.col("tags"))
        let request = LiveRequest(placeholder: [String]()) { conn in
            try conn.query(
                Select(notes.col("meta").jsonExtract(atPath: "$.author.name").as("author")).distinct().from(notes)
                    .join(tags, on: tags.value == "sqlite").orderBy(col("author")))
                .compactMap { $0.get("author", as: String.self) }
        }
        let reader = LiveReader(db.values(of: request))
        #expect(try await reader.next() == ["Ada"])
        try await db.execute("UPDATE notes SET tags = ? WHERE id = 2", #"["cobol", "sqlite"]"#)
        #expect(try await reader.next() == ["Ada", "Grace"])
    }

    // MARK: Careless and hostile use

    /// SQLite's JSON functions read a path as C text, up to its first NUL: `"$.a\0b"` would
    /// silently read `$.a`. The builder refuses such a path, as it refuses such an identifier.
    @Test(.enabled(if: libraryHasJSONOperators(), "needs SQLite 3.38's -> and ->>"))
    func aPathHoldingANULIsRefusedRatherThanReadAsItsPrefix() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let document = SQLExpression.value(#"{"a": 1, "a\u0000b": 2, "t": [3]}"#)
        let hostile: [SQLExpression] = [
            document.jsonExtract(atPath: "$.a\0b"), document.jsonRepresentation(atPath: "$.a\0b"),
            document.jsonValue(atPath: "a\0b"),
        ]
        for expression in hostile {
            await #expect {
                try await db.query(Select(expression.as("v")))
            } throws: { error in
                guard case SqlCipherError.invalidQuery(let reason) = error else { return false }
                return reason.contains("NUL")
            }
        }
        let each = JSONEach(document, atPath: "$.t\0")
        await #expect {
            try await db.query(Select(each.value).from(each))
        } throws: { error in
            guard case SqlCipherError.invalidQuery(let reason) = error else { return false }
            return reason.contains("NUL")
        }
        // In an SQL literal too, and the same path without the NUL still reads.
        await #expect(throws: SqlCipherError.self) {
            try await db.query(literal: "SELECT \(document.jsonValue(atPath: "a\0b"))")
        }
        #expect(try await db.query(Select(document.jsonValue(atPath: "a")))[0].get(0, as: Int.self) == 1)
    }

    /// What `->` and `->>` make of a path that is not a `$` path, as the documentation says: one
    /// label, except text in brackets (an array index), and a label with a `"` reaches nothing.
    @Test(.enabled(if: libraryHasJSONOperators(), "needs SQLite 3.38's -> and ->>"))
    func aBareLabelIsOneMemberExceptBracketsAndQuotes() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let object = SQLExpression.value(#"{"0": "zero", "a.b": "dotted", "[x": "open", "[1]": "bracketed", "a\"b": "quoted", "é 🙂": "wide"}"#)
        let array = SQLExpression.value(#"["first", "second"]"#)
        let row = try #require(try await db.query(Select(
            object.jsonValue(atPath: "0"), object.jsonValue(atPath: "a.b"), object.jsonValue(atPath: "[x"),
            object.jsonValue(atPath: "[1]"), array.jsonValue(atPath: "[1]"), object.jsonValue(atPath: #"a"b"#),
            object.jsonValue(atPath: "é 🙂"), array.jsonValue(atPath: "0"))).first)
        #expect(row.get(0, as: String.self) == "zero")       // digits are a label
        #expect(row.get(1, as: String.self) == "dotted")
        #expect(row.get(2, as: String.self) == "open")
        #expect(row[3] == .null)                             // "[1]" is the index 1, not the label
        #expect(row.get(4, as: String.self) == "second")
        #expect(row[5] == .null)                             // a label with " reaches nothing
        #expect(row.get(6, as: String.self) == "wide")
        #expect(row[7] == .null)                             // "0" is no index
        // The empty text is no path at all.
        await #expect {
            try await db.query(Select(object.jsonValue(atPath: "")))
        } throws: { error in
            guard case SqlCipherError.sqlite(_, _, let message, _) = error else { return false }
            return message.contains("JSON path")
        }
    }

    /// Paths that differ only in their text render the same SQL, so they share one cached
    /// statement; each run binds its own path and reads its own member. Expressions with
    /// different paths or operators are different values.
    @Test(.enabled(if: libraryHasJSONOperators(), "needs SQLite 3.38's -> and ->>"))
    func expressionsThatShareAStatementStillReadTheirOwnPaths() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        let meta = col("meta")
        #expect(meta.jsonValue(atPath: "$.a") != meta.jsonValue(atPath: "$.b"))
        #expect(meta.jsonValue(atPath: "$.a") != meta.jsonRepresentation(atPath: "$.a"))
        #expect(meta.jsonExtract(atPath: "$.a") != meta.jsonValue(atPath: "$.a"))
        #expect(Set([meta.jsonValue(atPath: "$.a"), meta.jsonValue(atPath: "$.a"), meta.jsonValue(atPath: "$.b")]).count == 2)
        #expect(JSONEach(meta) != JSONEach(meta, atPath: "$"))
        #expect(JSONEach(meta).as("t") != JSONEach(meta).as("u"))

        let stars = Select(meta.jsonValue(atPath: "$.stars")).from(Self.notes).where(col("id") == 1)
        let name = Select(meta.jsonValue(atPath: "$.author.name")).from(Self.notes).where(col("id") == 1)
        #expect(try stars.render().sql == name.render().sql)
        for _ in 0..<3 {
            #expect(try await db.query(stars)[0].get(0, as: Int.self) == 5)
            #expect(try await db.query(name)[0].get(0, as: String.self) == "Ada")
        }
        // Huge and non-ASCII paths are values like any other.
        let long = String(repeating: "k", count: 200_000)
        let document = try String(data: JSONSerialization.data(withJSONObject: [long: 1, "ключ": ["ü": 2]]), encoding: .utf8)!
        let row = try #require(try await db.query(Select(
            SQLExpression.value(document).jsonValue(atPath: long),
            SQLExpression.value(document).jsonExtract(atPath: "$.ключ.ü"))).first)
        #expect(row.get(0, as: Int.self) == 1 && row.get(1, as: Int.self) == 2)
    }

    /// A chain of operators deeper than SQLite's expression limit is refused as any too-deep
    /// expression is, with a typed error rather than a crash; a chain within it runs.
    @Test(.enabled(if: libraryHasJSONOperators(), "needs SQLite 3.38's -> and ->>"))
    func aChainPastTheDepthLimitIsATypedError() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        var deep = SQLExpression.value(#"{"a": 1}"#)
        for _ in 0..<1_200 { deep = deep.jsonRepresentation(atPath: "a") }
        await #expect {
            try await db.query(Select(deep))
        } throws: { error in
            guard case SqlCipherError.invalidQuery(let reason) = error else { return false }
            return reason.contains("SQLITE_MAX_EXPR_DEPTH")
        }
        var nested = "1"
        for _ in 0..<50 { nested = #"{"a": \#(nested)}"# }
        var chain = SQLExpression.value(nested)
        for _ in 0..<50 { chain = chain.jsonRepresentation(atPath: "a") }
        #expect(try await db.query(Select(chain))[0].get(0, as: String.self) == "1")
    }

    /// SQLite 3.45 and later read a BLOB as its binary JSONB when the bytes are valid JSONB, which
    /// JSON text of the right length is (`{"ab":1}`: a header byte for an array of 7 bytes): the
    /// document is then misread, as the documentation warns. The same text as TEXT reads right.
    @Test(.enabled(if: ((try? loadedLibrary())?.sqliteVersionNumber ?? 0) >= 3_045_000, "needs SQLite 3.45's JSONB"))
    func aDocumentInABlobIsReadAsJSONBWhenItCanBe() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let text = #"{"ab":1}"#
        let row = try #require(try await db.query(Select(
            SQLExpression.value(text).jsonExtract(atPath: "$.ab"), SQLExpression.value(Data(text.utf8)).jsonExtract(atPath: "$.ab"),
            SQLExpression.value(Data(#"{"a": [7]}"#.utf8)).jsonExtract(atPath: "$.a[0]"))).first)
        #expect(row.get(0, as: Int.self) == 1)
        #expect(row[1] == .null)                 // misread as JSONB, with no error
        #expect(row.get(2, as: Int.self) == 7)   // not valid JSONB: read as text
    }

    /// Aliases are quoted identifiers; two unaliased `json_each` sources are SQLite's ambiguity,
    /// reported as a typed error.
    @Test(.enabled(if: libraryHasJSON(), "needs the JSON functions"))
    func aliasesAreQuotedAndTwoUnaliasedSourcesAreATypedError() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        let odd = JSONEach(SQLExpression.value("[1, 2]")).as(#"t" AS x; --"#)
        #expect(try Select(odd.value).from(odd).render().sql
            == #"SELECT "t"" AS x; --"."value" FROM json_each(:l1) AS "t"" AS x; --""#)
        #expect(try await db.query(Select(SQLExpression.total(odd.value)).from(odd))[0].get(0, as: Double.self) == 3)
        let first = JSONEach(SQLExpression.value("[1]")), second = JSONEach(SQLExpression.value("[2]"))
        await #expect {
            try await db.query(Select(first.value).from(first).join(second, on: SQLExpression.value(true)))
        } throws: { error in
            guard case SqlCipherError.sqlite(_, _, let message, _) = error else { return false }
            return message.contains("ambiguous")
        }
        await #expect(throws: SqlCipherError.self) {
            try await db.query(Select(JSONEach(col("x")).as("a\0b").value).from(JSONEach(col("x")).as("a\0b")))
        }
    }

    // MARK: The refusal where the library lacks JSON

    /// Whether `error` is the refusal that names `capability`.
    static func isRefusal(_ error: any Error, naming capability: String) -> Bool {
        guard case SqlCipherError.unsupported(let feature, let requires, _) = error else { return false }
        return feature.contains("`\(capability)` capability") && !requires.isEmpty
            && String(describing: error).contains("libsqlcipher1")
    }

    @Test(.enabled(if: !libraryHasJSONOperators(), "a library without -> and ->> (SQLCipher 3.4.1)"))
    func theArrowsAreRefusedNamingTheirCapabilityBeforeSQLiteSeesThem() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, meta TEXT)")
        for expression in [col("meta").jsonRepresentation(atPath: "$.a"), col("meta").jsonValue(atPath: "$.a")] {
            #expect { try Select(expression).from(Self.notes).render() } throws: { error in
                Self.isRefusal(error, naming: "jsonOperators")
            }
            await #expect { try await db.query(Select(.all).from(Self.notes).where(expression == 1)) } throws: { error in
                Self.isRefusal(error, naming: "jsonOperators")
            }
            await #expect { try await db.execute(Update(Self.notes).set(col("meta"), to: expression)) } throws: { error in
                Self.isRefusal(error, naming: "jsonOperators")
            }
            await #expect { try await db.query(literal: "SELECT \(expression) FROM notes") } throws: { error in
                Self.isRefusal(error, naming: "jsonOperators")
            }
        }
    }

    /// A pool's reader runs `json_each` as the writer does, and a live query over a document
    /// alone (no table) gives its value and keeps running while tables change.
    @Test(.enabled(if: libraryHasJSON(), "needs the JSON functions"))
    func aPoolReaderAndALiveQueryOverADocumentAloneRunJSONEach() async throws {
        let dir = TemporaryDirectory()
        let db = try await Self.notesDatabase(dir)
        await db.close()
        let pool = try DatabasePool(path: dir.path("test.db"), rawKey: rawKey())
        let tags = JSONEach(Self.notes.col("tags")).as("t")
        let rows = try await pool.query(
            Select(tags.value).from(Self.notes).join(tags, on: SQLExpression.value(true)).orderBy(tags.value))
        #expect(Self.values(rows, String.self) == ["cobol", "sqlite", "swift"])
        let each = JSONEach(SQLExpression.value("[1, 2, 3]"))
        let request = LiveRequest(placeholder: 0.0) { conn in
            try conn.query(Select(SQLExpression.total(each.value)).from(each))[0].get(0, as: Double.self) ?? -1
        }
        let reader = LiveReader(pool.values(of: request))
        #expect(try await reader.next() == 6)
        try await pool.execute("UPDATE notes SET title = 'changed' WHERE id = 1")
        #expect(try await pool.query(Select(SQLExpression.total(each.value)).from(each))[0].get(0, as: Double.self) == 6)
        await pool.close()
    }

    struct Note: Entity, Equatable {
        static let tableName = TableName("notes")
        static let primaryKey: WritableKeyPath<Note, Int?> & Sendable = \.id
        var id: Int?
        var meta: String
    }

    @Test(.enabled(if: libraryHasJSONOperators(), "needs SQLite 3.38's -> and ->>"))
    func entitiesAreFetchedCountedAndDeletedByJSONPredicates() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, meta TEXT)")
        try await db.save([Note(id: nil, meta: #"{"stars": 5}"#), Note(id: nil, meta: #"{"stars": 2}"#),
                           Note(id: nil, meta: #"{"stars": 4, "tags": ["x"]}"#)])
        let stars = col("meta").jsonValue(atPath: "stars")
        #expect(try await db.fetch(Note.self, where: stars >= 4, orderBy: stars.descending).map(\.id) == [1, 3])
        #expect(try await db.count(Note.self, where: col("meta").jsonExtract(atPath: "$.tags[0]") == "x") == 1)
        #expect(try await db.delete(Note.self, where: stars.in([2, 5])) == 2)
        #expect(try await db.fetch(Note.self).map(\.id) == [3])
    }

    @Test(.enabled(if: !libraryHasJSONOperators(), "a library without -> and ->> (SQLCipher 3.4.1)"))
    func everyPieceThatHoldsJSONIsRefusedNamingItsCapability() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, meta TEXT)")
        try await db.save(Note(id: nil, meta: "{}"))
        let meta = col("meta")
        for (expression, capability) in [(meta.jsonValue(atPath: "a"), "jsonOperators"),
                                         (meta.jsonRepresentation(atPath: "a"), "jsonOperators"),
                                         (meta.jsonExtract(atPath: "$.a"), libraryHasJSON() ? "" : "json")] {
            guard !capability.isEmpty else { continue }
            let refused = { (error: any Error) in Self.isRefusal(error, naming: capability) }
            await #expect(performing: { try await db.fetch(Note.self, where: expression == 1) }, throws: refused)
            await #expect(performing: { try await db.fetch(Note.self, orderBy: expression) }, throws: refused)
            await #expect(performing: { try await db.count(Note.self, where: expression.isNull) }, throws: refused)
            await #expect(performing: { try await db.delete(Note.self, where: expression.in([1, 2])) }, throws: refused)
            await #expect(performing: { try await db.query(Select(SQLExpression.max(expression)).from(Self.notes)) },
                          throws: refused)
            await #expect(performing: {
                try await db.query(Select(.all).from(Self.notes).where(col("id").in([expression])))
            }, throws: refused)
            await #expect(performing: {
                try await db.query(Select(col("id")).from(Self.notes).groupBy(expression))
            }, throws: refused)
            await #expect(performing: { try await db.query(literal: "SELECT count(*) FROM notes WHERE \(expression) = \(1)") },
                          throws: refused)
            var live = db.values(of: LiveRequest(placeholder: 0) { conn in
                try conn.query(Select(expression).from(Self.notes)).count
            }).makeAsyncIterator()
            await #expect(performing: { _ = try await live.next() }, throws: refused)
            #expect(expression.description == "<invalid expression>")   // no crash
        }
        // Nothing was changed by the refused statements.
        #expect(try await db.fetch(Note.self) == [Note(id: 1, meta: "{}")])
    }

    @Test(.enabled(if: !libraryHasJSON(), "a library without the JSON functions (SQLCipher 3.4.1)"))
    func jsonExtractAndJSONEachAreRefusedNamingTheJSONCapability() async throws {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, meta TEXT)")
        await #expect { try await db.query(Select(col("meta").jsonExtract(atPath: "$.a")).from(Self.notes)) } throws: { error in
            Self.isRefusal(error, naming: "json")
        }
        await #expect { try await db.execute(Delete(Self.notes).where(col("meta").jsonExtract(atPath: "$.a") == 1)) } throws: {
            Self.isRefusal($0, naming: "json")
        }
        let each = JSONEach(col("meta"))
        await #expect { try await db.query(Select(each.value).from(Self.notes).join(each, on: each.value == 1)) } throws: {
            Self.isRefusal($0, naming: "json")
        }
        await #expect { try await db.query(Select(each.value).from(each)) } throws: { Self.isRefusal($0, naming: "json") }
        await #expect { try await db.query(literal: "SELECT value FROM notes, \(each)") } throws: {
            Self.isRefusal($0, naming: "json")
        }
        // The message says what is missing and where it is.
        #expect { try Select(col("meta").jsonExtract(atPath: "$.a")).render() } throws: { error in
            String(describing: error).contains("json_extract()") && String(describing: error).contains("3.15")
        }
    }
}
