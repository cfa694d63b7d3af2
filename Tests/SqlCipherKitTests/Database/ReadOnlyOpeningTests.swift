import Foundation
import SqlCipherKit
import Testing

/// `readOnly: true`, and WAL files on storage that cannot be written (issue 12, item 11).
///
/// A read-only open must not change one byte of the database or of its folder: no `-wal`, `-shm`
/// or `-journal` appears (SQLite's own read-only mode creates `-wal` and `-shm` beside a WAL
/// database and leaves them), nothing is modified, every write throws a typed error. A WAL file in
/// a folder this process cannot write fails with a `cannotOpen` that says why and what to do,
/// where it used to show the package's probe SQL.
@Suite struct ReadOnlyOpeningTests {
    /// Every file of a folder, with its size, modification time and bytes, and the folder's own
    /// modification time (which changes when a file is created or removed, even briefly).
    struct FolderSnapshot: Equatable, CustomStringConvertible {
        struct Entry: Equatable {
            let modified: Int
            let contents: Data
        }
        let entries: [String: Entry]
        let folderModified: Int

        init(_ folder: String) {
            var entries: [String: Entry] = [:]
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                let path = folder + "/" + name
                entries[name] = Entry(modified: Self.modified(path), contents: FileManager.default.contents(atPath: path) ?? Data())
            }
            self.entries = entries
            folderModified = Self.modified(folder)
        }

        static func modified(_ path: String) -> Int {
            var info = stat()
            guard stat(path, &info) == 0 else { return -1 }
            return Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)
        }

        var description: String {
            entries.keys.sorted().map { "\($0) (\(entries[$0]!.contents.count) bytes)" }.joined(separator: ", ")
        }
    }

    enum Kind: String, CaseIterable {
        case raw, passphrase, plaintext

        func open(_ path: String, readOnly: Bool, journalMode: JournalMode = .wal) throws -> Database {
            switch self {
            case .raw: return try Database(path: path, rawKey: rawKey(3), journalMode: journalMode, readOnly: readOnly)
            case .passphrase:
                return try Database(path: path, key: "read only", journalMode: journalMode, cipher: fastCipher, readOnly: readOnly)
            case .plaintext: return try Database(unencryptedPath: path, journalMode: journalMode, readOnly: readOnly)
            }
        }
    }

    struct Note: Entity, Equatable {
        static let tableName = TableName("t")
        static let primaryKey: WritableKeyPath<Note, Int?> & Sendable = \.id
        var id: Int?
        var body: String
    }

    /// A database of 50 rows in `mode`, closed.
    static func makeDatabase(_ path: String, _ kind: Kind, _ mode: JournalMode) async throws {
        let db = try kind.open(path, readOnly: false, journalMode: mode)
        try await fill(db, rows: 50, size: 40, marker: "row")
        try await db.execute("PRAGMA user_version = 5")
        await db.close()
    }

    static func isReadOnlyRefusal(_ error: any Error) -> Bool {
        if case SqlCipherError.sqlite(8, _, _, _) = error { return true }
        // VACUUM INTO of a database with other than default cipher settings is refused earlier,
        // by the raw-SQL guard (SqlCipherKit.docc/RawSQLGuards.md): also a refusal before anything is written.
        if case SqlCipherError.unsafeVacuumInto = error { return true }
        return false
    }

    @Test(arguments: Kind.allCases, JournalMode.allCases)
    func noByteOfTheFileOrFolderChanges(kind: Kind, mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("data.db")
        try await Self.makeDatabase(path, kind, mode)
        let before = FolderSnapshot(dir.url.path)
        #expect(before.entries.keys.sorted() == ["data.db"])

        let db = try kind.open(path, readOnly: true)
        #expect(db.isReadOnly)
        #expect(FolderSnapshot(dir.url.path) == before, "opening changed the folder: \(FolderSnapshot(dir.url.path))")
        #expect(try await countRows(db) == 50)
        #expect(try await db.query("SELECT body FROM t WHERE id = 7")[0].get(0, as: String.self) == "row" + String(repeating: "x", count: 40) + "6")
        #expect(try await db.query("PRAGMA user_version")[0].get(0, as: Int.self) == 5)
        #expect(try await db.query(Select(.count).from(TableName("t")).where(col("id") > 10))[0].get(0, as: Int.self) == 40)
        #expect(try await db.fetch(Note.self, where: col("id") == 1).count == 1)
        _ = try await db.savepoint { conn in try conn.query("SELECT count(*) FROM t") }

        var writes = [
            "INSERT INTO t(body) VALUES ('new')", "UPDATE t SET body = 'changed'", "DELETE FROM t",
            "CREATE TABLE u(x)", "CREATE TEMP TABLE scratch(x)", "DROP TABLE t", "CREATE INDEX i ON t(body)",
            "PRAGMA user_version = 6", "PRAGMA journal_mode = DELETE", "PRAGMA journal_mode = WAL", "VACUUM",
            "ANALYZE", "INSERT INTO t(body) VALUES ('a'); INSERT INTO t(body) VALUES ('b')",
        ]
        if (try loadedLibrary()).sqliteVersionNumber >= 3_027_000 {
            writes.append("VACUUM INTO '\(dir.path("copy.db"))'")
        }
        for sql in writes {
            do {
                try await db.execute(sql)
                Issue.record("\(kind) \(mode): `\(sql)` ran on a read-only database")
            } catch {
                #expect(Self.isReadOnlyRefusal(error), "\(kind) \(mode): `\(sql)`: \(error)")
            }
        }
        await #expect(throws: SqlCipherError.self) {
            try await db.transaction { conn in try conn.execute("INSERT INTO t(body) VALUES ('x')") }
        }
        await #expect(throws: SqlCipherError.self) { _ = try await db.save(Note(id: nil, body: "entity")) }
        await #expect(throws: SqlCipherError.self) { try await db.execute(Insert(into: TableName("t")).set(col("body"), to: "b")) }
        if kind != .plaintext {
            await #expect(throws: SqlCipherError.self) { try await db.rekey(rawKey: rawKey(4)) }
            await #expect(throws: SqlCipherError.self) { try await db.exportDecrypted(to: dir.path("clear.db")) }
        }
        // Refused as read-only, not as SQLite's "unable to open database" of a pipe or a directory.
        let exportError = await #expect(throws: SqlCipherError.self) {
            try await db.export(to: dir.path("copy2.db"), key: .rawKey(rawKey(5)))
        }
        #expect("\(exportError.map { "\($0)" } ?? "")".contains("readOnly: true"), "\(String(describing: exportError))")
        // Statements that do not write themselves, and must change nothing either.
        for sql in ["ATTACH '\(dir.path("other.db"))' AS other", "PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA optimize",
                    "REINDEX"] {
            _ = try? await db.execute(sql)
        }
        #expect(FolderSnapshot(dir.url.path) == before, "\(kind) \(mode): \(FolderSnapshot(dir.url.path))")
        #expect(await !db.isClosed)
        #expect(try await countRows(db) == 50)
        await db.close()
        #expect(FolderSnapshot(dir.url.path) == before, "\(kind) \(mode): closing changed the folder")

        // The file is intact for a normal open.
        let writable = try kind.open(path, readOnly: false)
        #expect(try await countRows(writable) == 50)
        #expect(writable.journalMode == mode)
    }

    /// The example of the article "Opening a database", "Read-only opening".
    @Test func theGuideExample() async throws {
        let dir = TemporaryDirectory()
        let keyBytes = rawKey(42)
        let setup = try Database(path: dir.path("store.db"), rawKey: keyBytes)
        try await setup.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL)")
        try await setup.execute("INSERT INTO orders(total) VALUES (9.5)")
        await setup.close()

        let archive = try Database(path: dir.path("store.db"), rawKey: keyBytes, readOnly: true)
        let rows = try await archive.query("SELECT * FROM orders")   // reads work
        #expect(rows.count == 1)
        do {
            try await archive.execute("DELETE FROM orders")           // throws sqlite(code: 8, …)
            Issue.record("deleted from a read-only database")
        } catch let SqlCipherError.sqlite(code, _, message, sql) {
            #expect(code == 8 && message.contains("readOnly: true") && sql == "DELETE FROM orders")
        }
        #expect(archive.isReadOnly)
    }

    @Test func aWrongKeyChangesNothingEither() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("data.db")
        try await Self.makeDatabase(path, .raw, .wal)
        let before = FolderSnapshot(dir.url.path)
        #expect(throws: SqlCipherError.self) { try Database(path: path, rawKey: rawKey(99), readOnly: true) }
        #expect(throws: SqlCipherError.self) { try Database(path: path, key: "wrong", readOnly: true) }
        #expect(throws: SqlCipherError.self) { try Database(unencryptedPath: path, readOnly: true) }
        #expect(FolderSnapshot(dir.url.path) == before)
    }

    @Test func aReadOnlyOpenNeedsAnExistingDatabase() throws {
        let dir = TemporaryDirectory()
        let cases: [(String, String)] = [
            ("missing", dir.path("missing.db")), ("empty", dir.path("empty.db")),
            ("in memory", ":memory:"), ("a folder", dir.url.path),
        ]
        _ = FileManager.default.createFile(atPath: dir.path("empty.db"), contents: Data())
        let before = FolderSnapshot(dir.url.path)
        for (label, path) in cases {
            for open in [{ try Database(path: path, rawKey: rawKey(), readOnly: true) },
                         { try Database(unencryptedPath: path, readOnly: true) }] {
                do {
                    _ = try open()
                    Issue.record("\(label): opened read-only")
                } catch SqlCipherError.cannotOpen {
                } catch {
                    Issue.record("\(label): \(error)")
                }
            }
        }
        #expect(FolderSnapshot(dir.url.path) == before)
    }

    @Test func oddCharactersInThePathAreTakenAsTheyAre() async throws {
        let dir = TemporaryDirectory()
        for name in ["a?mode=rw.db", "b#c.db", "c%41.db", "d e.db", "e&immutable=0.db"] {
            let path = dir.path(name)
            try await Self.makeDatabase(path, .raw, .wal)
            let before = FolderSnapshot(dir.url.path)
            let db = try Database(path: path, rawKey: rawKey(3), readOnly: true)
            #expect(try await countRows(db) == 50, "\(name)")
            await #expect(throws: SqlCipherError.self, "\(name)") { try await db.execute("DELETE FROM t") }
            await db.close()
            #expect(FolderSnapshot(dir.url.path) == before, "\(name)")
        }
        // The URI names exactly the file: a file called "a" was not opened for "a?mode=rw.db".
        #expect(!FileManager.default.fileExists(atPath: dir.path("a")))
    }

    @Test func aLiveWriterIsReadThroughItsWAL() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("live.db")
        let writer = try Database(path: path, rawKey: rawKey(3))
        try await fill(writer, rows: 20)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        let before = FolderSnapshot(dir.url.path)

        // Another process reads the rows that are still only in the WAL, through the -shm opened
        // read-only: no file changes, the -shm included.
        let child = try runHelper(["open-database", "--read-only", path, "raw:" + hex(rawKey(3)), "SELECT count(*) FROM t"],
                                  environment: try Linking.childEnvironment())
        #expect(child.stdout == "opened readOnly=true journal=wal\nexecuted\n", "\(child.stdout) \(child.stderr)")
        #expect(FolderSnapshot(dir.url.path) == before, "the reading process changed a file")

        // In this process SQLite shares the writer's -shm mapping with the reader (one per file and
        // process), where reading records its read marks: the database and the WAL stay untouched.
        let reader = try Database(path: path, rawKey: rawKey(3), readOnly: true)
        #expect(reader.journalMode == .wal)
        #expect(try await countRows(reader) == 20)
        let during = FolderSnapshot(dir.url.path)
        #expect(during.entries["live.db"] == before.entries["live.db"])
        #expect(during.entries["live.db-wal"] == before.entries["live.db-wal"])
        // A commit after the reader opened is seen by its next read.
        try await writer.execute("INSERT INTO t(body) VALUES ('later')")
        #expect(try await countRows(reader) == 21)
        await #expect(throws: SqlCipherError.self) { try await reader.execute("INSERT INTO t(body) VALUES ('no')") }
        await reader.close()
        await writer.close()
        let after = try Database(path: path, rawKey: rawKey(3))
        #expect(try await countRows(after) == 21)
    }

    /// The files a process left when it ended without closing (killed, or copied while open):
    /// the WAL is read through the -shm as it is, and nothing is written.
    @Test func aWALAndShmLeftBehindAreReadAsTheyAre() async throws {
        let dir = TemporaryDirectory()
        let copy = TemporaryDirectory()
        let path = dir.path("live.db")
        let writer = try Database(path: path, rawKey: rawKey(3))
        try await fill(writer, rows: 20)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy.path("live.db" + suffix))
        }
        await writer.close()
        let before = FolderSnapshot(copy.url.path)
        do {
            let reader = try Database(path: copy.path("live.db"), rawKey: rawKey(3), readOnly: true)
            #expect(try await countRows(reader) == 20)
            await reader.close()
        } catch {
            Issue.record("the files a process left were not read: \(error)")
        }
        #expect(FolderSnapshot(copy.url.path) == before)
    }

    @Test func aWALHoldingTransactionsWithoutItsShmIsRefused() async throws {
        let dir = TemporaryDirectory()
        let copy = TemporaryDirectory()
        let path = dir.path("live.db")
        let writer = try Database(path: path, rawKey: rawKey(3))
        try await fill(writer, rows: 20)
        // A copy taken while the writer runs, without the -shm: the rows are only in the -wal.
        try FileManager.default.copyItem(atPath: path, toPath: copy.path("live.db"))
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy.path("live.db-wal"))
        await writer.close()
        let before = FolderSnapshot(copy.url.path)
        do {
            _ = try Database(path: copy.path("live.db"), rawKey: rawKey(3), readOnly: true)
            Issue.record("opened a WAL without its -shm read-only")
        } catch let SqlCipherError.cannotOpen(_, reason) {
            #expect(reason.contains("-shm") && reason.contains("without readOnly"), "\(reason)")
        }
        #expect(FolderSnapshot(copy.url.path) == before)
        // Opened normally, it has every row.
        let recovered = try Database(path: copy.path("live.db"), rawKey: rawKey(3))
        #expect(try await countRows(recovered) == 20)
    }

    @Test func aRollbackJournalLeftByAnInterruptedWriteIsRefused() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("data.db")
        try await Self.makeDatabase(path, .raw, .rollback)
        // A journal whose header is live (not zeroed): SQLite would roll it back on the next read.
        var journal = Data(repeating: 0, count: 512)
        journal.replaceSubrange(0..<8, with: [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7])
        _ = FileManager.default.createFile(atPath: path + "-journal", contents: journal)
        let before = FolderSnapshot(dir.url.path)
        do {
            _ = try Database(path: path, rawKey: rawKey(3), readOnly: true)
            Issue.record("opened read-only over a live journal")
        } catch let SqlCipherError.cannotOpen(_, reason) {
            #expect(reason.contains("-journal"), "\(reason)")
        }
        #expect(FolderSnapshot(dir.url.path) == before)
        // A journal whose header was zeroed (PERSIST mode, transaction over) is no obstacle.
        _ = FileManager.default.createFile(atPath: path + "-journal", contents: Data(repeating: 0, count: 512))
        let db = try Database(path: path, rawKey: rawKey(3), readOnly: true)
        #expect(try await countRows(db) == 50)
    }

    // MARK: Storage this process cannot write

    /// Runs `open-database` as an unprivileged user (as root, permission bits do not apply).
    static func openUnprivileged(_ arguments: [String]) throws -> [String] {
        let result = try runHelperUnprivileged(["open-database"] + arguments)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test(arguments: JournalMode.allCases)
    func aFolderThisProcessCannotWrite(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        try makeWorldReadable(dir)
        let path = dir.path("data.db")
        try await Self.makeDatabase(path, .raw, mode)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.url.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.url.path) }
        let before = FolderSnapshot(dir.url.path)
        let key = "raw:" + hex(rawKey(3))

        let normal = try Self.openUnprivileged([path, key, "SELECT count(*) FROM t"])
        if mode == .wal {
            let line = try #require(normal.first)
            #expect(line.hasPrefix("error cannotOpen:"), "\(normal)")
            #expect(line.contains("WAL") && line.contains("readOnly: true") && line.contains("journal_mode = DELETE"), "\(line)")
            #expect(!line.contains("sqlite_master"), "the package's probe SQL leaked into the message: \(line)")
        } else {
            #expect(normal == ["opened readOnly=true journal=rollback", "executed"])
        }
        let readOnly = try Self.openUnprivileged(["--read-only", path, key, "SELECT count(*) FROM t"])
        #expect(readOnly == ["opened readOnly=true journal=rollback", "executed"], "\(readOnly)")
        let write = try Self.openUnprivileged(["--read-only", path, key, "INSERT INTO t(body) VALUES ('x')"])
        #expect(write.count == 2 && write[1].hasPrefix("error sqlite:") && write[1].contains("readOnly: true"), "\(write)")
        #expect(FolderSnapshot(dir.url.path) == before)
    }
}
