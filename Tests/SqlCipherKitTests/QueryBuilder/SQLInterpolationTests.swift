import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// `SQL` literals: interpolated values are bound (never spliced), identifiers are quoted, builder
/// pieces keep their values, and every surface that runs SQL takes them.
@Suite struct SQLInterpolationTests {
    struct Note: Codable, Sendable, Equatable {
        var id: Int
        var title: String
        var owner: Int?
    }

    func database(_ dir: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: dir.path("literal.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, owner INTEGER)")
        try await db.execute("INSERT INTO notes(title, owner) VALUES ('a', 1), ('b', 2), ('c', 2), ('d', NULL)")
        return db
    }

    @Test func valuesAreBoundAndArriveExactly() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let hostile = ["'; DROP TABLE notes; --", "a\0b", "\"q\" 'q' `q` [q]", ":l1", "?", "\\", "é\u{10FFFF}",
                       String(repeating: "x", count: 100_000)]
        for value in hostile {
            try await db.execute(literal: "INSERT INTO notes(title, owner) VALUES (\(value), \(Int?.none))")
        }
        let stored = try await db.query(literal: "SELECT title FROM notes WHERE owner IS \(Int?.none) AND id > \(4) ORDER BY id")
        #expect(stored.map { $0.get(0, as: String.self) } == hostile)
        #expect(try await db.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 4 + hostile.count)

        // One shape, one text: the values are not in it.
        let first: SQL = "SELECT * FROM notes WHERE title = \(hostile[0]) AND owner = \(1)"
        let second: SQL = "SELECT * FROM notes WHERE title = \("other") AND owner = \(2)"
        #expect(try first.render().sql == second.render().sql)
        #expect(try first.render().sql == "SELECT * FROM notes WHERE title = ? AND owner = ?")
        #expect(try first.render().literals == [.text(hostile[0]), .integer(1)])
    }

    @Test func identifiersListsAndBuilderPiecesAreQuotedAndBound() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let table = "odd \"table\" é"
        try await db.execute(literal: "CREATE TABLE \(identifier: table)(\(identifier: "col ]"))")
        try await db.execute(literal: "INSERT INTO \(identifier: table) VALUES (\("x"))")
        #expect(try await db.query(literal: "SELECT \(identifier: "col ]") FROM \(identifier: table)")[0].get(0, as: String.self) == "x")
        await #expect(throws: SqlCipherError.self) {
            try await db.query(literal: "SELECT * FROM \(identifier: "notes\0; DROP TABLE notes")")
        }

        let picked = try await db.query(literal: "SELECT title FROM notes WHERE id IN \(list: [1, 3]) ORDER BY id")
        #expect(picked.map { $0.get(0, as: String.self) } == ["a", "c"])
        #expect(try await db.query(literal: "SELECT title FROM notes WHERE id IN \(list: [Int]())").isEmpty)

        // A template interpolated as a subquery: its values are numbered after the ones before it.
        let notes = TableName("notes")
        let owners = Select(col("id")).from(notes).where(col("owner") == 2)
        let query: SQL = "SELECT title FROM \(notes) WHERE title != \("b") AND id IN (\(owners)) AND \(col("title")) >= \("a")"
        #expect(try query.render().literals == [.text("b"), .integer(2), .text("a")])
        #expect(try await db.query(literal: query).map { $0.get(0, as: String.self) } == ["c"])

        // A Param has no value to take here; a `?` in the text neither.
        let owner = Param<Int>("owner")
        await #expect(throws: SqlCipherError.unboundParameter(name: "owner")) {
            try await db.query(literal: "SELECT * FROM notes WHERE id IN (\(Select(col("id")).from(notes).where(col("owner") == owner)))")
        }
        await #expect(throws: SqlCipherError.self) {
            try await db.query(literal: "SELECT * FROM notes WHERE owner = ? AND title = \("a")")
        }
        // The guards apply as to any SQL.
        await #expect(throws: SqlCipherError.self) {
            try await db.query(literal: "SELECT sqlcipher_export(\("main"))")
        }
    }

    @Test func anEmptyListIsSQLitesEmptyList() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let none: [Int] = []
        #expect(try await db.query(literal: "SELECT id FROM notes WHERE id IN \(list: none)").isEmpty)
        // NOT IN an empty list keeps every row ((NULL) would have kept none).
        #expect(try await db.query(literal: "SELECT id FROM notes WHERE id NOT IN \(list: none)").count == 4)
        #expect(try await db.execute(literal: "DELETE FROM notes WHERE id NOT IN \(list: none)") == 4)
    }

    @Test func parametersWrittenInTheTextAreRefusedOnEveryPath() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        for literal: SQL in ["SELECT \(5), ?1", "SELECT ?, \(5)", "SELECT \(5), :x", "SELECT \(5), @x, $y"] {
            await #expect(throws: SqlCipherError.self) { _ = try await db.query(literal: literal) }
            await #expect(throws: SqlCipherError.self) {
                for try await _ in db.stream(literal: literal) {}
            }
            await #expect(throws: SqlCipherError.self) {
                try await db.read { conn in _ = try conn.cursor(literal: literal) }
            }
            var values = db.values(of: .query(literal: literal)).makeAsyncIterator()
            await #expect(throws: SqlCipherError.self) { _ = try await values.next() }
        }
        // `?` written without any value is the text's own business only for prepare(literal:).
        let prepared = try await db.read { conn in try conn.prepare(literal: "SELECT ?1 + ?2").query(1, 2)[0].get(0, as: Int.self) }
        #expect(prepared == 3)
    }

    /// The surfaces the test above leaves out refuse a parameter in the text too, including one
    /// that reuses the index of a value's `?` (`?1` after `?` gives one parameter, not two).
    @Test func parametersWrittenInTheTextAreRefusedOnTheOtherSurfaces() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let texts: [SQL] = ["SELECT \(5) + ?1", "SELECT :x", "SELECT ?", "SELECT \(5) + ?", "SELECT \(5) AS id, $x AS title"]
        for literal in texts {
            await #expect(throws: SqlCipherError.self) { _ = try await db.execute(literal: literal) }
            await #expect(throws: SqlCipherError.self) { _ = try await db.fetch(Note.self, literal: literal) }
            await #expect(throws: SqlCipherError.self) {
                for try await _ in db.stream(Note.self, literal: literal) {}
            }
            await #expect(throws: SqlCipherError.self) {
                try await db.transaction { conn in
                    #expect(throws: SqlCipherError.self) { _ = try conn.execute(literal: literal) }
                    #expect(throws: SqlCipherError.self) { _ = try conn.query(literal: literal) }
                    #expect(throws: SqlCipherError.self) { _ = try conn.fetch(Note.self, literal: literal) }
                    _ = try conn.cursor(Note.self, literal: literal)
                }
            }
            struct Parameter: Migration {
                let literal: SQL
                var id: String { "parameter" }
                func up(_ ctx: MigrationContext) throws { _ = try ctx.execute(literal: literal) }
            }
            await #expect(throws: SqlCipherError.self) { try await db.migrate([Parameter(literal: literal)]) }
        }
        // Several statements: with values they are refused before any runs; without values each
        // is checked as it comes (a script runs as `sqlite3_exec` does).
        await #expect(throws: SqlCipherError.self) {
            _ = try await db.execute(literal: "UPDATE notes SET owner = \(9); UPDATE notes SET owner = ?1")
        }
        #expect(try await db.query("SELECT count(*) FROM notes WHERE owner = 9")[0].get(0, as: Int.self) == 0)
        await #expect(throws: SqlCipherError.self) {
            _ = try await db.execute(literal: "SELECT 1; UPDATE notes SET owner = :x")
        }
        let pool = try DatabasePool(path: dir.path("literal.db"), rawKey: rawKey())
        await #expect(throws: SqlCipherError.self) { _ = try await pool.query(literal: "SELECT \(5) + ?1") }
        await #expect(throws: SqlCipherError.self) { _ = try await pool.execute(literal: "UPDATE notes SET owner = :x") }
        await pool.close()
    }

    /// A NUL in a literal's own text would end the statement there for SQLite (dropping the
    /// `WHERE` below): it is refused whichever way the text was found, and nothing changes.
    @Test func aNULInTheLiteralTextIsRefusedWhicheverWayTheTextIsFound() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let fromTable: SQL = "UPDATE notes SET owner = \(7)\0 WHERE id = \(1)"
        let written: SQL = "UPDATE \(identifier: "notes") SET owner = \(7)\0 WHERE id = \(1)"
        let plain: SQL = "UPDATE notes SET owner = 7\0 WHERE id = 1"
        for literal in [fromTable, written, plain] {
            await #expect(throws: SqlCipherError.self) { _ = try await db.execute(literal: literal) }
        }
        #expect(try await db.query("SELECT count(*) FROM notes WHERE owner = 7")[0].get(0, as: Int.self) == 0)
    }

    /// A list longer than SQLite takes parameters (999 for SQLite 3.15, 32,766 later) is SQLite's
    /// typed error, not a crash; one just within the limit runs.
    @Test func aListPastSQLitesParameterLimitIsATypedError() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        await #expect(throws: SqlCipherError.self) {
            _ = try await db.query(literal: "SELECT count(*) FROM notes WHERE id IN \(list: Array(0..<40_000))")
        }
        let within = try await db.query(literal: "SELECT count(*) FROM notes WHERE id IN \(list: Array(0..<998)) AND \(1) = 1")
        #expect(within[0].get(0, as: Int.self) == 4)
    }

    /// A value interpolated where SQLite takes no bound value (a PRAGMA's value, a table name, an
    /// alias) is SQLite's syntax error with what to do: SQLite said only `near "?": syntax error`.
    /// A key pragma's value stays out of the message.
    @Test func aValueWhereSQLiteTakesNoneSaysWhatToDo() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let name = "archive"
        let passphrase = "correct horse battery staple"
        let attempts: [SQL] = [
            "PRAGMA user_version = \(5)",
            "CREATE TABLE \(name)(a)",
            "SELECT title AS \(name) FROM notes",
            "PRAGMA key = \(passphrase)",
            "PRAGMA rekey = \(passphrase)",
        ]
        for sql in attempts {
            let error = await #expect(throws: SqlCipherError.self) { try await db.execute(literal: sql) }
            let message = error?.description ?? ""
            #expect(message.contains("syntax error") && message.contains("(identifier:)") && message.contains("rekey"),
                    "\(message)")
            #expect(!message.contains(passphrase) && !String(reflecting: error as Any).contains(passphrase))
        }
        try await db.execute(literal: "CREATE TABLE \(identifier: name)(a)")
        #expect(try await db.tableExists(name))
        #expect(try await db.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self) == 4)
    }

    /// A megabyte identifier or JSON path is a readable error: SQLite's message quotes the name
    /// whole ("no such table: …"), and the description showed all of it (a megabyte message). It
    /// now shows the message's start and end, and the error's `message` keeps it whole.
    @Test func aMegabyteNameMakesAShortMessage() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let name = String(repeating: "q\"", count: 500_000)
        let error = await #expect(throws: SqlCipherError.self) {
            try await db.query(literal: "SELECT * FROM \(identifier: name) WHERE id = \(1)")
        }
        guard case .sqlite(_, _, let message, _)? = error else {
            Issue.record("expected SQLite's error, got \(String(describing: error))")
            return
        }
        #expect(message.count > 1_000_000, "the error keeps SQLite's whole message")
        let description = error?.description ?? ""
        #expect(description.count < 4_000, "\(description.count) characters")
        #expect(description.hasPrefix("SQLite error 1 (extended 1): no such table: q\"q") && description.contains("more characters"))
        // Advice appended after a long echo stays in the description.
        let many = try await db.transaction { conn -> SqlCipherError? in
            var big: SQL = "SELECT \(identifier: name) WHERE 1 IN \(list: Array(0..<40_000))"
            big.append(" AND \(2) = 2")
            do { _ = try conn.query(literal: big) } catch let error as SqlCipherError { return error }
            return nil
        }
        #expect(many?.description.contains("too many SQL variables") == true)
        #expect((many?.description.count ?? 0) < 6_000)
        // A short message is shown whole.
        let short = await #expect(throws: SqlCipherError.self) { try await db.query(literal: "SELECT * FROM \(identifier: "absent")") }
        #expect(short?.description == "SQLite error 1 (extended 1): no such table: absent in `SELECT * FROM \"absent\"`.")
    }

    /// Literals whose pieces are the same bytes in different places, parts of one another, one
    /// character, empty, or in other orders each get their own text; `+`, `append` and `\(sql)`
    /// join a table text and a written one; the values bound and traced are the literal's own.
    @Test func literalsWithLookAlikePiecesKeepTheirOwnText() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        for value in [1, 2] {
            let a: SQL = "SELECT \(value), \(value + 1)"
            let b: SQL = "SELECT \(value), \(value + 1)"   // same bytes, another place in the program
            let c: SQL = "SELECT \(value),\(value + 1)"
            let d: SQL = "ELECT \(value), \(value + 1)"
            let e: SQL = "\(value)\(value)"
            let f: SQL = "\(value) \(value)"
            let g: SQL = "\(value)x\(value)"
            let h: SQL = "x\(value)"
            #expect(try a.render().sql == "SELECT ?, ?" && b.render().sql == "SELECT ?, ?")
            #expect(try c.render().sql == "SELECT ?,?" && d.render().sql == "ELECT ?, ?")
            #expect(try e.render().sql == "??" && f.render().sql == "? ?" && g.render().sql == "?x?" && h.render().sql == "x?")
            #expect(try a.render().literals == [.integer(Int64(value)), .integer(Int64(value + 1))])

            // By hand: two pieces in a row, two values in a row, a value first.
            var interpolation = SQL.StringInterpolation(literalCapacity: 0, interpolationCount: 0)
            interpolation.appendInterpolation(value)
            interpolation.appendLiteral(" + ")
            interpolation.appendLiteral("")
            interpolation.appendLiteral(" + ")
            interpolation.appendInterpolation(value)
            interpolation.appendInterpolation(Int?.none)
            let byHand = SQL(stringInterpolation: interpolation)
            #expect(try byHand.render().sql == "? +  + ??")
            #expect(try byHand.render().literals == [.integer(Int64(value)), .integer(Int64(value)), .null])

            // More than twelve pieces and values: written as it goes, values in order.
            let long: SQL = "SELECT \(1)+\(2)+\(3)+\(4)+\(5)+\(6)+\(7)+\(8)+\(value)"
            #expect(try long.render().sql == "SELECT ?+?+?+?+?+?+?+?+?")
            #expect(try await db.query(literal: long)[0].get(0, as: Int.self) == 36 + value)

            // Joined with written literals, nested, in both orders.
            let cached: SQL = "SELECT title FROM notes WHERE owner = \(value)"
            let written: SQL = " AND \(identifier: "id") > \(0)"
            let joined = cached + written + cached
            #expect(try joined.render().sql == #"SELECT title FROM notes WHERE owner = ? AND "id" > ?"#
                + "SELECT title FROM notes WHERE owner = ?")
            var appended = written
            appended.append(cached)
            #expect(try appended.render().literals == [.integer(0), .integer(Int64(value))])
            let nested: SQL = "SELECT count(*) FROM (\(cached + written)) WHERE \(value) > \(0)"
            #expect(try nested.render().sql
                == #"SELECT count(*) FROM (SELECT title FROM notes WHERE owner = ? AND "id" > ?) WHERE ? > ?"#)
            #expect(try await db.query(literal: nested)[0].get(0, as: Int.self) == (value == 1 ? 1 : 2))
        }

        // A literal and a plain string of the same text share one cached statement, each with its
        // own values, and a tracer sees the values each run bound.
        let events = Mutex<[TraceEvent]>([])
        try await db.trace(options: TraceOptions(includeArguments: true)) { event in
            events.withLock { $0.append(event) }
        }
        _ = try await db.query("SELECT title FROM notes WHERE owner = ?", 0)
        let before = try await db.builderCacheCounters()
        for owner in [1, 2] {
            _ = try await db.query(literal: "SELECT title FROM notes WHERE owner = \(owner)")
            _ = try await db.query("SELECT title FROM notes WHERE owner = ?", owner + 10)
        }
        let after = try await db.builderCacheCounters()
        #expect(after.misses == before.misses && after.hits == before.hits + 4)
        let traced = events.withLock { $0.filter { !$0.isInternal }.map { $0.arguments ?? [] } }
        #expect(traced == [[.integer(0)], [.integer(1)], [.integer(11)], [.integer(2)], [.integer(12)]])
    }

    /// The interpolation's initialiser is public, so code may call it with any counts: they are
    /// hints, and neither a huge nor a negative one traps (it did: the text's room overflowed).
    @Test func anInterpolationBuiltByHandTakesAnyCounts() throws {
        for (literal, interpolations) in [(Int.max, Int.max), (Int.max, 0), (0, Int.max), (-1, -5), (Int.min, 1)] {
            var interpolation = SQL.StringInterpolation(literalCapacity: literal, interpolationCount: interpolations)
            interpolation.appendLiteral("SELECT ")
            interpolation.appendInterpolation(7)
            interpolation.appendLiteral(" AS x")
            let sql = SQL(stringInterpolation: interpolation)
            #expect(try sql.render().sql == "SELECT ? AS x")
            #expect(try sql.render().literals == [.integer(7)])
        }
    }

    @Test func piecesCompose() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        var query: SQL = "SELECT title FROM notes WHERE owner = \(2)"
        let since: Int? = 2
        if let since { query.append(" AND id > \(since)") }
        let ordered = query + " ORDER BY \(identifier: "id") DESC"
        #expect(try await db.query(literal: ordered).map { $0.get(0, as: String.self) } == ["c"])
        let nested: SQL = "SELECT count(*) FROM (\(ordered))"
        #expect(try await db.query(literal: nested)[0].get(0, as: Int.self) == 1)
    }

    /// A `Connection` method that has run a literal gives its values buffer, emptied, to the
    /// thread for the next literal. A literal kept and run again, literals of more and fewer
    /// values one after the other, and literals built on one thread and run on another each
    /// still bind exactly their own values, and a kept literal still holds its values after runs.
    @Test func recycledValueBuffersKeepEveryLiteralsOwnValues() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let kept: SQL = "INSERT INTO notes(title, owner) VALUES (\("kept"), \(70))"
        let builtOutside: SQL = "INSERT INTO notes(title, owner) VALUES (\("outside"), \(80))"
        let counts = try await db.transaction { conn in
            for _ in 0..<3 { try conn.execute(literal: kept) }
            try conn.execute(literal: builtOutside)
            var found: [Int] = []
            for round in 0..<40 {
                let owner = 100 + round
                // Two values, then one, then eleven (more room than the spare has), then a list.
                try conn.execute(literal: "INSERT INTO notes(title, owner) VALUES (\("r\(round)"), \(owner))")
                let one = try conn.query(literal: "SELECT count(*) FROM notes WHERE owner = \(owner)")
                found.append(one[0].get(0, as: Int.self) ?? -1)
                let many = try conn.query(literal: """
                    SELECT count(*) FROM notes WHERE owner IN (\(owner), \(owner), \(owner), \(owner), \(owner), \(owner), \(owner), \(owner), \(owner), \(owner), \(owner))
                    """)
                found.append(many[0].get(0, as: Int.self) ?? -1)
                let listed = try conn.fetch(Note.self, literal: "SELECT * FROM notes WHERE owner IN \(list: [owner, 70, 80]) ORDER BY id")
                found.append(listed.count)
            }
            return found
        }
        #expect(counts == Array(repeating: [1, 1, 5], count: 40).flatMap { $0 })
        #expect(try kept.render().literals == [.text("kept"), .integer(70)])
        #expect(try builtOutside.render().literals == [.text("outside"), .integer(80)])
        let rows = try await db.query(literal: "SELECT title, owner FROM notes WHERE owner IN (\(70), \(80)) ORDER BY id")
        #expect(rows.map { "\($0.get(0, as: String.self) ?? "nil") \($0.get(1, as: Int.self) ?? -1)" }
            == ["kept 70", "kept 70", "kept 70", "outside 80"])
    }

    /// A literal whose interpolations are all values takes its text from the table of literal
    /// texts, found by where its pieces are in the program; every other literal writes its text.
    /// Both ways give the same text, whatever the pieces.
    @Test func aLiteralsTextIsTheSameWhicheverWayItIsFound() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        for owner in [1, 2] {
            let long: SQL = """
                SELECT \(1), \(2), \(3), \(4), \(5), \(6), \(7), \(8), \(9), \(10), \(11) FROM notes WHERE owner = \(owner)
                """
            #expect(try long.render().sql == "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM notes WHERE owner = ?")
            #expect(try long.render().literals.count == 12)
            let mixed: SQL = "SELECT \(owner) FROM \(identifier: "notes") WHERE owner = \(owner) AND title >= \("a")"
            #expect(try mixed.render().sql == #"SELECT ? FROM "notes" WHERE owner = ? AND title >= ?"#)
            let unicode: SQL = "SELECT 'é' || \(owner) || '🙂' || (\(owner)+\(owner))"
            #expect(try unicode.render().sql == "SELECT 'é' || ? || '🙂' || (?+?)")
            #expect(try await db.query(literal: unicode)[0].get(0, as: String.self) == "é\(owner)🙂\(owner + owner)")
            let counted = try await db.query(literal: "SELECT count(*) FROM notes WHERE owner = \(owner)")
            #expect(counted[0].get(0, as: Int.self) == owner)
        }
    }

    /// The table of literal texts, one test at a time: the second test fills it on purpose.
    @Suite(.serialized) struct LiteralTexts {
        /// A line run again finds its text rather than writing it: the same storage each time,
        /// which the statement cache recognises by its address. (The texts are kept alive, so
        /// that an address freed and handed out again cannot pass.)
        @Test func aLineRunAgainFindsItsText() throws {
            var texts: [String] = []
            for owner in 0..<3 {
                let sql: SQL = "SELECT title FROM notes WHERE owner = \(owner) AND id > \(owner)"
                texts.append(try sql.render().sql)
            }
            let storage = texts.indices.map { index in texts[index].withUTF8 { UInt(bitPattern: $0.baseAddress) } }
            #expect(texts.allSatisfy { $0 == "SELECT title FROM notes WHERE owner = ? AND id > ?" })
            #expect(Set(storage).count == 1)
        }

        /// More shapes than the table of literal texts holds, from several tasks at once, some with
        /// one-character pieces (a `StaticString` of one scalar has no address): each literal still
        /// gets its own text.
        @Test func manyShapesFromManyTasksEachGetTheirOwnText() async throws {
            let pieces: [StaticString] = ["SELECT ", "a", ", ", "b -- é", " FROM t WHERE x = ", "+", "\u{1F642}"]
            @Sendable func check(_ first: Int, _ step: Int) -> Int {
                var wrong = 0
                for combination in stride(from: first, to: 2_401, by: step) {
                    var interpolation = SQL.StringInterpolation(literalCapacity: 0, interpolationCount: 4)
                    var expected = ""
                    var digits = combination
                    for _ in 0..<4 {
                        let piece = pieces[digits % pieces.count]
                        digits /= pieces.count
                        interpolation.appendLiteral(piece)
                        expected += piece.description
                        interpolation.appendInterpolation(digits)
                        expected += "?"
                    }
                    let sql = SQL(stringInterpolation: interpolation)
                    if (try? sql.render().sql) != expected { wrong += 1 }
                }
                return wrong
            }
            for _ in 0..<2 {
                let wrong = await withTaskGroup(of: Int.self) { group in
                    for task in 0..<4 { group.addTask { check(task, 4) } }
                    return await group.reduce(0, +)
                }
                #expect(wrong == 0)
            }
        }

        /// Each thread keeps a memo of the texts it ran last, made at its first literal and freed
        /// when the thread ends: threads that start, run literals whose shapes share the memo's
        /// entries, and end, each get every text right, and the freeing does not disturb the
        /// threads still running.
        @Test func threadsThatEndFreeTheirMemo() throws {
            let finished = DispatchSemaphore(value: 0)
            let wrong = Mutex(0)
            let threads = 24
            for thread in 0..<threads {
                let worker = Thread {
                    var mistakes = 0
                    for round in 0..<200 {
                        let value = thread * 1_000 + round
                        func text(_ sql: SQL) -> String? { try? sql.render().sql }
                        let texts = [
                            (text("SELECT \(value)"), "SELECT ?"),
                            (text("SELECT \(value), \(round)"), "SELECT ?, ?"),
                            (text("SELECT x FROM t WHERE a = \(value) OR b = \(round) OR c = \(thread)"),
                             "SELECT x FROM t WHERE a = ? OR b = ? OR c = ?"),
                        ]
                        mistakes += texts.filter { $0.0 != $0.1 }.count
                    }
                    wrong.withLock { $0 += mistakes }
                    finished.signal()
                }
                worker.start()
            }
            for _ in 0..<threads { finished.wait() }
            #expect(wrong.withLock { $0 } == 0)
        }
    }

    @Test func everySurfaceRunsLiterals() async throws {
        let dir = TemporaryDirectory()
        let db = try await database(dir)
        let owner = 2
        #expect(try await db.fetch(Note.self, literal: "SELECT * FROM notes WHERE owner = \(owner) ORDER BY id").map(\.title) == ["b", "c"])
        var streamed: [String] = []
        for try await note in db.stream(Note.self, literal: "SELECT * FROM notes WHERE owner = \(owner) ORDER BY id", batchSize: 1) {
            streamed.append(note.title)
        }
        for try await row in db.stream(literal: "SELECT title FROM notes WHERE owner IS \(Int?.none)") {
            streamed.append(row.get(0, as: String.self) ?? "")
        }
        #expect(streamed == ["b", "c", "d"])

        let inBody = try await db.transaction { conn in
            try conn.execute(literal: "UPDATE notes SET owner = \(3) WHERE id = \(1)")
            let rows = try conn.cursor(literal: "SELECT title FROM notes WHERE owner = \(3)")
            var titles: [String] = []
            while let row = try rows.next() { titles.append(row.get(0, as: String.self) ?? "") }
            let notes = try conn.cursor(Note.self, literal: "SELECT * FROM notes WHERE id = \(2)")
            while let note = try notes.next() { titles.append(note.title) }
            titles += try conn.fetch(Note.self, literal: "SELECT * FROM notes WHERE id = \(3)").map(\.title)
            titles += try conn.query(literal: "SELECT title FROM notes WHERE id = \(4)").compactMap { $0.get(0, as: String.self) }
            let insert = try conn.prepare(literal: "INSERT INTO \(identifier: "notes")(title, owner) VALUES (?, ?)")
            try insert.execute("e", 5)
            try insert.execute("f", 5)
            return titles
        }
        #expect(inBody == ["a", "b", "c", "d"])
        await #expect(throws: SqlCipherError.self) {
            try await db.read { conn in _ = try conn.prepare(literal: "SELECT * FROM notes WHERE id = \(1)") }
        }

        var values = db.values(of: .query(literal: "SELECT title FROM notes WHERE owner = \(5) ORDER BY id")).makeAsyncIterator()
        #expect(try await values.next()?.count == 2)
        try await db.execute(literal: "INSERT INTO notes(title, owner) VALUES (\("g"), \(5))")
        #expect(try await values.next()?.count == 3)
        #expect(LiveRequest<[Row]>.query(literal: "SELECT \(1)") == .query(literal: "SELECT \(1)"))
        #expect(LiveRequest<[Row]>.query(literal: "SELECT \(1)") != .query(literal: "SELECT \(2)"))

        struct Backfill: Migration {
            let id = "backfill"
            func up(_ ctx: MigrationContext) throws {
                try ctx.execute(literal: "UPDATE \(identifier: "notes") SET owner = \(0) WHERE owner IS NULL")
            }
        }
        try await db.migrate([Backfill()])
        #expect(try await db.query(literal: "SELECT count(*) FROM notes WHERE owner = \(0)")[0].get(0, as: Int.self) == 1)
        await db.close()

        let pool = try DatabasePool(path: dir.path("literal.db"), rawKey: rawKey())
        #expect(try await pool.query(literal: "SELECT title FROM notes WHERE owner = \(5)").count == 3)
        #expect(try await pool.execute(literal: "DELETE FROM notes WHERE owner = \(5)") == 3)
        await pool.close()
    }

    /// Every way of printing a literal (`print`, interpolation, `String(reflecting:)`, `dump`), the
    /// fragment it renders, and a live request holding it show its text through the
    /// one SQL redaction, and no value of a statement whose values can be a key: printing
    /// `"ATTACH \(path) AS o KEY \(passphrase)"` showed the passphrase (and a key written in the
    /// literal's own text), while the trace of the same statement hid it. Other literals still show
    /// their values.
    @Test func aLiteralPrintsNoKey() async throws {
        let dir = TemporaryDirectory()
        let secret = "SeCrEt-passphrase-41"
        let bound: SQL = "ATTACH \(dir.path("other.db")) AS other KEY \(secret)"
        let written: SQL = "ATTACH 'other.db' AS other KEY 'SeCrEt-passphrase-41'"
        let rawKey: SQL = "ATTACH \(dir.path("other.db")) AS other KEY \(Data(secret.utf8))"
        let vacuum: SQL = "VACUUM INTO \("file:copy.db?key=" + secret)"
        func printed(_ value: Any) -> [String] {
            var dumped = ""
            dump(value, to: &dumped)
            return ["\(value)", String(reflecting: value), dumped]
        }
        for literal in [bound, written, rawKey, vacuum] {
            var shown = printed(literal) + printed(LiveRequest.query(literal: literal))
            if let fragment = try? literal.render() { shown += printed(fragment) }
            for text in shown {
                #expect(!text.contains(secret) && !text.contains(hex(Data(secret.utf8))), "\(text)")
            }
        }
        #expect("\(bound)".hasPrefix("ATTACH ? AS other KEY '***'"))
        // Values of other statements are still shown, as a trace shows them.
        let query: SQL = "SELECT title FROM notes WHERE owner = \(7) AND title = \("key=x")"
        #expect("\(query)" == "SELECT title FROM notes WHERE owner = ? AND title = ?  [7, 'key=x']")
        var dumped = ""
        dump(query, to: &dumped)
        #expect(dumped.contains("'key=x'"))
    }
}
