import Foundation
import Testing
@testable import SqlCipherKit

/// A second adversarial review of issue 12's promises through the public API: values and inputs,
/// keys and opening, raw SQL. Tests that fail expose a defect; tests that pass prove that a
/// suspected hole is closed. (The first review, `AdversarialReviewTests`, covered pragma
/// spellings, ATTACH key expressions, VACUUM INTO and cancellation.)
@Suite struct AdversarialReviewIssue12Tests {
    func database(_ directory: TemporaryDirectory, _ name: String = "a.db",
                  journalMode: JournalMode = .wal) async throws -> Database {
        let db = try Database(path: directory.path(name), rawKey: rawKey(), journalMode: journalMode)
        try await db.execute("CREATE TABLE IF NOT EXISTS t(x INTEGER)")
        try await db.execute("INSERT INTO t VALUES (1)")
        return db
    }

    func values(_ db: Database) async throws -> [Int] {
        try await db.query("SELECT x FROM t ORDER BY x").map { try $0.decode(0, as: Int.self) }
    }

    /// The value SQLite returns for `expression`, read as `T`.
    func read<T: DatabaseValueConvertible>(_ db: Database, _ expression: String, as type: T.Type) async throws -> T? {
        try await db.query("SELECT \(expression) AS v")[0].get("v", as: type)
    }

    // MARK: 1. Values

    /// DEFECT: calendar text that names no real instant must not be rolled over into another date
    /// ("exact or nil"): 30 February is not 1 March.
    @Test func impossibleCalendarTextIsNotADate() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for text in ["2024-02-30", "2023-02-29 00:00:00", "2024-13-01", "2024-00-10", "2024-01-32",
                     "2024-01-01 24:00:00", "2024-01-01 23:60:00", "2024-01-01 23:59:61",
                     "2024-01-01 12:00:00+25:00", "2024-01-01T12:00:00+01:75"] {
            let date = try await read(db, "'\(text)'", as: Date.self)
            #expect(date == nil, "'\(text)' read as \(String(describing: date))")
        }
        // Held: the valid forms still read.
        #expect(try await read(db, "'2024-02-29 23:59:59.999'", as: Date.self) != nil)
        #expect(try await read(db, "'2024-02-29T12:00:00+05:30'", as: Date.self) != nil)
    }

    /// Held: text is never read as an integer, whatever SQLite's own `CAST` would make of it, and
    /// the decimal text form of `UInt64` is exact.
    @Test func numericTextIsReadExactlyOrNotAtAll() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for text in ["  12", "12 ", "0x10", "1e3", "-0", "+5", "12abc", "٣"] {
            #expect(try await read(db, "'\(text)'", as: Int.self) == nil, "Int from '\(text)'")
            #expect(try await read(db, "'\(text)'", as: Int64.self) == nil, "Int64 from '\(text)'")
            #expect(try await read(db, "'\(text)'", as: Double.self) == nil, "Double from '\(text)'")
            #expect(try await read(db, "'\(text)'", as: Bool.self) == nil, "Bool from '\(text)'")
        }
        for text in ["18446744073709551616", "+18446744073709551615", " 18446744073709551615",
                     "018446744073709551615", "0x8000000000000000", "1.8446744073709552e19", "-18446744073709551615",
                     "99999999999999999999999"] {
            #expect(try await read(db, "'\(text)'", as: UInt64.self) == nil, "UInt64 from '\(text)'")
            #expect(try await read(db, "'\(text)'", as: UInt.self) == nil, "UInt from '\(text)'")
        }
        #expect(try await read(db, "'18446744073709551615'", as: UInt64.self) == UInt64.max)
        // A UInt64 above Int64.max round-trips through a parameter.
        try await db.execute("CREATE TABLE u(v)")
        try await db.execute("INSERT INTO u VALUES (?)", UInt64.max - 1)
        #expect(try await db.query("SELECT v FROM u")[0].get(0, as: UInt64.self) == UInt64.max - 1)
    }

    /// Held: reals at the edges of every integer type are nil, never a trap or a clamp.
    @Test func realsAtIntegerEdges() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        #expect(try await read(db, "9223372036854775807.0", as: Int.self) == nil)  // 2^63 as a double
        #expect(try await read(db, "9223372036854775807.0", as: Int64.self) == nil)
        #expect(try await read(db, "-9223372036854775808.0", as: Int64.self) == Int64.min)
        #expect(try await read(db, "18446744073709551616.0", as: UInt64.self) == nil)
        #expect(try await read(db, "2147483648.0", as: Int32.self) == nil)
        #expect(try await read(db, "-2147483649.0", as: Int32.self) == nil)
        #expect(try await read(db, "4294967296.0", as: UInt32.self) == nil)
        #expect(try await read(db, "-1.0", as: UInt8.self) == nil)
        #expect(try await read(db, "-0.0", as: UInt8.self) == 0)
        #expect(try await read(db, "1e308 * 10", as: Int.self) == nil)  // +inf
        #expect(try await read(db, "-1e308 * 10", as: Int.self) == nil)  // -inf
        #expect(try await read(db, "9007199254740993", as: Double.self) == nil)  // 2^53 + 1
        #expect(try await read(db, "9223372036854775807", as: Float.self) != nil)  // rounds, in range
        #expect(try await read(db, "3.4028235677973366e38", as: Float.self) == nil)  // rounds to +inf
        #expect(try await read(db, "1e-50", as: Float.self) == nil)  // would become 0
        #expect(try await read(db, "1e308 * 10", as: Float.self) == .infinity)  // an infinity stays one
        #expect(try await read(db, "1e308 * 10", as: Double.self) == .infinity)
    }

    /// Held: UUIDs and enums of odd shapes are nil or a typed error.
    enum Level: Int, Codable, Sendable { case low = 1 }
    struct Leveled: Decodable, Sendable { let v: Level }
    @Test func oddUUIDsAndEnums() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        #expect(try await read(db, "'{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}'", as: UUID.self) == nil)
        #expect(try await read(db, "'E621E1F8C36C495A93FC0C247A3E6E5F'", as: UUID.self) == nil)
        #expect(try await read(db, "x'00112233445566778899aabbccddee'", as: UUID.self) == nil)  // 15 bytes
        #expect(try await read(db, "'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'", as: UUID.self) != nil)
        for sql in ["SELECT 1.5 AS v", "SELECT '1' AS v", "SELECT 2 AS v", "SELECT NULL AS v", "SELECT x'01' AS v"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.fetch(Leveled.self, sql: sql) }
        }
        #expect(try await db.fetch(Leveled.self, sql: "SELECT 1.0 AS v").first?.v == .low)
    }

    /// An entity whose nested (JSON) property holds NaN or an infinity: a typed error and
    /// nothing written, or an exact round trip. Never a foreign error type, a NULL, or a table
    /// that no longer decodes.
    struct Inner: Codable, Equatable, Sendable { var weights: [Double]; var scale: Float }
    struct Sample: Entity, Equatable {
        static let tableName = TableName("samples")
        static let primaryKey: WritableKeyPath<Sample, Int?> & Sendable = \.id
        var id: Int?
        var inner: Inner
        var list: [Double]
        var maybe: [Double?]?
    }

    @Test func nonFiniteNumbersInsideJSONPropertiesAreTypedErrorsOrExact() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE TABLE samples(id INTEGER PRIMARY KEY, inner TEXT, list TEXT, maybe TEXT)")
        let hostile: [Sample] = [
            Sample(id: nil, inner: Inner(weights: [1, .nan], scale: 1), list: [], maybe: nil),
            Sample(id: nil, inner: Inner(weights: [], scale: .nan), list: [], maybe: nil),
            Sample(id: nil, inner: Inner(weights: [], scale: 1), list: [.infinity], maybe: nil),
            Sample(id: nil, inner: Inner(weights: [-.infinity], scale: .infinity), list: [], maybe: nil),
            Sample(id: nil, inner: Inner(weights: [], scale: 1), list: [], maybe: [nil, .nan]),
        ]
        for sample in hostile {
            do {
                let saved = try await db.save(sample)
                let back = try await db.fetchOne(Sample.self, id: try #require(saved.id))
                // Accepted: must read back exactly (NaN compares unequal, so NaN can never be accepted).
                #expect(back == saved, "\(sample) did not round-trip: \(String(describing: back))")
            } catch let error as SqlCipherError {
                guard case .encodingFailed = error else {
                    Issue.record("\(sample): unexpected \(error)")
                    continue
                }
            } catch {
                Issue.record("\(sample): an untyped error \(type(of: error)): \(error)")
            }
        }
        // Whatever was accepted, the table still decodes as a whole.
        _ = try await db.fetch(Sample.self)
    }

    /// Held: a DEFAULT at the edges of the value space is written as a literal that reads back the
    /// same value, with the same storage class.
    @Test func columnDefaultsAtTheEdges() async throws {
        struct M: Migration {
            let id = "edges"
            func up(_ ctx: MigrationContext) throws {
                try ctx.execute(CreateTable(TableName("d"))
                    .column("id", .integer, .primaryKey)
                    .column("small", .integer, .default(Int64.min))
                    .column("smallAny", .blob, .default(Int64.min))
                    .column("big", .integer, .default(Int64.max))
                    .column("inf", .real, .default(Double.infinity))
                    .column("tiny", .real, .default(Double.leastNonzeroMagnitude))
                    .column("quote", .text, .default("it's -- /* */ ; DROP TABLE t"))
                    .column("raw", .blob, .default(Data([0, 0x27, 0xFF]))))
            }
        }
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.migrate([M()])
        try await db.execute("INSERT INTO d(id) VALUES (1)")
        let row = try await db.query("SELECT * FROM d")[0]
        #expect(row["small"] == .integer(Int64.min))
        #expect(row["smallAny"] == .integer(Int64.min))
        #expect(row["big"] == .integer(Int64.max))
        #expect(row["inf"] == .real(.infinity))
        #expect(row["tiny"] == .real(.leastNonzeroMagnitude))
        #expect(row["quote"] == .text("it's -- /* */ ; DROP TABLE t"))
        #expect(row["raw"] == .blob(Data([0, 0x27, 0xFF])))
        #expect(try await values(db) == [1])
    }

    /// Held: more than `Int32.max` bytes through a parameter, a builder value, an entity
    /// property, a passphrase and a rekey is `SQLITE_TOOBIG`, never a trap. `Data(count:)` is
    /// zero-filled lazily, so this costs little memory.
    struct Holder: Entity {
        static let tableName = TableName("holder")
        static let primaryKey: WritableKeyPath<Holder, Int?> & Sendable = \.id
        var id: Int?
        var payload: Data
    }

    @Test func moreThanInt32MaxBytesIsTooBigEverywhere() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE TABLE holder(id INTEGER PRIMARY KEY, payload BLOB)")
        let big = Data(count: Int(Int32.max) + 1)
        func isTooBig(_ error: any Error) -> Bool {
            if case SqlCipherError.sqlite(code: 18, _, _, _) = error { return true }
            return false
        }
        let e1 = await #expect(throws: SqlCipherError.self) { _ = try await db.execute("INSERT INTO holder(payload) VALUES (?)", big) }
        #expect(e1.map(isTooBig) == true, "\(String(describing: e1))")
        let e2 = await #expect(throws: SqlCipherError.self) { _ = try await db.save(Holder(id: nil, payload: big)) }
        #expect(e2.map(isTooBig) == true, "\(String(describing: e2))")
        let e3 = await #expect(throws: SqlCipherError.self) { try await db.rekey(big) }
        #expect(e3.map(isTooBig) == true, "\(String(describing: e3))")
        let e4 = #expect(throws: SqlCipherError.self) { _ = try Database(path: directory.path("b.db"), key: big) }
        #expect(e4.map(isTooBig) == true, "\(String(describing: e4))")
        #expect(try await values(db) == [1])
        #expect(try await db.query("SELECT count(*) FROM holder")[0].get(0, as: Int.self) == 0)
    }

    // MARK: 2. Keys and opening

    /// Held: passphrases in every raw-key shape SQLCipher parses (either case of `x`, mixed-case
    /// hex, 64 or 96 digits, any last byte) are refused on open and on rekey; near misses are
    /// derived as passphrases.
    @Test func rawKeyShapedPassphrasesInOtherForms() async throws {
        let directory = TemporaryDirectory()
        let hex64 = String(repeating: "aB3f", count: 16)
        let hex96 = String(repeating: "0Fe9", count: 24)
        let shapes = ["X'\(hex64)'", "x'\(hex64)\"", "x'\(hex96)Z", "X'\(hex96)\u{7F}"]
        let db = try await database(directory)
        for shape in shapes {
            #expect(throws: SqlCipherError.passphraseLooksLikeRawKey, "\(shape)") {
                _ = try Database(path: directory.path("n.db"), key: shape)
            }
            #expect(throws: SqlCipherError.passphraseLooksLikeRawKey, "\(shape)") {
                _ = try Database(path: directory.path("n.db"), key: Data(shape.utf8))
            }
            await #expect(throws: SqlCipherError.passphraseLooksLikeRawKey, "\(shape)") { try await db.rekey(shape) }
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("n.db")))
        // Near misses are ordinary passphrases: the file is not a raw-key file.
        for (index, miss) in ["x'\(hex64)''", " x'\(hex64)'", "x'\(hex64.dropLast())g'", "x\"\(hex64)'"].enumerated() {
            let path = directory.path("m\(index).db")
            let made = try Database(path: path, key: miss)
            try await made.execute("CREATE TABLE k(x)")
            await made.close()
            let hexKey = Data(hexString: String(hex64))!
            #expect(throws: SqlCipherError.self, "\(miss)") { _ = try Database(path: path, rawKey: hexKey) }
        }
        #expect(try await values(db) == [1])
    }

    /// Held: a read-only database cannot run a transaction, and ATTACH cannot create a file in
    /// its folder.
    @Test func readOnlyTransactionAndAttachLeaveTheFolderAlone() async throws {
        let directory = TemporaryDirectory()
        do {
            let db = try await database(directory, journalMode: .rollback)
            await db.close()
        }
        let listing = { try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() }
        let before = try listing()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path("a.db")))
        let ro = try Database(path: directory.path("a.db"), rawKey: rawKey(), readOnly: true)
        await #expect(throws: (any Error).self) {
            try await ro.transaction { conn in _ = try conn.query("SELECT 1") }
        }
        for sql in ["ATTACH '\(directory.path("new.db"))' AS n",
                    "ATTACH 'file:\(directory.path("new2.db"))?mode=rwc' AS n",
                    "ATTACH '\(directory.path("new3.db"))' AS n KEY 'k'"] {
            _ = try? await ro.execute(sql)
            _ = try? await ro.execute("CREATE TABLE n.leak(x)")
            _ = try? await ro.execute("DETACH n")
        }
        _ = try? await ro.execute("PRAGMA journal_mode = WAL")
        _ = try? await ro.execute("PRAGMA user_version = 7")
        #expect(try await ro.query("SELECT x FROM t")[0].get(0, as: Int.self) == 1)
        await ro.close()
        #expect(try listing() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path("a.db"))) == bytes)
    }

    /// `readOnly: true` on a WAL file that another process (the sqlcipher CLI) has open and
    /// writes: it reads the committed rows and changes nothing of the database or its WAL.
    @Test(.enabled(if: isSQLCipher4(), "the 4.x CLI; a 3.4.1 file from a 4.x CLI needs settings")) func readOnlyOnAWALFileWithALiveWriterInAnotherProcess() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path("live.db")
        let hex = rawKey().map { String(format: "%02x", $0) }.joined()
        let cli = Process()
        cli.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cli.arguments = ["sqlcipher", path]
        let input = Pipe(), output = Pipe()
        cli.standardInput = input
        cli.standardOutput = output
        cli.standardError = FileHandle.nullDevice
        try cli.run()
        defer { try? input.fileHandleForWriting.close(); cli.waitUntilExit() }
        func send(_ text: String) { input.fileHandleForWriting.write(Data((text + "\n").utf8)) }
        send("PRAGMA key = \"x'\(hex)'\";")
        send("PRAGMA journal_mode = WAL;")
        send("CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1), (2);")
        send("PRAGMA wal_autocheckpoint = 0;")
        send("INSERT INTO t VALUES (3);")
        // Handshake: the CLI runs its input in order, so once it prints the marker, the insert is
        // in the WAL and the -shm exists (the CLI still holds the database open).
        send("SELECT 'inserted';")
        var printed = Data()
        while !String(decoding: printed, as: UTF8.self).contains("inserted") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        #expect(String(decoding: printed, as: UTF8.self).contains("inserted"))
        #expect(FileManager.default.fileExists(atPath: path + "-shm"))
        let mainBefore = try Data(contentsOf: URL(fileURLWithPath: path))
        let ro = try Database(path: path, rawKey: rawKey(), readOnly: true)
        let rows = try await ro.query("SELECT x FROM t ORDER BY x").map { try $0.decode(0, as: Int.self) }
        #expect(rows == [1, 2, 3])
        await #expect(throws: (any Error).self) { _ = try await ro.execute("INSERT INTO t VALUES (9)") }
        await #expect(throws: (any Error).self) { _ = try await ro.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        await ro.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == mainBefore)
    }

    /// Held: `SQLCIPHERKIT_LIBRARY` set to a directory, `.`, a text file, or a symlink to the
    /// system's plaintext libsqlite3 loads nothing and gives a typed error; "" means "not set".
    @Test func hostileLibraryEnvironmentValues() throws {
        let subject = try BareLibraryNameTests.subject()
        let dir = TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: dir.path("text.so"), contents: Data("hello\n".utf8))
        try FileManager.default.createDirectory(atPath: dir.path("adir.so"), withIntermediateDirectories: true)
        let plain = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0"
        try FileManager.default.createSymbolicLink(atPath: dir.path("libsqlcipher-alias.so"), withDestinationPath: plain)
        for value in [".", "..", dir.path("adir.so"), dir.path("text.so"), dir.path("libsqlcipher-alias.so"),
                      "./libsqlcipher-alias.so", "libsqlite3.so.0", plain, "/", "/dev/null", dir.path("missing.so")] {
            let result = try #require(try BareLibraryNameTests.helper(
                ["library-info"], in: dir.url, environment: [SqlCipherLibrary.environmentVariable: value]).first,
                "\(value): no output")
            #expect(result["outcome"] as? String == "error", "\(value): \(result)")
            #expect(["notSQLCipher", "libraryNotFound", "missingSymbol"].contains(result["case"] as? String ?? ""),
                    "\(value): \(result)")
        }
        let unset = try #require(try BareLibraryNameTests.helper(
            ["library-info"], in: dir.url,
            environment: [SqlCipherLibrary.environmentVariable: "", "LD_LIBRARY_PATH": nil]).first)
        #expect(unset["outcome"] as? String == "loaded", "\(unset)")
        _ = subject
    }

    // MARK: 3. Raw SQL

    /// Held: temp_store and temp_store_directory through every schema prefix.
    @Test func tempStoreThroughSchemaPrefixes() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for sql in ["PRAGMA main.temp_store = 1", "PRAGMA temp.temp_store = FILE", "PRAGMA \"temp\".temp_store = 0",
                    "PRAGMA temp.temp_store_directory = '/tmp'", "PRAGMA main.temp_store_directory = ''",
                    "PRAGMA temp_store = 'file'", "PRAGMA temp_store = -1", "PRAGMA temp_store(DEFAULT)",
                    "PRAGMA temp_store = 3"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.execute(sql) }
        }
        #expect(try await db.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)
        // SQLite 3.15.2 (under 3.4.1) has no table-valued pragma functions.
        if isSQLCipher4() {
            #expect(try await db.query("SELECT * FROM pragma_temp_store")[0].get(0, as: Int.self) == 2)
        }
    }

    /// Held: extensions cannot be loaded from SQL.
    @Test func loadExtensionFromSQLFails() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for sql in ["SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0')",
                    "SELECT load_extension('libc.so.6', 'puts')",
                    "WITH e(r) AS (SELECT load_extension('libm.so.6')) SELECT r FROM e"] {
            await #expect(throws: (any Error).self, "\(sql)") { _ = try await db.query(sql) }
        }
        #expect(try await values(db) == [1])
    }

    /// Held: sqlcipher_export wrapped in a CTE, a subquery, another case, a DEFAULT expression,
    /// between two encrypted files.
    @Test func wrappedSqlcipherExport() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("ATTACH '\(directory.path("b.db"))' AS b KEY 'other'")
        for sql in ["WITH x(r) AS (SELECT sqlcipher_export('b')) SELECT r FROM x",
                    "SELECT (SELECT SQLCIPHER_EXPORT('b'))", "SELECT SqlCipher_Export('b', 'main')",
                    "SELECT coalesce(NULL, sqlcipher_export('b'))",
                    "SELECT * FROM t WHERE x = 1 OR sqlcipher_export('b') IS NULL"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { _ = try await db.query(sql) }
        }
        #expect(try await db.query("SELECT count(*) FROM b.sqlite_master")[0].get(0, as: Int.self) == 0)
        // Generated columns and CHECK constraints need deterministic functions: SQLite refuses.
        _ = try? await db.execute("CREATE TABLE chk(a CHECK (sqlcipher_export('b') IS NULL OR 1))")
        _ = try? await db.execute("INSERT INTO chk VALUES (1)")
        #expect(try await db.query("SELECT count(*) FROM b.sqlite_master")[0].get(0, as: Int.self) == 0)
    }

    /// DEFECT: a column DEFAULT expression calls `sqlcipher_export` when an INSERT omits the
    /// column. SQLite never resolves a DEFAULT through the authorizer (neither at CREATE TABLE
    /// nor when the INSERT is compiled), so the SQLITE_FUNCTION rule never sees it: the function
    /// runs from raw SQL and copies the whole database into the attached file.
    @Test func sqlcipherExportInAColumnDefaultIsRefused() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("ATTACH '\(directory.path("b.db"))' AS b KEY 'other'")
        _ = try? await db.execute("CREATE TABLE dflt(a, b DEFAULT (sqlcipher_export('b')))")
        await #expect(throws: SqlCipherError.self) { _ = try await db.execute("INSERT INTO dflt(a) VALUES (1)") }
        let copied = try await db.query("SELECT name FROM b.sqlite_master").compactMap { $0.get(0, as: String.self) }
        #expect(copied.isEmpty, "sqlcipher_export ran from raw SQL and copied \(copied) into b")
    }

    /// Held: a user trigger on the package's own `_migrations` table fires inside `migrate`; its
    /// refused function must stay refused there (the package writes that table itself).
    @Test func triggerOnTheMigrationsTableCannotRunRefusedFunctions() async throws {
        struct First: Migration {
            let id = "first"
            func up(_ ctx: MigrationContext) throws { _ = try ctx.execute("CREATE TABLE m1(x)") }
        }
        struct Second: Migration {
            let id = "second"
            func up(_ ctx: MigrationContext) throws { _ = try ctx.execute("CREATE TABLE m2(x)") }
        }
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.migrate([First()])
        try await db.execute("ATTACH '\(directory.path("b.db"))' AS b KEY 'other'")
        try await db.execute(
            "CREATE TRIGGER tm AFTER INSERT ON _migrations BEGIN SELECT sqlcipher_export('b'); END")
        await #expect(throws: SqlCipherError.self) { try await db.migrate([First(), Second()]) }
        #expect(try await db.query("SELECT count(*) FROM b.sqlite_master")[0].get(0, as: Int.self) == 0)
    }

    /// Held: `ON DELETE SET DEFAULT` evaluates the child column's DEFAULT when a parent row is
    /// deleted; SQLite codes that action as a trigger, which is resolved through the authorizer,
    /// so the DELETE is refused and `sqlcipher_export` does not run.
    @Test func sqlcipherExportThroughOnDeleteSetDefaultIsRefused() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("PRAGMA foreign_keys = ON")
        try await db.execute("ATTACH '\(directory.path("b.db"))' AS b KEY 'other'")
        try await db.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY)")
        _ = try? await db.execute("""
            CREATE TABLE child(id INTEGER PRIMARY KEY, p INTEGER DEFAULT (sqlcipher_export('b')) \
            REFERENCES parent(id) ON DELETE SET DEFAULT)
            """)
        try await db.execute("INSERT INTO parent VALUES (1)")
        _ = try? await db.execute("INSERT INTO child(id, p) VALUES (1, 1)")
        _ = try? await db.execute("DELETE FROM parent WHERE id = 1")
        let copied = try await db.query("SELECT name FROM b.sqlite_master").compactMap { $0.get(0, as: String.self) }
        #expect(copied.isEmpty, "sqlcipher_export ran from a DELETE and copied \(copied) into b")
    }

    /// DEFECT, same class as `impossibleCalendarTextIsNotADate`, through an entity: a stored
    /// '2024-02-30' decodes as 1 March instead of failing.
    struct Event: Entity {
        static let tableName = TableName("events")
        static let primaryKey: WritableKeyPath<Event, Int?> & Sendable = \.id
        var id: Int?
        var at: Date
    }

    @Test func impossibleDateInAnEntityColumnFailsToDecode() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        try await db.execute("CREATE TABLE events(id INTEGER PRIMARY KEY, at TEXT)")
        try await db.execute("INSERT INTO events VALUES (1, '2024-02-30 10:00:00')")
        let fetched = try? await db.fetch(Event.self)
        #expect(fetched == nil, "decoded as \(String(describing: fetched?.first?.at))")
    }

    /// Held: `PRAGMA key` (and rekey) from a migration's SQL and from a live request's closure.
    @Test func keyPragmaFromAMigrationAndALiveRequest() async throws {
        struct Keyed: Migration {
            let sql: String
            var id: String { "keyed-\(sql)" }
            func up(_ ctx: MigrationContext) throws { _ = try ctx.execute(sql) }
        }
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        for sql in ["PRAGMA key = 'B'", "PRAGMA main.rekey = 'B'", "PRAGMA hexkey = '0011'",
                    "INSERT INTO t VALUES (5); PRAGMA key = 'B'"] {
            await #expect(throws: SqlCipherError.self, "\(sql)") { try await db.migrate([Keyed(sql: sql)]) }
            let request = LiveRequest(placeholder: 0) { conn in try conn.execute(sql) }
            await #expect(throws: (any Error).self, "\(sql)") {
                for try await _ in db.values(of: request) { break }
            }
        }
        try await db.execute("INSERT INTO t VALUES (2)")
        await db.close()
        let again = try Database(path: directory.path("a.db"), rawKey: rawKey())
        #expect(try await values(again) == [1, 2])
    }

    /// A refused pragma in the middle of a multi-statement script: the statements before it stay
    /// applied (documented: "statements before a failing one stay applied"), none after it runs,
    /// and nothing of the pragma took effect.
    @Test func refusedPragmaInsideAScript() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        await #expect(throws: SqlCipherError.self) {
            _ = try await db.execute("INSERT INTO t VALUES (5); PRAGMA cipher_use_hmac = OFF; INSERT INTO t VALUES (6)")
        }
        #expect(try await values(db) == [1, 5])
        await #expect(throws: SqlCipherError.self) {
            _ = try await db.execute("INSERT INTO t VALUES (7); PRAGMA temp_store = FILE; INSERT INTO t VALUES (8)")
        }
        #expect(try await values(db) == [1, 5, 7])
        #expect(try await db.query("PRAGMA temp_store")[0].get(0, as: Int.self) == 2)
        await db.close()
        let again = try Database(path: directory.path("a.db"), rawKey: rawKey())
        #expect(try await values(again) == [1, 5, 7])
        #expect(try await again.verifyIntegrity().isOK)
    }

    /// Held: attaching the database's own file under another name, with its key or with another
    /// key, then writing through both names, cannot leave two keys or a broken file.
    @Test func attachingTheOwnFileUnderAnotherName() async throws {
        for mode in [JournalMode.wal, .rollback] {
            let directory = TemporaryDirectory()
            let db = try await database(directory, journalMode: mode)
            let own = directory.path("a.db")
            try await db.execute("ATTACH '\(own)' AS twin")
            _ = try? await db.transaction { conn in
                _ = try conn.execute("INSERT INTO main.t VALUES (2)")
                _ = try conn.execute("INSERT INTO twin.t VALUES (3)")
            }
            _ = try? await db.execute("INSERT INTO twin.t VALUES (4)")
            try await db.execute("DETACH twin")
            _ = try? await db.execute("ATTACH '\(own)' AS other KEY 'B'")
            _ = try? await db.execute("CREATE TABLE other.planted(x)")
            _ = try? await db.execute("INSERT INTO other.t VALUES (99)")
            _ = try? await db.execute("DETACH other")
            await #expect(throws: (any Error).self) { _ = try await db.execute("DETACH main") }
            await #expect(throws: (any Error).self) { _ = try await db.execute("DETACH temp") }
            try await db.execute("INSERT INTO t VALUES (10)")
            await db.close()
            let again = try Database(path: own, rawKey: rawKey(), journalMode: mode)
            let found = try await values(again)
            #expect(found.contains(1) && found.contains(10) && !found.contains(99), "\(mode): \(found)")
            #expect(try await again.verifyIntegrity().isOK, "\(mode)")
            await again.close()
            #expect(throws: (any Error).self) { _ = try Database(path: own, key: "B", journalMode: mode) }
        }
    }

    /// FINDING (data loss, not encryption): `PRAGMA writable_schema` lets raw SQL rewrite `sqlite_master`: one UPDATE makes the file
    /// unopenable (every open fails with "malformed database schema"), losing every row.
    @Test func writableSchemaCannotMakeTheFileUnopenable() async throws {
        let directory = TemporaryDirectory()
        let db = try await database(directory)
        _ = try? await db.execute("PRAGMA writable_schema = ON")
        _ = try? await db.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE t(x INTEGER' WHERE name = 't'")
        _ = try? await db.execute("PRAGMA writable_schema = OFF")
        await db.close()
        let again = try Database(path: directory.path("a.db"), rawKey: rawKey())
        #expect(try await values(again) == [1])
    }
}
