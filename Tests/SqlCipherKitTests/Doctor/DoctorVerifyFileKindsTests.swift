import Foundation
import Testing
@testable import SqlCipherKit

/// `sqlcipher-doctor verify` on files that are not plain regular files beside each other: a
/// database reached through a symbolic link, a `-wal` that is a link, named pipes as companions,
/// and a sparse `-wal` far larger than the disk. Verify reads the original and writes only its own
/// private copy; a file it must not read is refused at once, with a reason.
@Suite struct DoctorVerifyFileKindsTests {
    static let passphrase = "verify-file-kinds"

    /// Runs `verify --json` under `timeout`, so that a verify that blocks fails the test instead of
    /// hanging the run; returns the exit status and the one file entry.
    private func verify(_ file: String, temporary: TemporaryDirectory) throws -> (status: Int32, entry: [String: Any]) {
        let result = try runChild("/usr/bin/timeout", ["--kill-after=5", "30", productPath("sqlcipher-doctor"), "verify", "--json",
                                                      "--key-env", "DOCTOR_TEST_KEY", file],
                                  environment: try Linking.childEnvironment(["DOCTOR_TEST_KEY": Self.passphrase,
                                                                              "TMPDIR": temporary.url.path]))
        // SIGTERM does not end a doctor blocked in open(2) (it handles the signal); SIGKILL does.
        #expect(result.status != 124 && result.status != 137, "verify did not finish within 30 seconds")
        #expect(!result.signaled, "the doctor crashed: \(result.stderr)")
        let report = try Linking.jsonObject(result.stdout)
        let entries = try #require(report["files"] as? [[String: Any]], "\(result.stdout)\n\(result.stderr)")
        return (result.status, try #require(entries.first))
    }

    private func tables(_ entry: [String: Any]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in entry["tables"] as? [[String: Any]] ?? [] {
            if let name = table["name"] as? String, let rows = table["rows"] as? Int { counts[name] = rows }
        }
        return counts
    }

    /// A database left by a crash in WAL mode, at `path`: its 50 rows are only in the `-wal`.
    private func crashedWAL(at path: String) async throws {
        let maker = TemporaryDirectory()
        let live = try Database(path: maker.path("live.db"), key: Self.passphrase, journalMode: .wal)
        try await live.execute("PRAGMA wal_autocheckpoint = 0")
        try await live.execute("CREATE TABLE t(v)")
        for value in 0..<50 { try await live.execute("INSERT INTO t VALUES (?)", value) }
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: maker.path("live.db") + suffix, toPath: path + suffix)
        }
        await live.close()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        try #require(size > 32, "the -wal holds frames")
    }

    /// Bytes and modification time of every file in the folders, by path; links are followed.
    private func state(of folders: [TemporaryDirectory]) throws -> [String: (Data, Date)] {
        var state: [String: (Data, Date)] = [:]
        for folder in folders {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.url.path) {
                let path = folder.path(name)
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                state[path] = (try Data(contentsOf: URL(fileURLWithPath: path)), attributes[.modificationDate] as! Date)
            }
        }
        return state
    }

    private func expectUnchanged(_ before: [String: (Data, Date)], _ after: [String: (Data, Date)]) {
        #expect(after.keys.sorted() == before.keys.sorted(), "no file may appear or disappear")
        for (path, (bytes, modified)) in before {
            #expect(after[path]?.0 == bytes, "\(path) changed")
            #expect(after[path]?.1 == modified, "\(path) mtime changed")
        }
    }

    /// The database is a link to a file whose `-wal` lies beside the target: verify reads the
    /// target's WAL (in a private copy), not an absent one beside the link.
    @Test func databaseThroughASymbolicLinkIsVerifiedWithItsTargetsWAL() async throws {
        let originals = TemporaryDirectory(), links = TemporaryDirectory(), temporary = TemporaryDirectory()
        try await crashedWAL(at: originals.path("store.db"))
        try FileManager.default.createSymbolicLink(atPath: links.path("link.db"), withDestinationPath: originals.path("store.db"))
        let before = try state(of: [originals, links])

        let (status, entry) = try verify(links.path("link.db"), temporary: temporary)
        #expect(status == 0, "\(entry)")
        #expect(entry["status"] as? String == "verified", "\(entry)")
        #expect(entry["access"] as? String == "snapshot")
        #expect(tables(entry) == ["t": 50], "the rows in the target's -wal were read")
        expectUnchanged(before, try state(of: [originals, links]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty)
    }

    /// The database and its `-wal` are both links: a copy of the links would lead SQLite back to
    /// the originals, where it would recover the WAL and checkpoint it (and SQLCipher 3.4.1
    /// truncated the `-wal` link's target). The originals keep every byte and their mtimes.
    @Test func linkedDatabaseAndWALAreOnlyRead() async throws {
        let originals = TemporaryDirectory(), links = TemporaryDirectory(), temporary = TemporaryDirectory()
        try await crashedWAL(at: originals.path("store.db"))
        for suffix in ["", "-wal"] {
            try FileManager.default.createSymbolicLink(atPath: links.path("store.db") + suffix,
                                                       withDestinationPath: originals.path("store.db") + suffix)
        }
        // A real database beside a -wal that is a link to another file's log.
        try await crashedWAL(at: originals.path("other.db"))
        try FileManager.default.copyItem(atPath: originals.path("other.db"), toPath: links.path("real.db"))
        try FileManager.default.createSymbolicLink(atPath: links.path("real.db-wal"),
                                                   withDestinationPath: originals.path("other.db-wal"))
        let before = try state(of: [originals, links])

        for file in [links.path("store.db"), links.path("real.db")] {
            let (status, entry) = try verify(file, temporary: temporary)
            #expect(status == 0, "\(entry)")
            #expect(entry["status"] as? String == "verified", "\(file): \(entry)")
            #expect(tables(entry) == ["t": 50], "\(file)")
        }
        expectUnchanged(before, try state(of: [originals, links]))
        let walSize = try FileManager.default.attributesOfItem(atPath: originals.path("other.db-wal"))[.size] as? Int
        #expect((walSize ?? 0) > 32, "the -wal link's target is not truncated")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty)
    }

    /// A named pipe as `-journal` or `-wal` is refused at once, with a reason; verify does not wait
    /// for a writer that never comes (a `-journal` pipe beside a `-wal` with frames made the copy
    /// for the snapshot block for ever).
    @Test(arguments: [("-journal", true), ("-journal", false), ("-wal", false)])
    func namedPipeCompanionIsRefused(suffix: String, besideFrames: Bool) async throws {
        let directory = TemporaryDirectory(), temporary = TemporaryDirectory()
        let path = directory.path("store.db")
        if besideFrames {
            try await crashedWAL(at: path)
        } else {
            let db = try Database(path: path, key: Self.passphrase)
            try await db.execute("CREATE TABLE t(v); INSERT INTO t VALUES (1)")
            await db.close()
        }
        try #require(mkfifo(path + suffix, 0o600) == 0)
        let started = Date()
        let (status, entry) = try verify(path, temporary: temporary)
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(status != 0)
        #expect(entry["status"] as? String == "not-verifiable", "\(entry)")
        let error = entry["error"] as? String ?? ""
        #expect(error.contains("named pipe") && error.contains(suffix), "\(error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty)
    }

    /// A sparse `-wal` of a terabyte whose first frames are valid: only the frames SQLite reads
    /// (salts matching the header's) are copied, so the copy fits in the temporary folder and the
    /// rows in those frames are verified.
    @Test func sparseWALIsCopiedOnlyAsFarAsItsValidFrames() async throws {
        let directory = TemporaryDirectory(), temporary = TemporaryDirectory()
        let path = directory.path("store.db")
        try await crashedWAL(at: path)
        let validSize = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        try #require(truncate(path + "-wal", off_t(1) << 40) == 0, "the file system takes a sparse terabyte")

        let sources = try SnapshotFiles.sources(of: path)
        #expect(sources["-wal"]?.size == 1 << 40)
        #expect(sources["-wal"]?.copyLength == validSize)

        let (status, entry) = try verify(path, temporary: temporary)
        #expect(status == 0, "\(entry)")
        #expect(entry["status"] as? String == "verified", "\(entry)")
        #expect(tables(entry) == ["t": 50])
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int == 1 << 40)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty)
    }
}
