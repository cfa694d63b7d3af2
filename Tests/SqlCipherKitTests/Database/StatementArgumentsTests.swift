import Foundation
import SqlCipherKit
import Testing

/// `StatementArguments`: one `arguments:` form for every surface, positional (array literal) or
/// named (dictionary literal), with every parameter getting exactly one value.
@Suite struct StatementArgumentsTests {
    func database(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: dir.path("arguments.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, owner INTEGER)")
        return db
    }

    func titles(_ db: some DatabaseAccess) async throws -> [String] {
        try await db.query("SELECT title FROM notes ORDER BY id").map { $0.get("title", as: String.self) ?? "<null>" }
    }

    @Test func positionalAndNamedValuesReachTheirParameters() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        try await db.execute("INSERT INTO notes(title, owner) VALUES (?, ?)", arguments: ["positional", 1])
        try await db.execute("INSERT INTO notes(title, owner) VALUES (:title, :owner)", arguments: ["title": "colon", "owner": 2])
        try await db.execute("INSERT INTO notes(title, owner) VALUES (@title, @owner)", arguments: ["owner": 3, "title": "at"])
        try await db.execute("INSERT INTO notes(title, owner) VALUES ($title, $owner)", arguments: ["$title": "dollar", "$owner": 4])
        // A name used twice in the text is one parameter and takes one value.
        try await db.execute("INSERT INTO notes(title, owner) VALUES (:v || '-' || :v, :o)", arguments: ["v": "twice", "o": nil])
        #expect(try await titles(db) == ["positional", "colon", "at", "dollar", "twice-twice"])
        let owners = try await db.query("SELECT owner FROM notes ORDER BY id").map { $0.get(0, as: Int.self) }
        #expect(owners == [1, 2, 3, 4, nil])

        let named = try await db.query("SELECT title FROM notes WHERE owner = :owner", arguments: ["owner": 3])
        #expect(named.map { $0.get(0, as: String.self) } == ["at"])
        let ids = [1, 4]
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        let some = try await db.query("SELECT title FROM notes WHERE owner IN (\(marks)) ORDER BY id",
                                      arguments: StatementArguments(ids))
        #expect(some.map { $0.get(0, as: String.self) } == ["positional", "dollar"])
        let mixed: [(any DatabaseValueConvertible)?] = ["colon", 2]
        let found = try await db.query("SELECT id FROM notes WHERE title = ? AND owner = ?", arguments: StatementArguments(mixed))
        #expect(found.count == 1)
    }

    @Test func everySurfaceTakesTheSameArguments() async throws {
        struct Note: Decodable, Sendable, Equatable { let title: String }
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        try await db.execute("INSERT INTO notes(title, owner) VALUES ('a', 1), ('b', 2), ('c', 2)")
        let sql = "SELECT title FROM notes WHERE owner = :owner ORDER BY id"

        #expect(try await db.fetch(Note.self, sql: sql, arguments: ["owner": 2]) == [Note(title: "b"), Note(title: "c")])
        var streamed: [String] = []
        for try await row in db.stream(sql, arguments: ["owner": 2]) { streamed.append(row.get(0, as: String.self) ?? "") }
        #expect(streamed == ["b", "c"])
        let inBody = try await db.read { conn in
            let cursor = try conn.cursor(sql, arguments: ["owner": 1])
            var titles: [String] = []
            while let row = try cursor.next() { titles.append(row.get(0, as: String.self) ?? "") }
            let prepared = try conn.prepare(sql)
            let again = try prepared.query(arguments: ["owner": 2]).count
            return (titles, again, try conn.query(sql, arguments: ["owner": 2]).count)
        }
        #expect(inBody.0 == ["a"] && inBody.1 == 2 && inBody.2 == 2)
        let changed = try await db.transaction { conn in
            try conn.execute("UPDATE notes SET owner = :new WHERE owner = :old", arguments: ["new": 3, "old": 2])
        }
        #expect(changed == 2)

        var iterator = db.values(of: .query(sql, arguments: ["owner": 3])).makeAsyncIterator()
        #expect(try await iterator.next()?.count == 2)
        #expect(LiveRequest<[Row]>.query(sql, arguments: ["owner": 3]) == .query(sql, arguments: ["owner": 3]))
        #expect(LiveRequest<[Row]>.query(sql, arguments: ["owner": 3]) != .query(sql, arguments: ["owner": 4]))
        await db.close()

        let pool = try DatabasePool(path: dir.path("arguments.db"), rawKey: rawKey())
        #expect(try await pool.query(sql, arguments: ["owner": 3]).count == 2)
        #expect(try await pool.execute("DELETE FROM notes WHERE owner = ?", arguments: [3]) == 2)
        await pool.close()
    }

    @Test func everyParameterGetsExactlyOneValue() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let insert = "INSERT INTO notes(title, owner) VALUES (:title, :owner)"
        await #expect(throws: SqlCipherError.unknownParameter(name: "titel")) {
            try await db.execute(insert, arguments: ["titel": "x", "owner": 1])
        }
        await #expect(throws: SqlCipherError.unboundParameter(name: ":owner")) {
            try await db.execute(insert, arguments: ["title": "x"])
        }
        // Two spellings of one parameter.
        let twice = await #expect(throws: SqlCipherError.self) {
            try await db.execute(insert, arguments: ["title": "x", ":title": "y", "owner": 1])
        }
        guard case .invalidQuery(let reason)? = twice else {
            Issue.record("expected invalidQuery, got \(String(describing: twice))")
            return
        }
        #expect(reason.contains("two values"))
        // Named values do not fill an anonymous parameter.
        await #expect(throws: SqlCipherError.unboundParameter(name: "?2")) {
            try await db.execute("INSERT INTO notes(title, owner) VALUES (:title, ?)", arguments: ["title": "x"])
        }
        // The message says which key reaches the parameter: "?2" takes none (it said
        // arguments: ["2": value], a key that is then refused as unknown), and "@o" beside ":o"
        // needs its prefix (it said ["o": value], the very key that had been given).
        let anonymous = SqlCipherError.unboundParameter(name: "?2").description
        #expect(anonymous.contains("by position") && !anonymous.contains("[\"2\""), "\(anonymous)")
        let both = "SELECT :o, @o"
        await #expect(throws: SqlCipherError.unboundParameter(name: "@o")) {
            _ = try await db.query(both, arguments: ["o": 1])
        }
        #expect(SqlCipherError.unboundParameter(name: "@o").description.contains(#"arguments: ["@o": value]"#))
        #expect(SqlCipherError.unboundParameter(name: ":o").description.contains(#"arguments: ["o": value]"#))
        #expect(Array(try await db.query(both, arguments: ["@o": 2, ":o": 1])[0].values) == [.integer(1), .integer(2)])
        // A key holding a NUL names nothing, not the parameter before the NUL.
        await #expect(throws: SqlCipherError.unknownParameter(name: "title\0evil")) {
            try await db.execute(insert, arguments: ["title\0evil": "x", "owner": 1])
        }
        await #expect(throws: SqlCipherError.self) {
            try await db.execute("INSERT INTO notes(title, owner) VALUES (?, ?)", arguments: ["only one"])
        }
        #expect(try await titles(db).isEmpty)
    }

    /// A key the statement cannot take is refused with a message that is true and visible: a key
    /// spelled as SQLite names a numbered parameter (`"?1"` for `?1`) was said to be a parameter
    /// "the statement does not use" while the statement used it, and an empty key or one with a
    /// NUL printed as `:` or with the raw NUL in the message.
    @Test func keysNoParameterTakesAreRefusedWithATrueMessage() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        for (sql, key) in [("SELECT ?1", "?1"), ("SELECT ?5", "?5"), ("SELECT :a, ?2", "?2"), ("SELECT ?", "?1"), ("SELECT ?1", "?")] {
            let error = await #expect(throws: SqlCipherError.unknownParameter(name: key)) {
                _ = try await db.query(sql, arguments: [key: 1])
            }
            let message = error?.description ?? ""
            #expect(message.contains("by position") && !message.contains("does not use"), "\(message)")
        }
        #expect(try await db.query("SELECT ?5", arguments: [1, 2, 3, 4, 5])[0].get(0, as: Int.self) == 5)
        for key in ["", "a\0b", "line\nbreak", "\u{7F}"] {
            let error = await #expect(throws: SqlCipherError.unknownParameter(name: key)) {
                _ = try await db.query("SELECT :a", arguments: [key: 1])
            }
            let message = error?.description ?? ""
            #expect(!message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(message.debugDescription)")
            #expect(message.contains("does not use") && !message.contains("for :,"), "\(message)")
        }
        // Ordinary keys keep their spelling.
        #expect(SqlCipherError.unknownParameter(name: "titel").description.contains("for :titel, which"))
        #expect(SqlCipherError.unknownParameter(name: "@o").description.contains("for @o, which"))
    }

    @Test func hostileValuesArriveAsTheExactValue() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let hostile = ["'; DROP TABLE notes; --", "a\0b", "\"quoted\" 'both'", ":owner", "?", "é\u{FFFF}\u{10FFFF}"]
        for value in hostile {
            try await db.execute("INSERT INTO notes(title, owner) VALUES (:title, :owner)", arguments: ["title": value, "owner": 9])
        }
        #expect(try await titles(db) == hostile)
        let bytes = try await db.query("SELECT length(CAST(title AS BLOB)) FROM notes WHERE id = 2")[0].get(0, as: Int.self)
        #expect(bytes == 3)
    }

    @Test func templatesTakeNamedValues() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let notes = TableName("notes")
        let title = Param<String>("title"), owner = Param<Int>("owner")
        let insert = Insert(into: notes).set(col("title"), to: title).set(col("owner"), to: owner)
        try await db.execute(insert, arguments: ["title": "dictionary", "owner": 1])
        try await db.execute(insert, arguments: StatementArguments([title.set("bindings"), owner.set(2)]))
        let mine = Select(col("title")).from(notes).where(col("owner") == owner)
        #expect(try await db.query(mine, arguments: ["owner": 2]).map { $0.get(0, as: String.self) } == ["bindings"])
        let positional = await #expect(throws: SqlCipherError.self) {
            try await db.query(mine, arguments: [2])
        }
        guard case .invalidQuery(let reason)? = positional else {
            Issue.record("expected invalidQuery, got \(String(describing: positional))")
            return
        }
        #expect(reason.contains("by name"))
        await #expect(throws: SqlCipherError.unboundParameter(name: "owner")) {
            try await db.query(mine, arguments: [:])
        }
    }
}
