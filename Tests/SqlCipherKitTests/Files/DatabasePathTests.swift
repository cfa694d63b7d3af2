import Foundation
import Testing

@testable import SqlCipherKit

/// How a database path becomes a file (SqlCipherKit.docc/Security.md, "Paths and permissions"): symbolic links
/// resolved once, at open, for the file and every companion; new files readable by their owner
/// only; a pool's readers never open a file renamed over the writer's.
@Suite struct DatabasePathTests {
    private func permissions(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int
    }

    /// The creation lock and the checks of a path take its folder from `DatabasePath.folder(of:)`,
    /// which names the same folder as Foundation's `deletingLastPathComponent` (with `.` for an
    /// empty answer) for every shape of path, Unicode names included, and answers where Foundation
    /// does not: its `deletingLastPathComponent` traps (SIGILL) on a path that is one character
    /// once its trailing slashes go (`x`, `.`, `a/`), which the opener's creation lock passed it
    /// for `Database(path: "x")` in the working folder; and it calls `//` a path without folder.
    @Test func theFolderOfAPathIsFoundationsParentFolder() {
        let paths = ["store.db", "./store.db", "../store.db", "/store.db", "/", "", "..", "ab", "/a",
                     "/tmp/a/store.db", "/tmp//a///store.db", "tmp/a/", "tmp/a//", "/tmp/a/", "a/b/../c.db",
                     "//tmp/x.db", "dir/", "/dir/", "naïve/café.db", "/données//ß/𝄞.db", "a b/c d.db",
                     "file:notes.db", "./file:x/y.db", "/a/b/c/d/e/f/g.db", "//x", "///x/"]
        for path in paths {
            let parent = (path as NSString).deletingLastPathComponent
            #expect(DatabasePath.folder(of: path) == (parent.isEmpty ? "." : parent), "\(path)")
        }
        for path in ["x", ".", "a/", "é"] { #expect(DatabasePath.folder(of: path) == ".", "\(path)") }
        for path in ["//", "///"] { #expect(DatabasePath.folder(of: path) == "/", "\(path)") }
    }

    /// Every call that takes a path, given one-character names relative to the working folder
    /// (in a child process started in a folder of its own): each once reached Foundation's
    /// `deletingLastPathComponent`, which traps on such a name, so `Database(path: "x")` and
    /// `export(to: "y")` crashed the process.
    @Test func oneCharacterRelativePathsOpenCopyAndConvert() throws {
        let folder = TemporaryDirectory()
        let result = try runChild("/bin/sh", ["-c", "cd \"$0\" && exec \"$1\" relative-paths",
                                              folder.url.path, productPath("sqlcipherkit-test-helper")])
        #expect(result.status == 0 && !result.signaled, "\(result.stdout) \(result.stderr)")
        // a, its export, its backup, the decrypted export (imported, then encrypted in place), the
        // pool's backup, the encrypted copy; the pool with the imported rows.
        #expect(result.stdout.contains("relative paths ok 3 3 3 3 3 3 6"), "\(result.stdout) \(result.stderr)")
    }

    @Test func aDanglingSymlinkCreatesItsTargetAndTheCompanionsGoBesideTheTarget() async throws {
        let folder = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.path("real"), withIntermediateDirectories: true)
        let link = folder.path("link.db"), target = folder.path("real/store.db")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real/store.db")
        // Before: the ciphertext proof read the -wal beside the link, found nothing, and refused
        // the creation as plaintextDetected.
        for mode in JournalMode.allCases {
            try? FileManager.default.removeItem(atPath: target)
            let db = try Database(path: link, key: "linked", journalMode: mode, cipher: CipherSettings(kdfIterations: 1000))
            try await db.execute("CREATE TABLE t(v)")
            try await db.execute("INSERT INTO t VALUES ('through the link')")
            #expect(FileManager.default.fileExists(atPath: target + (mode == .wal ? "-wal" : "")), "\(mode)")
            #expect(!FileManager.default.fileExists(atPath: link + "-wal"), "\(mode)")
            #expect(!FileManager.default.fileExists(atPath: link + "-journal"), "\(mode)")
            await db.close()
            // Still a link, and the data is in the target.
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real/store.db")
            let again = try Database(path: target, key: "linked", cipher: CipherSettings(kdfIterations: 1000))
            #expect(try await again.query("SELECT v FROM t").first?.get(0, as: String.self) == "through the link")
            await again.close()
        }
        let pool = try DatabasePool(path: folder.path("pool-link.db"), key: "linked",
                                    cipher: CipherSettings(kdfIterations: 1000))
        await pool.close()
        try FileManager.default.createSymbolicLink(atPath: folder.path("pool-link2.db"), withDestinationPath: folder.path("real/pool.db"))
        let linkedPool = try DatabasePool(path: folder.path("pool-link2.db"), key: "linked",
                                          cipher: CipherSettings(kdfIterations: 1000))
        try await linkedPool.execute("CREATE TABLE t(v)")
        #expect(try await linkedPool.query("SELECT count(*) FROM t").first?.get(0, as: Int.self) == 0)
        #expect(FileManager.default.fileExists(atPath: folder.path("real/pool.db-wal")))
        await linkedPool.close()
    }

    /// A relative path that starts with `file:` names a file of that name, never a URI. SQLCipher
    /// 4.6.1 (Debian) reads such names as URIs: `file:rel.db` wrote `rel.db` beside an empty
    /// `file:rel.db` (plaintext), or failed the creation proof and left `rel.db` behind
    /// (encrypted); `?mode=memory` in the name kept nothing. Run in a child whose working folder
    /// is the temporary one (the path must be relative), with both libraries.
    @Test(arguments: ["none", "pass:k", "raw:" + String(repeating: "ab", count: 32)])
    func aRelativePathStartingWithFileIsThatFile(key: String) async throws {
        let dir = TemporaryDirectory()
        for name in ["file:rel.db", "file:mem.db?mode=memory"] {
            func helper(_ arguments: [String]) throws -> ChildResult {
                try runChild("/usr/bin/env", ["-C", dir.url.path, productPath("sqlcipherkit-test-helper"), "open-database"]
                    + arguments)
            }
            let created = try helper([name, key, "CREATE TABLE t(x); INSERT INTO t VALUES ('REL-MARKER')"])
            #expect(created.stdout.contains("executed"), "\(name) \(key): \(created.stdout) \(created.stderr)")
            let read = try helper(["--read-only", name, key, "SELECT x FROM t"])
            #expect(read.stdout.contains("executed"), "\(name) \(key): \(read.stdout) \(read.stderr)")
            // The rows are in the file of that name (an absolute path is never a URI).
            let db: Database
            switch key {
            case "none": db = try Database(unencryptedPath: dir.path(name), readOnly: true)
            case "pass:k": db = try Database(path: dir.path(name), key: "k", readOnly: true)
            default: db = try Database(path: dir.path(name), rawKey: Data(repeating: 0xAB, count: 32), readOnly: true)
            }
            #expect(try await db.query("SELECT x FROM t").map { $0.get(0, as: String.self) } == ["REL-MARKER"])
            await db.close()
        }
        // (A child ends without closing: a WAL file's -wal and -shm may stay beside it.)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(files.filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.sorted()
                == ["file:mem.db?mode=memory", "file:rel.db"], "\(files)")
    }

    /// SQLite opens full paths of at most 512 bytes; a longer one was a bare "unable to open
    /// database file", and a conversion found out only when it attached its work file. Now the
    /// error says why and what to do, and the copies say it before writing anything.
    @Test func aPathLongerThanSQLiteTakesIsNamedAsSuch() async throws {
        let dir = TemporaryDirectory()
        // A folder whose full path leaves room for "notes.db" (under 512 bytes) but not for the
        // work file of encryptInPlace beside it.
        var folder = dir.url.path
        while folder.utf8.count < 480 { folder += "/" + String(repeating: "d", count: min(100, 480 - folder.utf8.count)) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let fits = folder + "/notes.db"
        #expect(fits.utf8.count <= 512)
        let tooLong = folder + "/" + String(repeating: "n", count: 60) + ".db"
        #expect(tooLong.utf8.count > 512)

        for open in [{ _ = try Database(path: tooLong, rawKey: rawKey()) }, { _ = try Database(unencryptedPath: tooLong) },
                     { _ = try DatabasePool(path: tooLong, rawKey: rawKey()) }] as [() throws -> Void] {
            #expect {
                try open()
            } throws: { error in
                guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
                return reason.contains("at most 512 bytes")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: tooLong))

        let plain = try Database(unencryptedPath: fits)
        try await plain.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        await #expect(performing: { try await plain.export(to: tooLong, key: "k") }, throws: { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains("at most 512 bytes")
        })
        await plain.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: fits))
        #expect {
            try Database.encryptInPlace(path: fits, key: "k")
        } throws: { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains("at most 512 bytes")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fits)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["notes.db"])
    }

    /// A file name the file system takes (at most 255 bytes) can leave no room for the names kept
    /// beside it: SQLite's `-journal` (8 bytes more), `-wal` and `-shm` (4 more), a copy's hidden
    /// work file (45 more), encryptInPlace's work file and its journal (32 more). A new database
    /// named so failed at its first write with SQLite's bare "unable to open database file", an
    /// existing one in rollback mode at every write, and an export or backup to a legal 230-byte
    /// name could not be made at all ("File name too long", naming a hidden file the caller never
    /// gave). Now each is refused before anything is written, saying how long a name may be, and
    /// what fits works: an existing WAL database whose `-wal` fits opens and writes, and the
    /// copies to a long name are made under a shortened hidden name.
    @Test func aNameWithNoRoomForTheFilesBesideItIsRefusedBeforeAnythingIsWritten() async throws {
        let dir = TemporaryDirectory()
        func name(_ length: Int) -> String { dir.path(String(repeating: "n", count: length)) }
        func refused(_ limit: Int) -> (any Error) -> Bool {
            { error in
                guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
                return reason.contains("give it a name of at most \(limit) bytes")
            }
        }
        // New files: nothing is created.
        for open in [{ _ = try Database(path: name(248), rawKey: rawKey()) }, { _ = try Database(unencryptedPath: name(250)) },
                     { _ = try DatabasePool(path: name(251), rawKey: rawKey()) }] as [() throws -> Void] {
            #expect(performing: open, throws: refused(247))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)

        // Existing files, made under a short name and renamed: a WAL database whose -wal fits opens
        // and writes; one in rollback mode is refused for writing and reads read-only; nothing
        // changes in either.
        for (mode, length) in [(JournalMode.wal, 251), (.rollback, 250), (.wal, 252)] {
            let short = dir.path("short.db"), long = name(length)
            let made = try Database(path: short, rawKey: rawKey(), journalMode: mode)
            try await made.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            await made.close()
            #expect(rename(short, long) == 0)
            let before = try Data(contentsOf: URL(fileURLWithPath: long))
            if mode == .wal && length <= 251 {
                let db = try Database(path: long, rawKey: rawKey())
                try await db.execute("INSERT INTO t VALUES (2)")
                #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 2)
                await db.close()
            } else {
                #expect(performing: { _ = try Database(path: long, rawKey: rawKey()) }, throws: { error in
                    guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
                    return reason.contains("at most \(mode == .wal ? 251 : 247) bytes") && reason.contains("readOnly: true")
                })
                #expect(try Data(contentsOf: URL(fileURLWithPath: long)) == before, "\(mode) \(length)")
                if mode == .rollback {
                    let reader = try Database(path: long, rawKey: rawKey(), readOnly: true)
                    #expect(try await reader.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
                    await reader.close()
                }
            }
            try FileManager.default.removeItem(atPath: long)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)

        // Copies: a 230-byte target is made (through a shortened hidden name) and opens; a target
        // with no room for its -journal is refused before anything is written.
        let source = try Database(path: dir.path("source.db"), rawKey: rawKey())
        try await source.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let copies: [(length: Int, copy: (String) async throws -> Void)] = [
            (229, { try await source.export(to: $0, key: .rawKey(rawKey(2))) }),
            (230, { try await source.backup(to: $0, key: .rawKey(rawKey(2))) }),
        ]
        for (length, copy) in copies {
            let target = name(length)
            try await copy(target)
            let copied = try Database(path: target, rawKey: rawKey(2))
            #expect(try await copied.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
            await copied.close()
            try FileManager.default.removeItem(atPath: target)
            await #expect(performing: { try await copy(name(248)) }, throws: refused(247))
        }
        let plainPath = dir.path("plain.db")
        let plain = try Database(unencryptedPath: plainPath)
        try await plain.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        await plain.close()
        try Database.encrypt(plaintextAt: plainPath, to: name(231), key: .rawKey(rawKey(2)))
        #expect(FileManager.default.fileExists(atPath: name(231)))
        try FileManager.default.removeItem(atPath: name(231))
        await source.close()

        // encryptInPlace writes <name>.sqlcipherkit-encrypting and its -journal: refused, unchanged.
        let long = name(230)
        #expect(rename(plainPath, long) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: long))
        #expect(performing: { try Database.encryptInPlace(path: long, key: .rawKey(rawKey(2))) }, throws: { error in
            guard case SqlCipherError.conversionFailed(_, _, let reason) = error else { return false }
            return reason.contains("give it a name of at most 223 bytes") && reason.contains("not changed")
        })
        // The SQLCipher 3 upgrade writes <name>.sqlcipherkit-upgrading, its -migrated file and a
        // -journal: refused before the file is even opened (SQLCipher 4 only).
        if isSQLCipher4() {
            #expect(performing: { try Database.upgradeFromSqlCipher3(path: long, key: .rawKey(rawKey(2))) }, throws: { error in
                guard case SqlCipherError.conversionFailed(_, _, let reason) = error else { return false }
                return reason.contains("give it a name of at most 215 bytes") && reason.contains("not changed")
            })
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: long)) == before)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.url.path))
                == ["source.db", String(repeating: "n", count: 230)])
    }

    /// A database opened by a relative path kept it relative, and every later use of the path
    /// followed the process's working folder. After a `chdir`, a pool's reads failed as if the
    /// file had been replaced, and a rekey committed the new key to the file, then proved it on a
    /// new, empty file it created in the new folder, reported the rekey failed, closed the
    /// database and told the caller the file still opened with the old key, which no longer
    /// opened it. The path is now made absolute at open. In a child process: the working folder
    /// is the whole process's.
    @Test func aChangeOfWorkingFolderAfterOpeningMovesNothing() async throws {
        let folder = TemporaryDirectory(), other = TemporaryDirectory()
        let result = try runHelper(["change-directory", folder.url.path, other.url.path])
        #expect(result.status == 0 && !result.signaled, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("pool-read 1"), "\(result.stdout)")
        #expect(result.stdout.contains("rekey ok"), "\(result.stdout)")
        #expect(result.stdout.contains("backup ok"), "\(result.stdout)")
        // The backup went where the caller asked, from where it was then; nothing else did.
        #expect(try FileManager.default.contentsOfDirectory(atPath: other.url.path) == ["copy.db"])
        let cipher = CipherSettings(kdfIterations: 1000)
        let rekeyed = try Database(path: folder.path("db.db"), key: "new", cipher: cipher)
        #expect(try await rekeyed.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await rekeyed.close()
    }

    /// A relative path of one character ("x/", ".", "é/") ended the process: Foundation's
    /// `deletingLastPathComponent` traps on Linux for such a path, and every opening, backup,
    /// export and conversion took its path apart with it. Each is now a typed refusal (these
    /// paths name folders), and nothing is created in the working directory.
    @Test func aOneCharacterRelativePathIsATypedErrorNotACrash() async throws {
        let folder = TemporaryDirectory()
        let db = try Database(path: folder.path("live.db"), key: "live", cipher: CipherSettings(kdfIterations: 1000))
        try await db.execute("CREATE TABLE t(v)")
        let plain = try Database(unencryptedPath: folder.path("plain.db"))
        try await plain.execute("CREATE TABLE t(v)")
        await plain.close()
        let before = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath)
        for path in ["x/", ".", "é/", "x//"] {
            #expect(throws: SqlCipherError.self, "\(path)") { _ = try Database(path: path, key: "k") }
            #expect(throws: SqlCipherError.self, "\(path)") { _ = try Database(unencryptedPath: path) }
            #expect(throws: SqlCipherError.self, "\(path)") { _ = try DatabasePool(path: path, key: "k") }
            await #expect(throws: SqlCipherError.self, "\(path)") { try await db.backup(to: path, key: "k") }
            await #expect(throws: SqlCipherError.self, "\(path)") { try await db.export(to: path, key: "k") }
            await #expect(throws: SqlCipherError.self, "\(path)") { try await db.exportDecrypted(to: path) }
            #expect(throws: SqlCipherError.self, "\(path)") {
                try Database.encrypt(plaintextAt: folder.path("plain.db"), to: path, key: "k")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath) == before)
        await db.close()
    }

    @Test func aLoopOfSymlinksIsATypedError() throws {
        let folder = TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: folder.path("a.db"), withDestinationPath: "b.db")
        try FileManager.default.createSymbolicLink(atPath: folder.path("b.db"), withDestinationPath: "a.db")
        #expect {
            _ = try Database(path: folder.path("a.db"), rawKey: rawKey())
        } throws: { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains("symbolic link")
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder.path("a.db")) == "b.db")
    }

    /// A path holding a NUL names, to C, the file of its first part: `encryptInPlace` encrypted
    /// `plain.db` when given `"plain.db\0x"`, `upgradeFromSqlCipher3` upgraded the file before the
    /// NUL, `importPlaintext` read it and the inspector described it (found by the attack
    /// review). Every entry that takes a path refuses it, and that file is left as it was.
    @Test func aPathWithANulIsRefusedByEveryEntryAndNamesNoOtherFile() async throws {
        let folder = TemporaryDirectory()
        let plain = folder.path("plain.db"), encrypted = folder.path("enc.db")
        let plaintext = try Database(unencryptedPath: plain)
        try await plaintext.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        await plaintext.close()
        let db = try Database(path: encrypted, key: "k", cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        let before = try folder.snapshot()
        func refused(_ label: String, _ error: (any Error)?) {
            guard case SqlCipherError.cannotOpen(_, let reason)? = error else {
                Issue.record("\(label): expected cannotOpen, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("NUL"), "\(label): \(reason)")
        }
        refused("encryptInPlace", #expect(throws: SqlCipherError.self) {
            try Database.encryptInPlace(path: plain + "\0x", key: "k", cipher: fastCipher)
        })
        refused("encrypt", #expect(throws: SqlCipherError.self) {
            try Database.encrypt(plaintextAt: plain + "\0x", to: folder.path("e2.db"), key: "k", cipher: fastCipher)
        })
        refused("upgradeFromSqlCipher3", #expect(throws: SqlCipherError.self) {
            try Database.upgradeFromSqlCipher3(path: encrypted + "\0x", key: "k")
        })
        refused("importPlaintext", await #expect(throws: SqlCipherError.self) {
            try await db.importPlaintext(from: plain + "\0x") { conn in try conn.query("SELECT x FROM plain.t").count }
        })
        refused("Database", #expect(throws: SqlCipherError.self) { try Database(path: encrypted + "\0x", key: "k") })
        refused("DatabasePool", #expect(throws: SqlCipherError.self) { try DatabasePool(path: encrypted + "\0x", key: "k") })
        refused("export", await #expect(throws: SqlCipherError.self) { try await db.export(to: plain + "\0x", key: "k") })
        refused("backup", await #expect(throws: SqlCipherError.self) { try await db.backup(to: plain + "\0x", key: "k") })
        let inspection = DatabaseFileInspector.inspect(plain + "\0x")
        #expect(inspection.kind == .notADatabase && inspection.detail.contains("NUL"), "\(inspection)")
        await db.close()
        let after = try folder.snapshot()
        // Nothing was made (closing the database removes its -wal and -shm), and plain.db is as it was.
        #expect(Set(after.keys).isSubset(of: before.keys), "\(after.keys.sorted())")
        #expect(after["plain.db"]?.0 == before["plain.db"]?.0)
        #expect(FileHeader(path: plain)?.looksPlaintextSQLite == true)
    }

    /// A SQLite `file:` URI with a key parameter, as SQLCipher's documentation writes them: a path
    /// is a file name here, so `file:app.db?key=secret` named (and created) a file with the key in
    /// its name, and every error repeated the key (found by the attack review). Every entry
    /// refuses it, shows it with the key masked, and creates nothing.
    @Test func aFileURIWithAKeyIsRefusedByEveryEntryWithTheKeyMasked() async throws {
        let folder = TemporaryDirectory()
        let secret = "uri-secret-H8"
        let plain = folder.path("plain.db")
        let plaintext = try Database(unencryptedPath: plain)
        try await plaintext.execute("CREATE TABLE t(x)")
        await plaintext.close()
        let db = try Database(path: folder.path("enc.db"), key: "k", cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        let workingFolder = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath)
        func uri(_ name: String, _ parameter: String = "key") -> String { "file:\(folder.path(name))?mode=rwc&\(parameter)=\(secret)" }
        func refused(_ label: String, _ error: (any Error)?) {
            guard case SqlCipherError.cannotOpen(let path, let reason)? = error else {
                Issue.record("\(label): expected cannotOpen, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("URI") && path.contains("=***"), "\(label): \(path): \(reason)")
            #expect(!"\(error!)".contains(secret) && !String(reflecting: error!).contains(secret), "\(label)")
        }
        refused("Database", #expect(throws: SqlCipherError.self) { try Database(path: uri("a.db"), key: "k") })
        refused("unencrypted", #expect(throws: SqlCipherError.self) { try Database(unencryptedPath: uri("b.db", "hexkey")) })
        refused("DatabasePool", #expect(throws: SqlCipherError.self) { try DatabasePool(path: uri("c.db"), key: "k") })
        refused("DatabasePool raw", #expect(throws: SqlCipherError.self) { try DatabasePool(path: uri("d.db", "textkey"), rawKey: rawKey()) })
        refused("export", await #expect(throws: SqlCipherError.self) { try await db.export(to: uri("e.db"), key: "k") })
        refused("backup", await #expect(throws: SqlCipherError.self) { try await db.backup(to: uri("f.db"), key: "k") })
        refused("exportDecrypted", await #expect(throws: SqlCipherError.self) { try await db.exportDecrypted(to: uri("g.db")) })
        refused("importPlaintext", await #expect(throws: SqlCipherError.self) {
            try await db.importPlaintext(from: "file:\(plain)?key=\(secret)") { conn in try conn.query("SELECT 1").count }
        })
        refused("encrypt", #expect(throws: SqlCipherError.self) {
            try Database.encrypt(plaintextAt: plain, to: uri("h.db"), key: "k", cipher: fastCipher)
        })
        refused("encryptInPlace", #expect(throws: SqlCipherError.self) {
            try Database.encryptInPlace(path: "file:\(plain)?key=\(secret)", key: "k", cipher: fastCipher)
        })
        refused("upgradeFromSqlCipher3", #expect(throws: SqlCipherError.self) {
            try Database.upgradeFromSqlCipher3(path: uri("i.db"), key: "k")
        })
        let inspection = DatabaseFileInspector.inspect(uri("j.db"))
        #expect(inspection.kind == .notADatabase && !"\(inspection)".contains(secret), "\(inspection)")
        await db.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["enc.db", "plain.db"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath) == workingFolder)
        #expect(FileHeader(path: plain)?.looksPlaintextSQLite == true)
    }

    /// A path whose folder, or a folder above it, is a file: every opening and copy said "the
    /// folder does not exist; create it first", which cannot be done while the file is there.
    @Test func aFolderThatIsAFileIsNamedAsSuch() async throws {
        let folder = TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: folder.path("notes.txt"), contents: Data("text".utf8))
        let source = try Database(path: folder.path("source.db"), rawKey: rawKey())
        try await source.execute("CREATE TABLE t(x)")
        for (path, said) in [(folder.path("notes.txt/x.db"), "notes.txt is a file, not a folder"),
                             (folder.path("notes.txt/sub/x.db"), "a part of the folder")] {
            func check(_ label: String, _ error: (any Error)?) {
                guard case SqlCipherError.cannotOpen(_, let reason)? = error else {
                    Issue.record("\(label): expected cannotOpen, got \(String(describing: error))")
                    return
                }
                #expect(reason.contains(said) && !reason.contains("create it first"), "\(label): \(reason)")
            }
            check("Database", #expect(throws: SqlCipherError.self) { try Database(path: path, rawKey: rawKey()) })
            check("DatabasePool", #expect(throws: SqlCipherError.self) { try DatabasePool(path: path, rawKey: rawKey()) })
            check("export", await #expect(throws: SqlCipherError.self) { try await source.export(to: path, key: .rawKey(rawKey())) })
        }
        await source.close()
        #expect(FileManager.default.contents(atPath: folder.path("notes.txt")) == Data("text".utf8))
    }

    @Test func newFilesAndTheirCompanionsAreOwnerOnlyUnlessAskedOtherwise() async throws {
        let folder = TemporaryDirectory()
        let previous = umask(0o022)
        defer { umask(previous) }
        // Before: 0644 (SQLite's default, 0644 under umask 022), readable by every user.
        let db = try Database(path: folder.path("a.db"), rawKey: rawKey())
        try await db.execute("CREATE TABLE t(v)")
        for file in ["a.db", "a.db-wal", "a.db-shm"] {
            #expect(permissions(folder.path(file)) == 0o600, "\(file)")
        }
        await db.close()
        let rollback = try Database(path: folder.path("r.db"), key: "k", journalMode: .rollback,
                                    cipher: CipherSettings(kdfIterations: 1000))
        try await rollback.transaction { conn in
            try conn.execute("CREATE TABLE t(v)")
            #expect(self.permissions(folder.path("r.db-journal")) == 0o600)
        }
        await rollback.close()
        let pool = try DatabasePool(path: folder.path("p.db"), key: "k", cipher: CipherSettings(kdfIterations: 1000))
        try await pool.execute("CREATE TABLE t(v)")
        for file in ["p.db", "p.db-wal", "p.db-shm"] { #expect(permissions(folder.path(file)) == 0o600, "\(file)") }
        await pool.close()
        let plain = try Database(unencryptedPath: folder.path("plain.db"))
        #expect(permissions(folder.path("plain.db")) == 0o600)
        await plain.close()

        let shared = try Database(path: folder.path("g.db"), rawKey: rawKey(), configuration: newFiles(0o640))
        try await shared.execute("CREATE TABLE t(v)")
        for file in ["g.db", "g.db-wal", "g.db-shm"] { #expect(permissions(folder.path(file)) == 0o640, "\(file)") }
        await shared.close()
        // An existing file keeps its own permissions.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.path("a.db"))
        let reopened = try Database(path: folder.path("a.db"), rawKey: rawKey())
        await reopened.close()
        #expect(permissions(folder.path("a.db")) == 0o644)

        #expect {
            _ = try Database(path: folder.path("s.db"), rawKey: rawKey(), configuration: newFiles(0o4600))
        } throws: { error in
            guard case SqlCipherError.cannotOpen = error else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("s.db")))
    }

    @Test func anEncryptedCopyIsOwnerOnly() async throws {
        let folder = TemporaryDirectory()
        let previous = umask(0o022)
        defer { umask(previous) }
        let plain = try Database(unencryptedPath: folder.path("plain.db"), configuration: newFiles(0o644))
        try await plain.execute("CREATE TABLE t(v)")
        await plain.close()
        // Before: the copy was made by ATTACH with SQLite's default 0644.
        try Database.encrypt(plaintextAt: folder.path("plain.db"), to: folder.path("enc.db"), key: "k")
        #expect(permissions(folder.path("enc.db")) == 0o600)
    }

    @Test func poolReadersRefuseAFileRenamedOverTheWritersFile() async throws {
        let folder = TemporaryDirectory()
        let path = folder.path("store.db")
        let pool = try DatabasePool(path: path, rawKey: rawKey(), maximumReaderCount: 2)
        try await pool.execute("CREATE TABLE t(v)")
        try await pool.execute("INSERT INTO t VALUES ('original')")
        // Another file of the same key, renamed over the path while the pool is open.
        let other = try Database(path: folder.path("other.db"), rawKey: rawKey(), journalMode: .rollback)
        try await other.execute("CREATE TABLE t(v)")
        try await other.execute("INSERT INTO t VALUES ('replacement')")
        await other.close()
        try #require(rename(folder.path("other.db"), path) == 0)
        let replacementBytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // Before: the reader opened the new file with the old file's -wal and -shm (3.4.1 then
        // destroyed rows); now its open fails with a typed error that says what happened.
        await #expect {
            _ = try await pool.query("SELECT v FROM t")
        } throws: { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains("replaced")
        }
        #expect(pool.openReaderCount == 0)
        // The writer still has the original file: its commit is refused (it would have gone to a
        // file no longer at the path, and been lost), and nothing was written into the replacement.
        await #expect {
            try await pool.execute("INSERT INTO t VALUES ('after')")
        } throws: { error in
            guard case SqlCipherError.sqlite(_, let extended, let message, _) = error else { return false }
            return extended == 1032 && message.contains("replaced or moved")
        }
        await pool.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == replacementBytes)
        // (SQLite leaves the old -wal beside the path when its database was moved: a file must
        // not be renamed over an open database without its -wal, sqlite.org/howtocorrupt.html.)
    }

    /// A connection whose file another process removed and created anew (a reset), or renamed
    /// another file over (a restore from a backup): in WAL mode (the default), with
    /// `journal_mode = MEMORY`, and on a pool's writer, its commits succeeded, into the old file,
    /// which no name leads to any more, and were lost at close without a word (only a rollback
    /// journal made SQLite refuse them). Every commit is now refused, the transaction rolled
    /// back, with the typed error a rollback-mode write gets (`SQLITE_READONLY_DBMOVED`, "replaced
    /// or moved"), and the file now at the path is left as the other process made it.
    @Test(arguments: ["wal", "memory-journal", "rollback", "pool"], ["recreated", "restored"])
    func commitsToAFileNoLongerAtItsPathAreRefused(kind: String, how: String) async throws {
        let folder = TemporaryDirectory()
        let path = folder.path("app.db"), backup = folder.path("backup.db")
        let key = rawKey(93)
        let access: any DatabaseAccess = kind == "pool"
            ? try DatabasePool(path: path, rawKey: key)
            : try Database(path: path, rawKey: key, journalMode: kind == "wal" ? .wal : .rollback)
        if kind == "memory-journal" { _ = try await access.query("PRAGMA journal_mode = MEMORY") }
        try await access.execute("CREATE TABLE t(v TEXT)")
        try await access.execute("INSERT INTO t VALUES ('before')")
        if how == "restored" {
            try await access.backup(to: backup, key: .rawKey(key), pagesPerStep: 256, progress: nil)
            // A careful restore: the backup replaces the file, and the old file's -wal and -shm go.
            try runChild("/bin/mv", [backup, path])
            try runChild("/bin/rm", ["-f", path + "-wal", path + "-shm"])
        } else {
            try runChild("/bin/rm", ["-f", path, path + "-wal", path + "-shm", path + "-journal"])
            // The new file in rollback mode, closed: no -wal of it lies at the path (a rollback-mode
            // connection looks for one there at each read, and would meet the new file's).
            let created = try runHelper(["create-database", path, "rollback", "0", hex(key), hex(Data(repeating: 7, count: 16)), "new"])
            try #require(created.stdout.contains("created"), "\(created.stdout) \(created.stderr)")
        }
        let replacement = try Data(contentsOf: URL(fileURLWithPath: path))
        let isMovedError: @Sendable (any Error) -> Bool = { error in
            guard case SqlCipherError.sqlite(let code, let extended, let message, _) = error else { return false }
            return code == 8 && extended == 1032 && message.contains("replaced or moved")
        }
        await #expect(performing: { try await access.execute("INSERT INTO t VALUES ('lost')") }, throws: isMovedError)
        await #expect(performing: {
            try await access.transaction { conn in try conn.execute("INSERT INTO t VALUES ('lost too')") }
        }, throws: isMovedError)
        if let db = access as? Database { await db.close() }
        if let pool = access as? DatabasePool { await pool.close() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == replacement)
        let reopened = try Database(path: path, rawKey: key)
        let values = try await reopened.query("SELECT v FROM t").compactMap { $0.get("v", as: String.self) }
        #expect(values == (how == "restored" ? ["before"] : ["new"]))
        await reopened.close()
    }

    /// A connection in rollback mode whose file another process removed and created anew in WAL
    /// mode, and whose writer was killed with its commits still in the new file's -wal. SQLite's
    /// rollback-mode pager looks for a -wal by the path's name at each read and opened the new
    /// file's: the old connection's read failed with "the key changed" advice (the -wal's pages
    /// are another file's), and on SQLCipher 3.4.1 its close then checkpointed that -wal into the
    /// old file and deleted it, so the new file lost the other process's commits. A rollback-mode
    /// connection now asks whether its file is still at its path before each statement that
    /// begins a transaction, and refuses with the "replaced or moved" error; the new file keeps
    /// every commit. So does a connection opened in WAL mode and switched to a rollback journal by
    /// its own `PRAGMA journal_mode` (it was not asked: the question was decided at open).
    @Test(arguments: ["opened in rollback mode", "switched by SQL", "switched to MEMORY by SQL"])
    func aConnectionLeftOnARemovedFileLeavesTheNewFilesWALAlone(mode: String) async throws {
        let folder = TemporaryDirectory()
        let path = folder.path("app.db")
        let key = rawKey(94)
        let stale = try Database(path: path, rawKey: key, journalMode: mode == "opened in rollback mode" ? .rollback : .wal)
        if mode != "opened in rollback mode" {
            let target = mode.contains("MEMORY") ? "memory" : "delete"
            let switched = try await stale.query("PRAGMA journal_mode = \(target.uppercased())")
            try #require(switched.first?.get(0, as: String.self) == target)
        }
        try await stale.execute("CREATE TABLE t(v TEXT)")
        try await stale.execute("INSERT INTO t VALUES ('old')")
        try runChild("/bin/rm", ["-f", path, path + "-journal"])
        let writer = try KillableChild(helperArguments: ["crash-writer", path, "wal", hex(key)])
        try #require(writer.waitForLine(startingWith: "committed 5") != nil, "\(writer.lines) \(writer.standardError)")
        writer.killAndCollect()
        let acknowledged = writer.lines.compactMap { $0.hasPrefix("committed ") ? Int($0.dropFirst(10)) : nil }.max() ?? 0
        try #require((SnapshotFiles.regularFileSize(path + "-wal") ?? 0) > 32, "the writer's commits are not in the -wal")
        await #expect {
            _ = try await stale.query("SELECT count(*) FROM t")
        } throws: { error in
            guard case SqlCipherError.sqlite(_, let extended, let message, _) = error else { return false }
            return extended == 1032 && message.contains("replaced or moved")
        }
        await stale.close()
        let reopened = try Database(path: path, rawKey: key)
        let last = try await reopened.query("SELECT last FROM meta")[0].get(0, as: Int.self) ?? 0
        #expect(last >= acknowledged, "the new file lost commits: last \(last), acknowledged \(acknowledged)")
        #expect(try await reopened.verifyIntegrity().isOK)
        await reopened.close()
    }
}

/// A configuration that sets only the permissions of new files.
private func newFiles(_ bits: FilePermissions) -> DatabaseConfiguration {
    var configuration = DatabaseConfiguration()
    configuration.filePermissions = bits
    return configuration
}
