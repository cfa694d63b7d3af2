import Foundation
import SqlCipherKit
import Testing

/// A named pipe, socket or device where a database file or one of its companions belongs is refused
/// with a typed error, quickly: SQLite would block forever reading a pipe (a hot-journal check opens
/// `-journal` read-only, which waits for a writer), so every opener looks before SQLite does.
/// Each child runs under `timeout`, so a hang fails the test instead of stalling the run.
@Suite struct SpecialFileTests {
    static let hexKey = String(repeating: "ab", count: 32)

    /// Runs the helper's `open-database` with a 20-second limit; a killed child means it hung.
    fileprivate static func openInChild(_ arguments: [String]) throws -> ChildResult {
        try runChild("/usr/bin/timeout", ["-s", "KILL", "20", productPath("sqlcipherkit-test-helper"), "open-database"]
            + arguments)
    }

    private static func makeDatabase(_ path: String) async throws {
        let db = try Database(path: path, rawKey: Data(repeating: 0xAB, count: 32))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (1)")
        await db.close()
    }

    @Test(arguments: ["-journal", "-wal", "-shm"])
    func aPipeAsACompanionOfAnExistingDatabaseIsRefused(suffix: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db")
        try await Self.makeDatabase(path)
        #expect(mkfifo(path + suffix, 0o600) == 0)
        let result = try Self.openInChild([path, "raw:\(Self.hexKey)", "INSERT INTO t SELECT x + 1 FROM t"])
        #expect(!result.signaled && result.status == 0, "the opener hung or crashed: \(result.stderr)")
        #expect(result.stdout.contains("error cannotOpen"), "\(result.stdout)")
        #expect(result.stdout.contains("pipe"), "\(result.stdout)")
    }

    @Test(arguments: ["plain", "read-only", "unencrypted"])
    func aPipeAsTheDatabaseIsRefused(kind: String) throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pipe.db")
        #expect(mkfifo(path, 0o600) == 0)
        let arguments: [String]
        switch kind {
        case "read-only": arguments = ["--read-only", path, "raw:\(Self.hexKey)"]
        case "unencrypted": arguments = [path, "none"]
        default: arguments = [path, "raw:\(Self.hexKey)"]
        }
        let result = try Self.openInChild(arguments)
        #expect(!result.signaled && result.status == 0, "the opener hung or crashed: \(result.stderr)")
        #expect(result.stdout.contains("error cannotOpen"), "\(result.stdout)")
    }
}

/// The pool opens through the same checks: a pipe beside the file is refused at once.
@Suite struct PoolSpecialFileTests {
    @Test(arguments: ["", "-journal", "-wal", "-shm"])
    func aPoolRefusesAPipeAsTheDatabaseOrACompanion(suffix: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db")
        if !suffix.isEmpty {
            let db = try Database(path: path, rawKey: rawKey())
            try await db.execute("CREATE TABLE t(x)")
            await db.close()
        }
        #expect(mkfifo(path + suffix, 0o600) == 0)
        #expect {
            _ = try DatabasePool(path: path, rawKey: rawKey())
        } throws: { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains("named pipe")
        }
    }
}

/// Raw `ATTACH` of names that are not regular files: refused with a typed error, never attached.
@Suite struct AttachSpecialFileTests {
    /// A raw `ATTACH` of a device once attached it as an empty database: every write to it was
    /// acknowledged and lost. Every spelling of the name (a path, a `file:` URI, a symlink to the
    /// device) is now detached again and refused with `cannotOpen`, on an encrypted database and on
    /// a plaintext one, and the connection goes on as before.
    @Test(arguments: [true, false])
    func aDeviceIsNeverAttached(encrypted: Bool) async throws {
        let dir = TemporaryDirectory()
        let db = encrypted
            ? try Database(path: dir.path("main.db"), rawKey: Data(repeating: 0xAB, count: 32))
            : try Database(unencryptedPath: dir.path("main.db"))
        try await db.execute("CREATE TABLE t(x)")
        #expect(symlink("/dev/zero", dir.path("link.db")) == 0)
        let key = encrypted ? " KEY 'other'" : ""
        for name in ["/dev/zero", "/dev/null", "file:/dev/zero", "file:///dev/null?mode=rw", dir.path("link.db")] {
            await #expect("\(name)") {
                try await db.execute("ATTACH '\(name)' AS a\(key)")
            } throws: { error in
                if case SqlCipherError.cannotOpen(_, let reason) = error {
                    return reason.contains("a device") && reason.contains("lost")
                }
                // A SQLite built without URI names (3.4.1's) reads `file:/dev/zero` as a relative
                // path in a folder `file:` that does not exist.
                guard name.hasPrefix("file:"), case SqlCipherError.sqlite(14, _, _, _) = error else { return false }
                return true
            }
            let schemas = try await db.query("PRAGMA database_list").compactMap { $0.get(1, as: String.self) }
            #expect(schemas == ["main"], "\(name)")
        }
        try await db.execute("INSERT INTO t VALUES (1)")
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
    }

    /// A raw `ATTACH` of a named pipe fails at once (SQLite reads with `pread`, which a pipe
    /// refuses) and the error says what an `ATTACH` can open, without the file's name or a key.
    @Test func aNamedPipeIsNotAttachedAndTheErrorSaysWhy() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("main.db"), rawKey: Data(repeating: 0xAB, count: 32))
        let pipe = dir.path("pipe.db")
        #expect(mkfifo(pipe, 0o600) == 0)
        for name in [pipe, "file:\(pipe)?key=HiddenPipeKey9"] {
            await #expect("\(name)") {
                try await db.execute("ATTACH '\(name)' AS p KEY 'HiddenPipeKey9'")
            } throws: { error in
                let text = "\(error)"
                return text.contains("named pipe") && !text.contains("HiddenPipeKey9") && !text.contains(pipe)
            }
        }
        #expect(try await db.query("PRAGMA database_list").count == 1)
    }

    /// A raw `ATTACH` of a file beside a named pipe `-journal` never returned on SQLCipher 4.6.1
    /// (SQLite's hot-journal check opens it for reading and waits for a writer), encrypted or not;
    /// 3.4.1 attached the file beside a pipe or a linked companion. Every opening refuses such
    /// companions; a raw `ATTACH` now does too, before it runs, naming the companion and leaving it.
    /// Each try runs in a child process under `timeout`, so that a wait fails the test.
    @Test(arguments: ["-journal", "-wal", "-shm"])
    func aFileBesideAPipeOrLinkedCompanionIsNotAttached(suffix: String) async throws {
        let dir = TemporaryDirectory()
        let other = dir.path("other.db"), plain = dir.path("plain.db"), victim = dir.path("victim")
        let made = try Database(path: other, key: "o", cipher: CipherSettings(kdfIterations: 1000))
        try await made.execute("CREATE TABLE t(x)")
        await made.close()
        let madePlain = try Database(unencryptedPath: plain)
        try await madePlain.execute("CREATE TABLE t(x)")
        await madePlain.close()
        try Data("victim".utf8).write(to: URL(fileURLWithPath: victim))
        let hexKey = String(repeating: "ab", count: 32)
        for (words, make) in [("is a named pipe", { mkfifo($0, 0o600) }), ("is a symbolic link", { symlink(victim, $0) })]
            as [(String, (String) -> Int32)] {
            for (file, main, key, clause) in [(other, dir.path("main.db"), "raw:\(hexKey)", " KEY 'o'"),
                                              (plain, dir.path("plain-main.db"), "none", "")] {
                #expect(make(file + suffix) == 0)
                let result = try SpecialFileTests.openInChild([main, key, "ATTACH '\(file)' AS a\(clause)"])
                #expect(!result.signaled && result.status == 0, "the ATTACH hung or crashed: \(result.stderr)")
                #expect(result.stdout.contains("error cannotOpen") && result.stdout.contains("\(file)\(suffix) \(words)"),
                        "\(words) \(file): \(result.stdout)")
                var info = stat()
                #expect(lstat(file + suffix, &info) == 0, "\(words) \(file): the companion was removed")
                #expect(remove(file + suffix) == 0)
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Data("victim".utf8))
    }
}

/// A file that only has a companion's name: a database called `x.db-wal`, `x.db-shm` or
/// `x.db-journal`. SQLite manages companions by name and never asks what is in them: one write to
/// `x.db` through SqlCipherKit deleted such a database beside it (a `-journal` as an interrupted
/// write, a `-wal` overwritten and removed at close, a `-shm` truncated), and the package created
/// databases under those names without a word.
@Suite struct ForeignCompanionTests {
    /// A database of the package's own, made at `path`.
    private static func makeDatabase(_ path: String, journalMode: JournalMode = .wal) async throws {
        let db = try Database(path: path, rawKey: rawKey(), journalMode: journalMode)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('keep me')")
        await db.close()
    }

    @Test(arguments: ["-journal", "-wal", "-shm"])
    func aNewDatabaseNamedLikeACompanionIsRefusedBeforeAnythingIsWritten(suffix: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("x.db" + suffix)
        let openings: [(String, () throws -> Void)] = [
            ("Database", { _ = try Database(path: path, rawKey: rawKey()) }),
            ("passphrase", { _ = try Database(path: path, key: "k", cipher: fastCipher) }),
            ("unencrypted", { _ = try Database(unencryptedPath: path) }),
            ("DatabasePool", { _ = try DatabasePool(path: path, rawKey: rawKey()) }),
        ]
        for (label, open) in openings {
            expectRefused(label: label, refusedFor: suffix, open)
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: dir.url.path)) ?? []).isEmpty,
                    "\(label): a file was created")
        }
        // An empty file there is a new database too.
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        expectRefused(label: "empty file", refusedFor: suffix) { _ = try Database(path: path, rawKey: rawKey()) }
        #expect(FileManager.default.contents(atPath: path) == Data())
    }

    @Test(arguments: ["-journal", "-wal", "-shm"], [JournalMode.wal, .rollback])
    func aDatabaseBesideAnotherUnderACompanionsNameIsNeverDeleted(suffix: String, mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("x.db")
        try await Self.makeDatabase(path, journalMode: mode)
        // Another database, made elsewhere and moved beside it under the companion's name.
        try await Self.makeDatabase(dir.path("other.db"), journalMode: .rollback)
        try FileManager.default.moveItem(atPath: dir.path("other.db"), toPath: path + suffix)
        let other = try #require(FileManager.default.contents(atPath: path + suffix))
        let plain = dir.path("plain.db")
        let plainDB = try Database(unencryptedPath: plain, journalMode: mode)
        try await plainDB.execute("CREATE TABLE p(x)")
        await plainDB.close()
        try FileManager.default.copyItem(atPath: path + suffix, toPath: plain + suffix)

        await expectRefused(label: "Database", refusedFor: suffix) {
            let db = try Database(path: path, rawKey: rawKey())
            defer { Task { await db.close() } }
            try await db.execute("INSERT INTO t VALUES ('a write')")
            await db.close()
        }
        expectRefused(label: "read-only", refusedFor: suffix) { _ = try Database(path: path, rawKey: rawKey(), readOnly: true) }
        expectRefused(label: "DatabasePool", refusedFor: suffix) { _ = try DatabasePool(path: path, rawKey: rawKey()) }
        let host = try Database(path: dir.path("host.db"), rawKey: rawKey(3))
        await expectRefused(label: "importPlaintext", refusedFor: suffix) {
            try await host.importPlaintext(from: plain) { _ = try $0.query("SELECT * FROM plain.p") }
        }
        await expectRefused(label: "ATTACH", refusedFor: suffix) {
            try await host.execute("ATTACH DATABASE ? AS p KEY ''", plain)
        }
        // The host goes on, and a write to it touches neither file.
        try await host.execute("CREATE TABLE h(x); INSERT INTO h VALUES (1)")
        await host.close()
        #expect(FileManager.default.contents(atPath: path + suffix) == other, "the database beside it was changed")
        #expect(FileManager.default.contents(atPath: plain + suffix) == other, "the file beside the plaintext one was changed")

        // Moved out of the way, as the message says, both open and hold what they held.
        try FileManager.default.moveItem(atPath: path + suffix, toPath: dir.path("other.db"))
        for file in [path, dir.path("other.db")] {
            let db = try Database(path: file, rawKey: rawKey())
            #expect(try await db.query("SELECT x FROM t").first?.get("x", as: String.self) == "keep me")
            await db.close()
        }
    }

    /// A `-wal` with commits beside a database file that is missing or empty (the file was moved,
    /// deleted or truncated without it): SQLite deletes the `-wal` of a file of no pages when it
    /// opens it, so a new database there deleted another database's last commits. Every opening
    /// and an `ATTACH` refuse it now, before anything is created; with the file back, its rows read.
    @Test(arguments: ["missing", "empty"])
    func aWALWhoseDatabaseFileIsGoneIsNeverDeleted(state: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("x.db")
        // Another program's database, its last commits only in its -wal (no checkpoint, killed).
        try SqlcipherCLI.runAndKill(isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(rawKey: rawKey()), "PRAGMA cipher_log = off", "PRAGMA journal_mode = WAL",
            "PRAGMA wal_autocheckpoint = 0", "CREATE TABLE t(x)", "INSERT INTO t VALUES ('in the wal')",
        ])
        try FileManager.default.moveItem(atPath: path, toPath: dir.path("moved.db"))
        if state == "empty" { #expect(FileManager.default.createFile(atPath: path, contents: Data())) }
        let wal = try #require(FileManager.default.contents(atPath: path + "-wal"))
        let shm = FileManager.default.contents(atPath: path + "-shm")
        #expect(wal.count > 32, "the -wal holds frames")

        let host = try Database(path: dir.path("host.db"), rawKey: rawKey(3))
        let openings: [(String, () async throws -> Void)] = [
            ("Database", { _ = try Database(path: path, rawKey: rawKey()) }),
            ("passphrase", { _ = try Database(path: path, key: "k", cipher: fastCipher) }),
            ("read-only", { _ = try Database(path: path, rawKey: rawKey(), readOnly: true) }),
            ("unencrypted", { _ = try Database(unencryptedPath: path) }),
            ("DatabasePool", { _ = try DatabasePool(path: path, rawKey: rawKey()) }),
            ("ATTACH", { try await host.execute("ATTACH DATABASE ? AS w", path) }),
        ]
        for (label, open) in openings {
            await expectRefused(label: label, refusedFor: "x.db-wal", open)
            #expect(FileManager.default.contents(atPath: path + "-wal") == wal, "\(label): the -wal was changed")
            #expect(FileManager.default.contents(atPath: path + "-shm") == shm, "\(label): the -shm was changed")
            #expect(FileManager.default.fileExists(atPath: path) == (state == "empty"), "\(label): x.db was created")
        }
        await host.close()

        // Put back, as the message says, the file reads with the commits of its -wal.
        if state == "empty" { try FileManager.default.removeItem(atPath: path) }
        try FileManager.default.moveItem(atPath: dir.path("moved.db"), toPath: path)
        let db = try Database(path: path, rawKey: rawKey())
        #expect(try await db.query("SELECT x FROM t").first?.get("x", as: String.self) == "in the wal")
        await db.close()
    }

    @Test func companionsSQLiteWroteStillOpen() async throws {
        // A -wal and -shm of a live connection, and a -journal whose header is zeros (what
        // journal_mode = PERSIST leaves, and what an unsynced journal starts with).
        let dir = TemporaryDirectory()
        let path = dir.path("x.db")
        try await Self.makeDatabase(path)
        let writer = try Database(path: path, rawKey: rawKey())
        try await writer.execute("INSERT INTO t VALUES ('in the wal')")
        let second = try Database(path: path, rawKey: rawKey())
        #expect(try await second.query("SELECT x FROM t").count == 2)
        let pool = try DatabasePool(path: path, rawKey: rawKey())
        #expect(try await pool.read { try $0.query("SELECT x FROM t") }.count == 2)
        await pool.close()
        await second.close()
        await writer.close()
        let rollback = dir.path("r.db")
        try await Self.makeDatabase(rollback, journalMode: .rollback)
        _ = FileManager.default.createFile(atPath: rollback + "-journal", contents: Data(repeating: 0, count: 512))
        let db = try Database(path: rollback, rawKey: rawKey())
        try await db.execute("INSERT INTO t VALUES (2)")
        await db.close()
    }
}

/// Expects `body` to throw `cannotOpen` naming a file ending in `suffix` (a foreign companion, or
/// a new file named like one).
private func expectRefused(label: String, refusedFor suffix: String, _ body: () throws -> Void,
                           sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        try body()
        Issue.record("\(label): opened", sourceLocation: sourceLocation)
    } catch let SqlCipherError.cannotOpen(_, reason) {
        #expect(reason.contains(suffix), "\(label): \(reason)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(label): \(error)", sourceLocation: sourceLocation)
    }
}

/// ``expectRefused(label:refusedFor:_:sourceLocation:)`` for an async body.
private func expectRefused(label: String, refusedFor suffix: String, _ body: () async throws -> Void,
                           sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        try await body()
        Issue.record("\(label): opened", sourceLocation: sourceLocation)
    } catch let SqlCipherError.cannotOpen(_, reason) {
        #expect(reason.contains(suffix), "\(label): \(reason)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(label): \(error)", sourceLocation: sourceLocation)
    }
}

/// A database file with other names (hard links): SQLite keeps the `-wal` and `-journal` beside
/// the name a connection opened, so two names meant two WALs for one file, each connection blind
/// to the other's commits, and a checkpoint by either writing over the other's pages; SQLite only
/// logs a warning. A symbolic link is resolved, so it is no such case. Every opening that may
/// write refuses such a file, as an in-place conversion does (it would replace one name and leave
/// the plaintext under the other); a read-only opening reads it.
@Suite struct HardLinkedFileTests {
    static func refusesHardLinks(_ error: any Error) -> Bool {
        guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
        return reason.contains("2 names (hard links) (in this folder: ") && reason.contains("readOnly: true")
    }

    @Test func aFileWithTwoNamesIsOpenedForReadingOnlyAndNeverAttached() async throws {
        let dir = TemporaryDirectory()
        let first = dir.path("a.db"), second = dir.path("b.db")
        let key = rawKey(71)
        let db = try Database(path: first, rawKey: key)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES ('kept')")
        await db.close()
        #expect(link(first, second) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: first))
        let inspection = DatabaseFileInspector.inspect(second)
        #expect(inspection.kind == .encrypted && inspection.detail.contains("2 names (hard links)"), "\(inspection.detail)")
        for name in [first, second] {
            #expect(performing: { try Database(path: name, rawKey: key) }, throws: Self.refusesHardLinks)
            #expect(performing: { try DatabasePool(path: name, rawKey: key) }, throws: Self.refusesHardLinks)
            let reader = try Database(path: name, rawKey: key, readOnly: true)
            #expect(try await reader.query("SELECT x FROM t")[0].get(0, as: String.self) == "kept")
            await reader.close()
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == before)
        // Nor is it attached by another database, by either name.
        let other = try Database(path: dir.path("other.db"), rawKey: key)
        for name in [first, second] {
            await #expect(performing: { try await other.execute("ATTACH ? AS linked", name) }, throws: { error in
                guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
                return reason.contains("2 names (hard links)") && reason.contains("attach a copy")
            })
        }
        await other.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == before)
        // One name again: it opens, and its rows are all there.
        #expect(unlink(second) == 0)
        let again = try Database(path: first, rawKey: key)
        try await again.execute("INSERT INTO t VALUES ('after')")
        #expect(try await again.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
        await again.close()
    }

    /// A backup or export whose process died between giving the copy the target's name and
    /// removing its hidden one left the complete copy with two names (found by
    /// `ProcessLifetimeTests.exitInTheMiddleOfWork`, an exit during an export): the hidden name is
    /// the package's own leftover, which the opening removes when its writer is proven dead (no
    /// one holds its `flock`); a live writer's is left, and the opening refused.
    @Test(arguments: ["export", "backup"])
    func aCopysDeadHiddenNameIsRemovedByTheOpening(kind: String) async throws {
        let dir = TemporaryDirectory()
        let target = dir.path("copy.db")
        let key = rawKey(73)
        let db = try Database(path: target, rawKey: key)
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let hidden = dir.path(".copy.db.\(kind)-\(UUID().uuidString)")
        #expect(link(target, hidden) == 0)
        // A live writer: its flock is held.
        let writer = open(hidden, O_RDONLY)
        #expect(writer >= 0 && flock(writer, LOCK_EX | LOCK_NB) == 0)
        #expect(performing: { try Database(path: target, rawKey: key) }, throws: Self.refusesHardLinks)
        #expect(FileManager.default.fileExists(atPath: hidden))
        // Dead: the lock went with its process.
        close(writer)
        let reopened = try Database(path: target, rawKey: key)
        try await reopened.execute("INSERT INTO t VALUES (1)")
        await reopened.close()
        #expect(!FileManager.default.fileExists(atPath: hidden))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["copy.db"])
    }

    /// Another database's `-wal` linked under this one's companion name (found by the review):
    /// the opening went ahead (the other's frames held no page 1, which the opening proves), every
    /// read failed as damage, and the checkpoint at close copied the other database's pages into
    /// this file, which stayed damaged once the link was gone. A `-wal`, `-shm` or `-journal` with
    /// other names is refused by every opening that may write and by `ATTACH`, before SQLite
    /// opens it; both files keep every row.
    @Test func aCompanionWithOtherNamesIsRefused() async throws {
        let dir = TemporaryDirectory()
        let mine = dir.path("a.db"), theirs = dir.path("b.db")
        let db = try Database(path: mine, rawKey: rawKey(73))
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES ('mine')")
        await db.close()
        let other = try Database(path: theirs, rawKey: rawKey(74))
        try await other.execute("CREATE TABLE u(y)")
        _ = try await other.query("PRAGMA wal_checkpoint(TRUNCATE)")
        // Commits that change page 2 only: page 1, which the opening reads first, is not in the -wal.
        for row in 0..<5 { try await other.execute("INSERT INTO u VALUES (?)", "theirs \(row)") }
        let walSize = try FileManager.default.attributesOfItem(atPath: theirs + "-wal")[.size] as? Int ?? 0
        try #require(walSize > 32)
        #expect(link(theirs + "-wal", mine + "-wal") == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: mine))
        let refusesLinkedWAL: @Sendable (any Error) -> Bool = { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains("a.db-wal beside it has 2 names (hard links)")
        }
        #expect(performing: { try Database(path: mine, rawKey: rawKey(73)) }, throws: refusesLinkedWAL)
        #expect(performing: { try DatabasePool(path: mine, rawKey: rawKey(73)) }, throws: refusesLinkedWAL)
        let third = try Database(path: dir.path("c.db"), rawKey: rawKey(75))
        await #expect(performing: { try await third.execute("ATTACH ? AS a", mine) },
                      throws: { error in refusesLinkedWAL(error) && "\(error)".contains("attach a copy") })
        await third.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: mine)) == before)
        // The link gone, this file has its row, and the other database all of its own.
        #expect(unlink(mine + "-wal") == 0)
        let again = try Database(path: mine, rawKey: rawKey(73))
        #expect(try await again.query("SELECT x FROM t").map { $0.get(0, as: String.self) } == ["mine"])
        #expect(try await again.verifyIntegrity().isOK)
        await again.close()
        #expect(try await other.query("SELECT count(*) FROM u")[0].get(0, as: Int.self) == 5)
        await other.close()
    }

    @Test func anInPlaceConversionLeavesNoPlaintextUnderAnotherName() async throws {
        let dir = TemporaryDirectory()
        let first = dir.path("plain.db"), second = dir.path("other-name.db")
        let plain = try Database(unencryptedPath: first)
        try await plain.execute("CREATE TABLE t(x)")
        try await plain.execute("INSERT INTO t VALUES ('secret row')")
        await plain.close()
        #expect(link(first, second) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: first))
        #expect(performing: { _ = try Database.encryptInPlace(path: first, key: .rawKey(rawKey(72))) }, throws: { error in
            guard case SqlCipherError.conversionFailed(_, _, let reason) = error else { return false }
            return reason.contains("2 names (hard links)") && reason.contains("plaintext readable under the others")
        })
        #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: second)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == ["other-name.db", "plain.db"])
    }
}
