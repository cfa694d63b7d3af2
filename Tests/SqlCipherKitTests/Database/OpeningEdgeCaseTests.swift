import Foundation
import Testing
@testable import SqlCipherKit

/// Opening under hostile conditions: raw-key-shaped passphrases, read-only opening beside a live
/// writer in another process, hostile SQLCIPHERKIT_LIBRARY values.
@Suite("Opening: hostile keys, read-only and library paths")
struct OpeningEdgeCaseTests: OneRowDatabaseFixture {
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
                _ = try Database(path: directory.path("n.db"), key: .passphrase(Data(shape.utf8)))
            }
            await #expect(throws: SqlCipherError.passphraseLooksLikeRawKey, "\(shape)") { try await db.rekey(.passphrase(shape)) }
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
        try launch(cli)
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

    /// A file of fewer bytes than any page, or not a whole number of pages, without a SQLite
    /// header, is no database. With a key, a file of 1 byte opened as a new, empty database
    /// (SQLCipher reads a salt of fewer than 16 bytes as none), skipped the creation proof and was
    /// overwritten with the new database at the first write; a read-only open reported it empty;
    /// `upgradeFromSqlCipher3` "upgraded" it. Every opening now refuses it, and the file stays as
    /// it was; longer odd sizes were refused already, after a read. (A short file beside a `-wal`
    /// that holds page 1, the state a crash can leave, still opens: KeyDerivationTests.)
    @Test func aFileShorterThanAPageOrOfPartPagesIsRefusedUntouched() async throws {
        let dir = TemporaryDirectory()
        var generator = SystemRandomNumberGenerator()
        let sizes = [1, 2, 15, 16, 100, 511, 513, 4095, 4097]
        for size in sizes {
            let path = dir.path("odd-\(size).db")
            let bytes = Data((0..<size).map { _ in UInt8.random(in: 1...255, using: &generator) })
            try bytes.write(to: URL(fileURLWithPath: path))
            var openings: [(String, () throws -> Void)] = [
                ("key", { _ = try Database(path: path, rawKey: rawKey()) }),
                ("passphrase", { _ = try Database(path: path, key: "p", cipher: CipherSettings(kdfIterations: 1000)) }),
                ("readOnly", { _ = try Database(path: path, rawKey: rawKey(), readOnly: true) }),
                ("pool", { _ = try DatabasePool(path: path, rawKey: rawKey()) }),
            ]
            if isSQLCipher4() {
                openings.append(("upgrade", { try Database.upgradeFromSqlCipher3(path: path, key: .rawKey(rawKey())) }))
            }
            for (name, open) in openings {
                #expect("\(size) \(name)", performing: open, throws: { error in
                    guard case SqlCipherError.notADatabase(_, let reason) = error else { return false }
                    return reason.contains("its size (\(size) bytes) is not a multiple of any page size")
                })
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "\(size) \(name)")
            }
        }
        // Nothing beside them either: no -journal, -wal, -shm or work file.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.url.path)) == Set(sizes.map { "odd-\($0).db" }))
    }

    /// A file of `/proc` or `/sys` is a regular file that reports a size of 0 whatever it holds:
    /// `/proc/self/status` (or a link to it) was taken for a new, empty database and failed at the
    /// first write with SQLite's bare "unable to open database file". Every opening now refuses a
    /// path there, saying why.
    @Test func aFileOfTheKernelsFileSystemsIsRefused() async throws {
        let dir = TemporaryDirectory()
        #expect(symlink("/proc/self/status", dir.path("link.db")) == 0)
        #expect(symlink("/proc/self", dir.path("folder")) == 0)
        var paths = ["/proc/self/status", "/proc/self/new.db", dir.path("link.db"), dir.path("folder/new.db")]
        if FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled") {
            paths.append("/sys/kernel/mm/transparent_hugepage/enabled")
        }
        for path in paths {
            let openings: [(String, () throws -> Void)] = [
                ("key", { _ = try Database(path: path, rawKey: rawKey()) }),
                ("plaintext", { _ = try Database(unencryptedPath: path) }),
                ("readOnly", { _ = try Database(path: path, rawKey: rawKey(), readOnly: true) }),
                ("pool", { _ = try DatabasePool(path: path, rawKey: rawKey()) }),
            ]
            for (name, open) in openings {
                #expect("\(path) \(name)", performing: open, throws: { error in
                    guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
                    return reason.contains("file system, whose files are a view of the running system")
                })
            }
        }
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

    /// A process out of file descriptors (a service that leaks them, or runs more connections than
    /// its limit allows), in a child of its own: opening a file, creating one, a pool's reader and
    /// a pool's backup said the file "cannot be read", or that its folder must be writable, or
    /// gave SQLite's bare "unable to open database file". Each now names the cause and what to
    /// do; nothing is half-created, and the file opens afterwards with all its rows.
    @Test func anOpeningWithoutFileDescriptorsSaysSo() async throws {
        let dir = TemporaryDirectory()
        let result = try runHelper(["open-without-descriptors", dir.url.path])
        #expect(result.status == 0 && !result.signaled, "\(result.stdout) \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let steps = ["open-0", "create-0", "open-1", "create-1", "open-2", "create-2", "pool-reads", "pool-backup"]
        for step in steps {
            let line = lines.first { $0.hasPrefix(step + " ") } ?? "missing"
            #expect(line.contains(" error ") && line.contains("run out of file descriptors")
                        && line.contains("raise the limit"), "\(step): \(line)")
            // The cause comes first: advice about the folder's permissions, when SQLite's words
            // led to it, follows only as what SQLite reported.
            if let cause = line.range(of: "run out of file descriptors"), let folder = line.range(of: "must be writable") {
                #expect(cause.lowerBound < folder.lowerBound, "\(step): \(line)")
            }
        }
        #expect(lines.contains("pool-open ok"), "\(result.stdout)")
        // A pool with a reader open serves its reads on it when no other can be opened (each read
        // beyond the first failed with the opening's error), and opens readers again afterwards.
        #expect(lines.contains("pool-reads-one-reader ok") && lines.contains("pool-readers 1")
                    && lines.contains("pool-reads-after ok"), "\(result.stdout)")
        #expect(lines.contains("db.db rows 100"), "\(result.stdout)")
        #expect(lines.contains("new.db absent") || lines.contains("new.db opens"), "\(result.stdout)")
        #expect(lines.contains("backup.db absent") || lines.contains("backup.db opens"), "\(result.stdout)")
    }
}
