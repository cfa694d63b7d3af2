import Foundation
import Synchronization
import Testing
@testable import SqlCipherKit

/// Which files a conversion touches and what it carries over: through a symbolic link the target
/// is converted and the link kept, no plaintext is left under either name, and a SQLCipher 3 file
/// keeps its `application_id` through the upgrade.
@Suite struct ConversionFilesTests {
    /// Every file in the folders whose bytes hold `marker`, by path.
    private func plaintextLeft(in folders: [TemporaryDirectory], _ marker: String) throws -> [String] {
        try folders.flatMap { folder in
            try FileManager.default.contentsOfDirectory(atPath: folder.url.path).map { folder.path($0) }
        }.filter { path in
            var info = stat()
            return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && !filesContain([path], marker).isEmpty
        }
    }

    @Test(arguments: [JournalMode.rollback, .wal])
    func encryptInPlaceThroughASymbolicLinkEncryptsTheTarget(mode: JournalMode) async throws {
        let targets = TemporaryDirectory(), links = TemporaryDirectory()
        let target = targets.path("notes.db"), link = links.path("notes-link.db")
        try await ConversionTests().makePlaintext(target, mode: mode)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let inode = try FileManager.default.attributesOfItem(atPath: target)[.systemFileNumber] as? Int

        try Database.encryptInPlace(path: link, key: "secret", cipher: fastCipher)

        // The link is still a link to the same path, and the target now holds the ciphertext.
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try FileManager.default.attributesOfItem(atPath: target)[.systemFileNumber] as? Int != inode,
                "the target was replaced by the encrypted file")
        #expect(try plaintextLeft(in: [targets, links], "PLAIN-MARKER").isEmpty)
        #expect(FileHeader(path: target)?.hasPlaintextMagic == false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: targets.url.path) == ["notes.db"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: links.url.path) == ["notes-link.db"])
        let db = try Database(path: link, key: "secret", cipher: fastCipher)
        try await ConversionTests().checkContents(db)
        await db.close()
    }

    @Test func encryptInPlaceThroughALinkKeepsTheBackupBesideTheTarget() async throws {
        let targets = TemporaryDirectory(), links = TemporaryDirectory()
        let target = targets.path("notes.db"), link = links.path("notes-link.db")
        try await ConversionTests().makePlaintext(target)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let backup = try Database.encryptInPlace(path: link, key: "secret", cipher: fastCipher, keepBackup: true)
        #expect(backup == target + ".plaintext-backup")
        #expect(try plaintextLeft(in: [targets, links], "PLAIN-MARKER") == [target + ".plaintext-backup"])
    }

    /// A SQLCipher 3 file with an `application_id`, made by the real SQLCipher 3.4.1 CLI:
    /// `cipher_migrate` does not carry the id, the upgrade does.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func upgradeFromSqlCipher3KeepsTheApplicationID() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("old.db")
        _ = try SqlcipherCLI.run(SqlcipherCLI.version3, path, [
            SqlcipherCLI.keyPragma(passphrase: "legacy"),
            "CREATE TABLE t(v)", "INSERT INTO t VALUES (1), (2), (3)",
            "PRAGMA user_version = 9", "PRAGMA application_id = 305419896",
        ])
        try Database.upgradeFromSqlCipher3(path: path, key: "legacy")
        let db = try Database(path: path, key: "legacy")
        #expect(try await db.query("PRAGMA application_id")[0].get(0, as: Int.self) == 305_419_896)
        #expect(try await db.query("PRAGMA user_version")[0].get(0, as: Int.self) == 9)
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 3)
        await db.close()
    }

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func upgradeThroughASymbolicLinkUpgradesTheTarget() async throws {
        let targets = TemporaryDirectory(), links = TemporaryDirectory()
        let target = targets.path("old.db"), link = links.path("old-link.db")
        let old = try Database(path: target, key: "legacy", cipher: .sqlcipher3)
        try await old.execute("CREATE TABLE t(v); INSERT INTO t VALUES (1); PRAGMA application_id = 77")
        await old.close()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try Database.upgradeFromSqlCipher3(path: link, key: "legacy")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try FileManager.default.contentsOfDirectory(atPath: links.url.path) == ["old-link.db"])
        let db = try Database(path: link, key: "legacy")
        #expect(try await db.query("PRAGMA application_id")[0].get(0, as: Int.self) == 77)
        await db.close()
    }

    /// A directory where a conversion keeps its work file (or one of the work file's companions)
    /// is someone else's: it used to be removed recursively, with everything in it, as the
    /// "leftover of a killed conversion". Now it stays, the conversion stops with a typed error
    /// naming it, and the original is untouched.
    @Test(arguments: ["", "-wal", "-shm", "-journal"])
    func aDirectoryAtTheWorkFilesNameIsNeverRemoved(companion: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("notes.db")
        try await ConversionTests().makePlaintext(path)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let work = path + ".sqlcipherkit-encrypting" + companion
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: work + "/precious.txt", contents: Data("keep".utf8)))

        #expect {
            try Database.encryptInPlace(path: path, key: "secret", cipher: fastCipher)
        } throws: { error in
            guard case SqlCipherError.cannotOpen(let named, let reason) = error else { return false }
            return named == work && reason.contains("directory") && reason.contains("Move it away")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: work + "/precious.txt")) == Data("keep".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original)
    }

    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only")) func upgradeLeavesADirectoryAtItsWorkFilesName() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("old.db")
        let old = try Database(path: path, key: "legacy", cipher: .sqlcipher3)
        try await old.execute("CREATE TABLE t(v); INSERT INTO t VALUES (1)")
        await old.close()
        let work = path + ".sqlcipherkit-upgrading"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: work + "/precious.txt", contents: Data("keep".utf8)))
        #expect(throws: SqlCipherError.self) { try Database.upgradeFromSqlCipher3(path: path, key: "legacy") }
        #expect(FileManager.default.fileExists(atPath: work + "/precious.txt"))
        let db = try Database(path: path, key: "legacy", cipher: .sqlcipher3)
        #expect(try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 1)
        await db.close()
    }

    /// A plaintext file with a second name (a hard link) used to be encrypted under the name given
    /// only: the other name kept every row in the clear. Now it is refused before anything
    /// changes, as a symbolic link's target is converted rather than left behind.
    @Test(arguments: [false, true]) func encryptInPlaceRefusesAFileWithAnotherName(keepBackup: Bool) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("notes.db"), other = dir.path("copy-by-link.db")
        try await ConversionTests().makePlaintext(path)
        #expect(link(path, other) == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()

        #expect {
            try Database.encryptInPlace(path: path, key: "secret", cipher: fastCipher, keepBackup: keepBackup)
        } throws: { error in
            guard case SqlCipherError.conversionFailed(_, _, let reason) = error else { return false }
            return reason.contains("2 names (hard links)") && reason.contains("Remove the other links")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == before)
        #expect(FileHeader(path: path)?.looksPlaintextSQLite == true)
        // Once the other name is gone, the same call encrypts the file, and no name holds plaintext.
        #expect(unlink(other) == 0)
        try Database.encryptInPlace(path: path, key: "secret", cipher: fastCipher)
        #expect(try plaintextLeft(in: [dir], "PLAIN-MARKER").isEmpty)
    }

    /// `upgradeFromSqlCipher3` of a file with a second name (a hard link) went ahead (found by the
    /// review): the upgraded file replaced the name given only, and the other kept the SQLCipher 3
    /// file, so a program using it wrote where this name no longer looked. It is refused before
    /// anything changes, as `encryptInPlace` and every opening that may write refuse it.
    @Test(.enabled(if: isSQLCipher4(), "SQLCipher 4 only: 3.4.1 has no cipher_migrate"))
    func upgradeFromSqlCipher3RefusesAFileWithAnotherName() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("old.db"), other = dir.path("copy-by-link.db")
        let old = try Database(path: path, key: "legacy", journalMode: .rollback, cipher: .sqlcipher3)
        try await old.execute("CREATE TABLE t(x)")
        try await old.execute("INSERT INTO t VALUES ('kept')")
        await old.close()
        #expect(link(path, other) == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

        #expect {
            try Database.upgradeFromSqlCipher3(path: path, key: "legacy")
        } throws: { error in
            guard case SqlCipherError.conversionFailed(_, _, let reason) = error else { return false }
            return reason.contains("2 names (hard links)") && reason.contains("Remove the other links")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        // Once the other name is gone, the same call upgrades the file.
        #expect(unlink(other) == 0)
        try Database.upgradeFromSqlCipher3(path: path, key: "legacy")
        let upgraded = try Database(path: path, key: "legacy")
        #expect(try await upgraded.query("SELECT x FROM t")[0].get(0, as: String.self) == "kept")
        await upgraded.close()
    }

    /// `encryptInPlace(keepBackup: true)` killed (or cut by a power loss) between linking the
    /// backup and the rename leaves the untouched original with a second name,
    /// `<path>.plaintext-backup` (made here with link(2), as the call makes it). That leftover
    /// blocked both next calls: with `keepBackup` "a backup already exists ... move it away" (and a
    /// moved link is still a second name), without it "the file has 2 names". Now the call with
    /// `keepBackup` keeps it as its backup and finishes; the call without names it and says what
    /// to do, and changes nothing.
    @Test func anInterruptedCallsBackupLinkIsKeptOrNamed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("notes.db"), backup = path + ".plaintext-backup"
        try await ConversionTests().makePlaintext(path)
        #expect(link(path, backup) == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()

        #expect {
            try Database.encryptInPlace(path: path, key: "secret", cipher: fastCipher)
        } throws: { error in
            guard case SqlCipherError.conversionFailed(_, _, let reason) = error else { return false }
            return reason.contains("made just before it was interrupted") && reason.contains("keepBackup: true")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == before)

        let kept = try Database.encryptInPlace(path: path, key: "secret", cipher: fastCipher, keepBackup: true)
        #expect(kept == backup)
        let db = try Database(path: path, key: "secret", cipher: fastCipher)
        #expect(try await countRows(db, table: "items") == 100)
        await db.close()
        #expect(FileHeader(path: backup)?.looksPlaintextSQLite == true)
        #expect(try plaintextLeft(in: [dir], "PLAIN-MARKER") == [backup])
    }

    /// A file the caller may not write (mode 0444, another user's) was replaced anyway, since a
    /// rename needs only a writable folder: an unprivileged process encrypted root's read-only
    /// file in a shared folder and became its owner. Now refused, the file unchanged. The helper
    /// runs as `nobody` when the tests run as root.
    @Test func encryptInPlaceRefusesAFileThisProcessMayNotWrite() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: dir.url.path)
        let path = dir.path("notes.db")
        try await ConversionTests().makePlaintext(path)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = try runHelperUnprivileged(["encrypt-in-place", path, "pass:secret"])
        #expect(result.stdout.contains("start") && !result.stdout.contains("done"), "\(result.stdout) \(result.stderr)")
        #expect((result.stdout + result.stderr).contains("not writable by this process"), "\(result.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["notes.db"])
    }

    /// A dangling link at the backup's name was taken for a free name: the whole export ran and
    /// the call failed at the last step. Now refused first, nothing written.
    @Test func aDanglingLinkAtTheBackupsNameIsRefusedFirst() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("notes.db")
        try await ConversionTests().makePlaintext(path)
        #expect(symlink(dir.path("nowhere"), path + ".plaintext-backup") == 0)
        let reports = Mutex(0)
        #expect {
            try Database.encryptInPlace(path: path, key: "secret", cipher: fastCipher, keepBackup: true) { _ in
                reports.withLock { $0 += 1 }
            }
        } throws: { error in
            guard case SqlCipherError.conversionFailed(_, _, let reason) = error else { return false }
            return reason.contains("a backup already exists")
        }
        #expect(reports.withLock { $0 } == 0, "refused before the export began")
        #expect(FileHeader(path: path)?.looksPlaintextSQLite == true)
    }

    /// What is at the path is named when it is no plaintext database, rather than "no file there".
    @Test func encryptInPlaceNamesWhatIsAtThePath() throws {
        let dir = TemporaryDirectory()
        #expect(symlink(dir.path("loop-b"), dir.path("loop-a")) == 0)
        #expect(symlink(dir.path("loop-a"), dir.path("loop-b")) == 0)
        #expect(FileManager.default.createFile(atPath: dir.path("empty.db"), contents: Data()))
        for (path, words) in [(dir.url.path, "a directory"), ("/dev/null", "a device"), (dir.path("loop-a"), "loop"),
                              (dir.path("empty.db"), "empty"), (dir.path("missing.db"), "no database file")] {
            #expect {
                try Database.encryptInPlace(path: path, key: "secret", cipher: fastCipher)
            } throws: { error in
                guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
                return reason.contains(words)
            }
        }
    }

    /// A failed verification says what differs, in words, rather than dumping two structs.
    @Test func differencesAreListedInWords() {
        let source = Exporter.Contents(rowCounts: ["a": 3, "b": 1], userVersion: 2, applicationID: 7, foreignKeyViolations: 0)
        let copy = Exporter.Contents(rowCounts: ["a": 2, "c": 1], userVersion: 2, applicationID: 0, foreignKeyViolations: 0)
        #expect(copy.differences(from: source) == [
            "table a has 2 rows in the new file and 3 in the source",
            "table b is missing from the new file",
            "table c is in the new file but not in the source",
            "application_id is 0 in the new file and 7 in the source",
        ])
        #expect(!copy.differences(from: source).joined().contains("Contents("))
    }
}
