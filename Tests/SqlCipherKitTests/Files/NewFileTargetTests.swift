import Foundation
import SqlCipherKit
import Testing

/// The copies that write a new file (`export`, `exportDecrypted`, `encrypt(plaintextAt:to:)`,
/// `backup`) refuse a target whose name, or whose companion's name, is already taken, also by a
/// symbolic link that points nowhere, before anything is written.
///
/// SQLCipher 3.4.1 wrote a new file's `-shm` through a link there (the file it pointed to was
/// overwritten) and a `-journal` through a dangling link (a file appeared in another folder and
/// stayed after the link was removed); 4.6.1 failed with a bare "unable to open database file" in
/// the middle of the export. A backup to a dangling link copied every page and only then failed.
@Suite struct NewFileTargetTests {
    enum Copy: String, CaseIterable, Sendable {
        case export, exportDecrypted, encrypt, backup
    }

    /// Runs one kind of copy of a small database into `target`.
    private static func copy(_ kind: Copy, in dir: TemporaryDirectory, to target: String) async throws {
        if kind == .encrypt {
            let source = dir.path("plain.db")
            if !FileManager.default.fileExists(atPath: source) {
                let plain = try Database(unencryptedPath: source)
                try await plain.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('NEW-FILE-MARKER')")
                await plain.close()
            }
            try Database.encrypt(plaintextAt: source, to: target, key: "k", cipher: fastCipher)
            return
        }
        let db = try Database(path: dir.path("source.db"), rawKey: rawKey())
        do {
            try await db.execute("CREATE TABLE IF NOT EXISTS t(x)")
            try await db.execute("INSERT INTO t VALUES ('NEW-FILE-MARKER')")
            switch kind {
            case .export: try await db.export(to: target, key: "k", cipher: fastCipher)
            case .exportDecrypted: try await db.exportDecrypted(to: target)
            case .backup: try await db.backup(to: target, key: .rawKey(rawKey(2)))
            case .encrypt: break
            }
        } catch {
            await db.close()
            throw error
        }
        await db.close()
    }

    private static func refusedBecause(_ words: String) -> @Sendable (any Error) -> Bool {
        { error in
            guard case SqlCipherError.cannotOpen(_, let reason) = error else { return false }
            return reason.contains(words)
        }
    }

    @Test(arguments: Copy.allCases, ["-wal", "-shm", "-journal"])
    func aLinkedCompanionOfTheTargetIsRefusedAndItsFileKept(kind: Copy, suffix: String) async throws {
        let dir = TemporaryDirectory(), elsewhere = TemporaryDirectory()
        let target = dir.path("copy.db")
        let victim = elsewhere.path("precious.txt")
        #expect(FileManager.default.createFile(atPath: victim, contents: Data("precious".utf8)))
        #expect(symlink(victim, target + suffix) == 0)
        await #expect(performing: { try await Self.copy(kind, in: dir, to: target) },
                      throws: Self.refusedBecause("is a symbolic link"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Data("precious".utf8))
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.url.path) == ["precious.txt"])
    }

    @Test(arguments: Copy.allCases, ["", "-wal", "-shm", "-journal"])
    func aDanglingLinkAtTheTargetOrACompanionIsRefused(kind: Copy, suffix: String) async throws {
        let dir = TemporaryDirectory(), elsewhere = TemporaryDirectory()
        let target = dir.path("copy.db")
        #expect(symlink(elsewhere.path("nothing-yet"), target + suffix) == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { !$0.hasPrefix("source") && !$0.hasPrefix("plain") }
        await #expect(performing: { try await Self.copy(kind, in: dir, to: target) },
                      throws: Self.refusedBecause("is a symbolic link"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.url.path).isEmpty)
        let after = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { !$0.hasPrefix("source") && !$0.hasPrefix("plain") }
        #expect(after == before, "nothing written beside the target")
    }

    @Test(arguments: Copy.allCases)
    func aTargetEndingInASlashIsRefusedBeforeTheCopy(kind: Copy) async throws {
        let dir = TemporaryDirectory()
        await #expect(performing: { try await Self.copy(kind, in: dir, to: dir.path("copy.db") + "/") },
                      throws: Self.refusedBecause("ends in \"/\""))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).allSatisfy {
            $0.hasPrefix("source") || $0.hasPrefix("plain")
        })
    }
}
