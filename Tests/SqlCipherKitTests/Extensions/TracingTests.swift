import Dispatch
import Foundation
import Testing
@testable import SqlCipherKit

/// Trace events for every way SQL runs: raw SQL, scripts, the builder, entities, migrations, live
/// queries, cursors; with and without arguments; internal statements marked; outcomes, durations
/// and the writer/reader role; starting and stopping.
@Suite struct TracingTests {
    struct Note: Entity {
        static let tableName = TableName("notes")
        static let primaryKey: WritableKeyPath<Note, Int?> & Sendable = \.id
        var id: Int?
        var body: String
    }

    func database(_ directory: TemporaryDirectory) async throws -> Database {
        let db = try Database(path: directory.path("trace.db"), rawKey: rawKey(3))
        try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        return db
    }

    @Test func rawSQLHasOneEventPerStatementWithItsTextAndNoArguments() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let recorder = TraceRecorder()
        try await recorder.attach(to: db)
        try await db.execute("INSERT INTO notes(body) VALUES (?)", "a private note")
        let rows = try await db.query("SELECT body FROM notes WHERE id = ?", 1)
        #expect(rows.count == 1)
        #expect(recorder.userSQL == ["INSERT INTO notes(body) VALUES (?)", "SELECT body FROM notes WHERE id = ?"])
        for event in recorder.events {
            #expect(event.arguments == nil)
            #expect(event.connection == .writer)
            #expect(event.outcome == .completed)
            #expect(event.duration > .zero)
            #expect(!event.description.contains("a private note"))
        }
    }

    @Test func argumentsOnlyForTracersThatAskForThem() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let plain = TraceRecorder(), detailed = TraceRecorder()
        try await plain.attach(to: db)
        try await detailed.attach(to: db, options: TraceOptions(includeArguments: true))
        try await db.execute("INSERT INTO notes(id, body) VALUES (?, ?)", 7, "seven")
        _ = try await db.query("SELECT * FROM notes WHERE id = ? AND body = ?", 7, Data([1, 2]))
        #expect(plain.userEvents.map(\.arguments) == [nil, nil])
        #expect(detailed.userEvents.map(\.arguments) == [[.integer(7), .text("seven")], [.integer(7), .blob(Data([1, 2]))]])
        #expect(detailed.userEvents.first?.description.contains("'seven'") == true)
    }

    @Test func aScriptGivesEachOfItsStatementsAnEvent() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let recorder = TraceRecorder()
        try await recorder.attach(to: db)
        try await db.execute("""
            CREATE TABLE a(x);
            INSERT INTO a VALUES (1);   -- one
            INSERT INTO a VALUES (2)
            """)
        #expect(recorder.userSQL.count == 3)
        #expect(recorder.userSQL.first == "CREATE TABLE a(x);")
        // As SQLite cut the text: the comment before a statement stays with it.
        #expect(recorder.userSQL.last == "-- one\n    INSERT INTO a VALUES (2)" || recorder.userSQL.last?.hasSuffix("INSERT INTO a VALUES (2)") == true)
    }

    @Test func builderAndEntityStatementsAreTracedWithTheirBoundValues() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let recorder = TraceRecorder()
        try await recorder.attach(to: db, options: TraceOptions(includeArguments: true))
        let notes = TableName("notes")
        try await db.execute(Insert(into: notes).set(col("body"), to: "built"))
        let saved = try await db.save(Note(id: nil, body: "entity"))
        _ = try await db.query(Select(.all).from(notes).where(col("body") == "built"))
        _ = try await db.fetch(Note.self)
        let events = recorder.userEvents
        #expect(events.count == 4, "\(events)")
        #expect(events[0].sql.hasPrefix("INSERT INTO \"notes\""))
        #expect(events[0].arguments == [.text("built")])
        #expect(events[1].sql.contains("INSERT") && events[1].arguments?.contains(.text("entity")) == true)
        #expect(events[2].sql.hasPrefix("SELECT") && events[2].arguments == [.text("built")])
        #expect(events[3].sql.hasPrefix("SELECT") && events[3].sql.contains("notes"))
        #expect(saved.id != nil)
    }

    @Test func transactionControlSavepointsAndMigrationBookkeepingAreInternal() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let recorder = TraceRecorder()
        try await recorder.attach(to: db)
        try await db.transaction { conn in
            try conn.execute("INSERT INTO notes(body) VALUES ('in a transaction')")
            try conn.savepoint { conn in try conn.execute("INSERT INTO notes(body) VALUES ('in a savepoint')") }
        }
        let ownSQL = recorder.events.filter(\.isInternal).map(\.sql)
        #expect(ownSQL.contains("BEGIN IMMEDIATE"))
        #expect(ownSQL.contains("COMMIT"))
        #expect(ownSQL.contains { $0.hasPrefix("SAVEPOINT sqlcipherkit_sp") })
        #expect(recorder.userSQL == ["INSERT INTO notes(body) VALUES ('in a transaction')",
                                     "INSERT INTO notes(body) VALUES ('in a savepoint')"])

        recorder.clear()
        try await db.migrate([StepMigration("tags", up: { ctx in
            try ctx.execute("CREATE TABLE tags(name TEXT)")
        })])
        #expect(recorder.userSQL == ["CREATE TABLE tags(name TEXT)"])
        let bookkeeping = recorder.events.filter(\.isInternal).map(\.sql)
        #expect(bookkeeping.contains { $0.contains("INSERT INTO \"main\".\"_migrations\"") })
        #expect(bookkeeping.contains { $0.contains("CREATE TABLE IF NOT EXISTS \"main\".\"_migrations\"") })
        #expect(bookkeeping.contains("PRAGMA foreign_keys"))
    }

    @Test func liveQueryFetchesAreTracedAsTheRequestsSQL() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let recorder = TraceRecorder()
        try await recorder.attach(to: db)
        let reader = LiveReader(db.values(of: .query("SELECT count(*) FROM notes")))
        #expect(try await reader.next()?.first?.get(0, as: Int.self) == 0)
        try await db.execute("INSERT INTO notes(body) VALUES ('x')")
        #expect(try await reader.next()?.first?.get(0, as: Int.self) == 1)
        let fetches = recorder.userEvents.filter { $0.sql == "SELECT count(*) FROM notes" }
        #expect(fetches.count == 2)
        // Whatever the analysis runs for itself (EXPLAIN on SQLite 3.15.2) is internal.
        let explained = recorder.events.filter { $0.sql.hasPrefix("EXPLAIN") }
        #expect(explained.allSatisfy { $0.isInternal })
        #expect(recorder.userEvents.allSatisfy { !$0.sql.hasPrefix("EXPLAIN") && !$0.sql.hasPrefix("PRAGMA database_list") })
    }

    @Test func outcomesTellCompletedFailedAndStoppedEarly() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("INSERT INTO notes(id, body) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        let recorder = TraceRecorder()
        try await recorder.attach(to: db)
        await #expect(throws: SqlCipherError.self) { try await db.execute("INSERT INTO notes(id, body) VALUES (1, 'dup')") }
        let first = try await db.read { conn in
            let cursor = try conn.cursor("SELECT body FROM notes ORDER BY id")
            return try cursor.next()?.get(0, as: String.self)
        }
        #expect(first == "a")
        // Refused by the guards before running: no event.
        await #expect(throws: SqlCipherError.self) { try await db.execute("PRAGMA temp_store = FILE") }
        let events = recorder.userEvents
        #expect(events.map(\.outcome) == [.failed(code: 19), .stoppedEarly], "\(events)")
        #expect(!events.contains { $0.sql.contains("temp_store") })
    }

    @Test func durationsAreMeasuredToTheNanosecond() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let recorder = TraceRecorder()
        try await recorder.attach(to: db)
        _ = try await db.query("SELECT 1")
        _ = try await db.query("""
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000000) SELECT sum(i) FROM c
            """)
        let events = recorder.userEvents
        #expect(events.count == 2)
        // SQLite's own profile reports whole milliseconds: 0 for a statement this fast.
        #expect(events[0].duration > .zero && events[0].duration < .seconds(1))
        // Two million rows (a few hundred milliseconds) outlast any preemption of `SELECT 1` on a
        // loaded machine (300,000 rows, tens of milliseconds, left a margin that one could pass).
        #expect(events[1].duration > events[0].duration)
        let nanoseconds = events.map { $0.duration.components.attoseconds / 1_000_000_000 }
        #expect(nanoseconds.contains { $0 % 1_000_000 != 0 }, "\(events.map(\.duration))")
    }

    @Test func cancellingAndStoppingEndDelivery() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let first = TraceRecorder(), second = TraceRecorder()
        let token = try await first.attach(to: db)
        try await second.attach(to: db)
        let stream = try await db.traceEvents()
        _ = try await db.query("SELECT 1")
        token.cancel()
        #expect(!token.isActive)
        _ = try await db.query("SELECT 2")
        try await db.stopTracing()
        _ = try await db.query("SELECT 3")
        #expect(first.userSQL == ["SELECT 1"])
        #expect(second.userSQL == ["SELECT 1", "SELECT 2"])
        var streamed: [String] = []
        for await event in stream where !event.isInternal { streamed.append(event.sql) }  // ends: tracing stopped
        #expect(streamed == ["SELECT 1", "SELECT 2"])
    }

    @Test func theSequenceEndsWhenTheDatabaseIsClosed() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        let stream = try await db.traceEvents(bufferingPolicy: .bufferingNewest(10))
        _ = try await db.query("SELECT 1")
        await db.close()
        var count = 0
        for await _ in stream { count += 1 }
        #expect(count >= 1)
    }

    /// A pool keeps its registry of tracers for as long as the pool object lives, so a tracer
    /// stopped only when that registry went away outlived `close()`: a service's logging task
    /// `for await event in pool.traceEvents()` never returned after the pool closed, and the
    /// token said the tracer was active. Closing stops them, also beside a read still running,
    /// whose statements after the close are not delivered. A lone database stops its own too.
    @Test func closingAPoolOrADatabaseStopsItsTracersAndEndsTheirSequences() async throws {
        let directory = TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("pool.db"), rawKey: rawKey(3), maximumReaderCount: 2)
        try await pool.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        let db = try await database(directory)
        for access in [pool, db] as [any DatabaseAccess] {
            let events = try await access.traceEvents()
            let recorder = TraceRecorder()
            let token = try await access.trace(recorder.record)
            let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            // On the pool a read runs on a reader beside the close; on the database the close waits for it.
            let read = Task {
                try await access.read { conn in
                    entered.signal()
                    if access is DatabasePool { release.wait() }
                    return try conn.query("SELECT count(*) AS during FROM notes").count
                }
            }
            #expect(await signalled(entered))
            let ended = DispatchSemaphore(value: 0)
            let consumer = Task {
                var statements: [String] = []
                for await event in events where !event.isInternal { statements.append(event.sql) }
                ended.signal()
                return statements
            }
            await access.close()
            release.signal()
            #expect(try await read.value == 1)
            #expect(!token.isActive, "a tracer of a closed \(type(of: access)) still listens")
            let returned = await signalled(ended, seconds: 60)
            #expect(returned, "the trace sequence of a closed \(type(of: access)) never ended")
            consumer.cancel()
            let delivered = await consumer.value
            let during = "SELECT count(*) AS during FROM notes"
            if access is DatabasePool {
                #expect(!delivered.contains(during) && !recorder.userSQL.contains(during))
            }
        }
    }

    @Test func aRegistryCarriesTracersAndRoleToAnyConnection() async throws {
        // What a pool does for each reader it opens (SqlCipherKit.docc/Architecture.md).
        let directory = TemporaryDirectory()
        let path = directory.path("trace.db")
        let db = try await database(directory)
        try await db.execute("INSERT INTO notes(body) VALUES ('shared')")
        let registry = ConnectionExtensions()
        let recorder = TraceRecorder()
        registry.add(tracer: TraceObserver(options: TraceOptions(includeArguments: true), deliver: recorder.record))
        let opened = try DatabaseOpener.open(path: path, key: KeyMaterial(rawKey: rawKey(3)), journalMode: .wal,
                                             cipher: .default, setup: ConnectionSetup(role: .reader, extensions: registry))
        let reader = opened.connection
        defer { reader.close() }
        // The opening's own statements were traced, as internal ones of the reader.
        let opening = recorder.events
        #expect(!opening.isEmpty && opening.allSatisfy { $0.isInternal && $0.connection == .reader })
        recorder.clear()
        _ = try reader.query("SELECT body FROM notes WHERE id = ?", [.integer(1)])
        #expect(recorder.userEvents.map(\.connection) == [.reader])
        #expect(recorder.userEvents.first?.arguments == [.integer(1)])

        // A function added through another connection of the registry reaches this one at its
        // next statement.
        let writer = try SQLiteConnection(path: ":memory:")
        defer { writer.close() }
        try registry.apply(to: writer)
        try writer.add(function: DatabaseFunction("twice", deterministic: true) { (x: Int) in x * 2 })
        #expect(try reader.scalar("SELECT twice(21)") == .integer(42))
        #expect(recorder.userEvents.last?.sql == "SELECT twice(21)")
    }
}
