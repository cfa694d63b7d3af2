import Foundation
import SqlCipherKit
import Testing

/// SQL text that must not run: text with a NUL (SQLite would read it only up to the NUL), and
/// pragmas that would send temporary data to files SQLCipher does not encrypt.
@Suite struct SQLTextGuardTests {
    func filled() async throws -> Database {
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        return db
    }

    func count(_ db: Database) async throws -> Int? {
        try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self)
    }

    // MARK: NUL in SQL text

    @Test func nulInRawSQLIsRefusedBeforeAnythingRuns() async throws {
        let db = try await filled()
        let sql = "DELETE FROM t\u{0} WHERE id = 1"
        await #expect(throws: SqlCipherError.nulCharacterInSQL(sql: sql, offset: 13)) { try await db.execute(sql) }
        await #expect(throws: SqlCipherError.nulCharacterInSQL(sql: sql, offset: 13)) { try await db.execute(sql, arguments: []) }
        // With arguments, and as a query.
        let withArgument = "DELETE FROM t\u{0} WHERE id = ?"
        await #expect(throws: SqlCipherError.nulCharacterInSQL(sql: withArgument, offset: 13)) { try await db.execute(withArgument, 1) }
        let select = "SELECT * FROM t WHERE name = 'a\u{0}' OR 1"
        await #expect(throws: SqlCipherError.nulCharacterInSQL(sql: select, offset: 31)) { try await db.query(select) }
        // A script: the NUL would have ended it after the first statement, silently.
        let script = "INSERT INTO t VALUES (4, 'd');\u{0} DELETE FROM t"
        await #expect(throws: SqlCipherError.nulCharacterInSQL(sql: script, offset: 30)) { try await db.execute(script) }
        // A NUL after a complete statement is refused too: nothing of the text runs.
        let trailing = "DELETE FROM t WHERE id = 1;\u{0}"
        await #expect(throws: SqlCipherError.self) { try await db.execute(trailing) }
        #expect(try await count(db) == 3)
        // The same text without the NUL still runs, and values with NUL are bound as they are.
        #expect(try await db.execute("DELETE FROM t WHERE id = 1") == 1)
        try await db.execute("INSERT INTO t VALUES (5, ?)", "x\u{0}y")
        #expect(try await db.query("SELECT name FROM t WHERE id = 5")[0].get(0, as: String.self) == "x\u{0}y")
    }

    @Test func nulInSQLIsRefusedInTransactionsAndMigrations() async throws {
        let db = try await filled()
        let sql = "DELETE FROM t\u{0} WHERE id = 2"
        await #expect(throws: SqlCipherError.nulCharacterInSQL(sql: sql, offset: 13)) {
            try await db.transaction { conn in try conn.execute(sql) }
        }
        await #expect(throws: SqlCipherError.nulCharacterInSQL(sql: sql, offset: 13)) {
            try await db.savepoint { conn in _ = try conn.query(sql) }
        }
        let migration = StepMigration("delete-two") { ctx in _ = try ctx.execute(sql) }
        let error = await #expect(throws: SqlCipherError.self) { try await db.migrate([migration]) }
        guard case .migrationFailed(let id, let reason)? = error else {
            Issue.record("expected migrationFailed, got \(String(describing: error))")
            return
        }
        #expect(id == "delete-two")
        #expect(reason.contains("NUL character"), "\(reason)")
        #expect(try await count(db) == 3)
        #expect(try await db.appliedMigrations().isEmpty)
    }

    @Test func builderPathsNeverPutANulIntoSQLText() async throws {
        let db = try await filled()
        let t = TableName("t")
        // Values are bound, never written into the text: a NUL in a value matches literally.
        #expect(try await db.execute(Delete(t).where(col("name") == "a\u{0} OR 1")) == 0)
        #expect(try await db.execute(Insert(into: t).set(col("id"), to: 9).set(col("name"), to: "n\u{0}ul")) == 1)
        #expect(try await db.query(Select(.count).from(t).where(col("name") == "n\u{0}ul"))[0].get(0, as: Int.self) == 1)
        // Identifiers and schema literals, which are text, refuse a NUL with the builder's error.
        await #expect(throws: SqlCipherError.self) { try await db.query(Select(.all).from(TableName("t\u{0}x"))) }
        #expect(try await count(db) == 4)
    }

    @Test func errorMessageShowsTheNulAndSaysWhatToDo() {
        let text = SqlCipherError.nulCharacterInSQL(sql: "DELETE FROM t\u{0} WHERE id = 1", offset: 13).description
        #expect(text.contains("DELETE FROM t\\0 WHERE id = 1"))
        #expect(text.contains("byte 13"))
        #expect(text.contains("nothing was run"))
        #expect(text.contains("? arguments"))
        #expect(!text.contains("\u{0}"))
    }

    // MARK: temp_store

    static let refusedPragmas: [(sql: String, name: String, value: String)] = [
        ("PRAGMA temp_store = FILE", "temp_store", "FILE"),
        ("PRAGMA temp_store = file", "temp_store", "file"),
        ("PRAGMA temp_store = 1", "temp_store", "1"),
        ("PRAGMA temp_store = 0", "temp_store", "0"),
        ("PRAGMA temp_store = DEFAULT", "temp_store", "DEFAULT"),
        ("PRAGMA temp_store = 'file'", "temp_store", "file"),
        ("PRAGMA temp_store(1)", "temp_store", "1"),
        ("pragma TEMP_STORE = -2", "TEMP_STORE", "-2"),
        ("PRAGMA main.temp_store = 1", "temp_store", "1"),
        ("PRAGMA temp.temp_store = FILE", "temp_store", "FILE"),
        ("PRAGMA temp_store_directory = '/tmp'", "temp_store_directory", "/tmp"),
        ("PRAGMA temp_store_directory = ''", "temp_store_directory", ""),
        ("EXPLAIN PRAGMA temp_store = FILE", "temp_store", "FILE"),
    ]

    @Test(arguments: refusedPragmas.indices)
    func tempStoreOtherThanMemoryIsRefused(_ index: Int) async throws {
        let (sql, name, value) = Self.refusedPragmas[index]
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"), rawKey: rawKey())
        await #expect(throws: SqlCipherError.unsafePragma(name: name, value: value, sql: sql)) { try await db.execute(sql) }
        await #expect(throws: SqlCipherError.unsafePragma(name: name, value: value, sql: sql)) { try await db.query(sql) }
        await #expect(throws: SqlCipherError.unsafePragma(name: name, value: value, sql: sql)) {
            try await db.transaction { conn in try conn.execute(sql) }
        }
        #expect(try await db.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)
        // The connection is fine afterwards: other pragmas and statements run.
        #expect(try await db.query("PRAGMA cache_size").count == 1)
    }

    @Test func tempStoreInAScriptStopsTheScriptThere() async throws {
        let db = try await filled()
        let script = "INSERT INTO t VALUES (4, 'd'); PRAGMA temp_store = FILE; INSERT INTO t VALUES (5, 'e')"
        await #expect(throws: SqlCipherError.unsafePragma(name: "temp_store", value: "FILE", sql: script)) {
            try await db.execute(script)
        }
        // As with any failing statement of a script, the ones before it stay applied.
        #expect(try await count(db) == 4)
        #expect(try await db.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)
    }

    @Test func readingAndKeepingMemoryAreAllowed() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"), rawKey: rawKey())
        #expect(try await db.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)
        #expect(try await db.query("PRAGMA main.temp_store")[0].get(0, as: Int.self) == 2)
        for sql in ["PRAGMA temp_store = MEMORY", "PRAGMA temp_store = memory", "PRAGMA temp_store = 2",
                    "PRAGMA temp_store('memory')", "PRAGMA main.temp_store = 2"] {
            try await db.execute(sql)
            #expect(try await db.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2, "\(sql)")
        }
        _ = try await db.query("PRAGMA temp_store_directory")
        // Plaintext databases get the same rule (an encrypted one may be attached to them).
        let plain = try Database(unencryptedPath: dir.path("plain.db"))
        await #expect(throws: SqlCipherError.self) { try await plain.execute("PRAGMA temp_store = FILE") }
        #expect(try await plain.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)
    }

    /// SQLite keeps `hard_heap_limit` and `soft_heap_limit` for the whole process: set by one
    /// database, they made every other database and opening of the process fail with "out of
    /// memory" (SQLCipher 4.6.1, measured; found by the fuzzing pass). Setting them is refused in
    /// every spelling, on encrypted and plaintext databases; reading them is allowed.
    @Test func processWideMemoryLimitsAreRefused() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"), rawKey: rawKey(), cipher: fastCipher)
        let plain = try Database(unencryptedPath: dir.path("plain.db"))
        for (sql, name, value) in [("PRAGMA hard_heap_limit = 300000", "hard_heap_limit", "300000"),
                                   ("pragma main.HARD_HEAP_LIMIT(300000)", "HARD_HEAP_LIMIT", "300000"),
                                   ("PRAGMA \"soft_heap_limit\" = 1", "soft_heap_limit", "1"),
                                   ("PRAGMA temp.soft_heap_limit = 0", "soft_heap_limit", "0")] {
            for target in [db, plain] {
                let error = try await #require(throws: SqlCipherError.self) { try await target.execute(sql) }
                #expect(error == .unsafePragma(name: name, value: value, sql: sql), "\(error)")
                #expect(error.description.contains("every SQLite connection of the process"), "\(error)")
                #expect(error.description.contains("pageCacheKiB"), "\(error)")
            }
        }
        _ = try await db.query("PRAGMA hard_heap_limit")
        _ = try await db.query("PRAGMA soft_heap_limit")
        // Another database of the process still opens and writes.
        let other = try Database(path: dir.path("other.db"), key: "other passphrase", cipher: fastCipher)
        try await other.execute("CREATE TABLE t(v); INSERT INTO t VALUES (zeroblob(500000))")
        #expect(try await other.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await other.close()
        await plain.close()
        await db.close()
    }

    @Test func unsafePragmaMessageSaysWhatToDo() {
        let text = SqlCipherError.unsafePragma(name: "temp_store", value: "FILE", sql: "PRAGMA temp_store = FILE").description
        #expect(text.contains("not encrypt"))
        #expect(text.contains("was not run"))
        #expect(text.contains("Remove it"))
        let directory = SqlCipherError.unsafePragma(name: "temp_store_directory", value: "/x", sql: "PRAGMA temp_store_directory = '/x'")
        #expect(directory.description.contains("folder"))
    }

    /// The guard's reason, measured: with `temp_store = FILE` SQLCipher sorts in a temporary file
    /// that it does not encrypt. Run with the sqlcipher CLI (the package refuses the pragma), the
    /// file kept open by the CLI is read through /proc while the sort runs.
    @Test func sqlcipherWritesSortRunsInClearWithTempStoreFile() throws {
        guard FileManager.default.isExecutableFile(atPath: SqlcipherCLI.version4),
              FileManager.default.fileExists(atPath: "/proc/self/fd") else { return }
        let dir = TemporaryDirectory()
        let spill = dir.path("tmp")
        try FileManager.default.createDirectory(atPath: spill, withIntermediateDirectories: true)
        let marker = "SPILLMARK" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let path = dir.path("sort.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version4, path, [
            SqlcipherCLI.keyPragma(passphrase: "k"),
            "CREATE TABLE t(a, b)",
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100000) "
                + "INSERT INTO t SELECT i, '\(marker)-' || i || '-' || hex(randomblob(40)) FROM c",
        ])
        // The sort's file lives only while the sort runs, and this process reads it by polling: a
        // loaded machine can hold the poll back until the sort has ended. One sighting proves the
        // point, so the sort runs up to five times.
        var found = false
        for _ in 0..<5 where !found {
            found = try Self.markerInOpenTemporaryFiles(path: path, spillDirectory: spill, marker: marker, tempStore: "FILE")
        }
        #expect(found, "no sort run with the marker was seen in \(spill) in five sorts")
        let none = try Self.markerInOpenTemporaryFiles(path: path, spillDirectory: spill, marker: marker, tempStore: "MEMORY")
        #expect(!none, "with temp_store = MEMORY a temporary file held the marker")
    }

    /// Runs a large sort with the CLI and reads, through /proc, every file it holds open in
    /// `spillDirectory` (SQLite unlinks its temporary files as soon as it opens them).
    static func markerInOpenTemporaryFiles(path: String, spillDirectory: String, marker: String,
                                           tempStore: String) throws -> Bool {
        let script = [SqlcipherCLI.keyPragma(passphrase: "k"), "PRAGMA temp_store = \(tempStore)", "PRAGMA cache_size = 10",
                      "SELECT count(*) FROM (SELECT b FROM t ORDER BY b DESC)",
                      "SELECT count(*) FROM (SELECT b FROM t ORDER BY substr(b, 20) DESC)"]
            .map { $0 + ";" }.joined(separator: "\n") + "\n"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SqlcipherCLI.version4)
        process.arguments = ["-batch", "-bail", path]
        var environment = ProcessInfo.processInfo.environment
        environment["SQLITE_TMPDIR"] = spillDirectory
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try launch(process)
        input.fileHandleForWriting.write(Data(script.utf8))
        try input.fileHandleForWriting.close()
        let needle = Data(marker.utf8)
        var found = false
        let fdDirectory = "/proc/\(process.processIdentifier)/fd"
        while process.isRunning && !found {
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: fdDirectory)) ?? [] {
                let link = fdDirectory + "/" + fd
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link),
                      target.hasPrefix(spillDirectory),
                      let data = FileManager.default.contents(atPath: link) else { continue }
                if data.range(of: needle) != nil { found = true }
            }
        }
        process.waitUntilExit()
        return found
    }
}
