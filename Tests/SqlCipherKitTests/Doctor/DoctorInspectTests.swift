import Foundation
import SqlCipherKit
import Testing

/// `sqlcipher-doctor inspect`, run as a user would.
@Suite struct DoctorInspectTests {
    private func inspect(_ arguments: [String]) throws -> ChildResult {
        let result = try runChild(productPath("sqlcipher-doctor"), ["inspect"] + arguments)
        #expect(!result.signaled, "the doctor crashed: \(result.stderr)")
        return result
    }

    /// A folder holding one file of each kind, with WAL companions, copied from the fixtures.
    private func filesOfEachKind(_ directory: TemporaryDirectory) throws -> [String: String] {
        let copies = ["plaintext.db", "sqlcipher4-plaintext-header.db", "sqlcipher4-default.db", "sqlcipher3-wal.db",
                      "sqlcipher3-wal.db-wal", "README.md"]
        for name in copies {
            try FileManager.default.copyItem(at: Linking.fixtures.appendingPathComponent(name),
                                             to: directory.url.appendingPathComponent(name))
        }
        try Data().write(to: URL(fileURLWithPath: directory.path("empty.db")))
        return [
            "missing": directory.path("missing.db"), "empty": directory.path("empty.db"),
            "plaintext": directory.path("plaintext.db"), "plaintext-header": directory.path("sqlcipher4-plaintext-header.db"),
            "encrypted": directory.path("sqlcipher4-default.db"), "not-a-database": directory.path("README.md"),
        ]
    }

    @Test func jsonNamesEachKind() throws {
        let directory = TemporaryDirectory()
        let files = try filesOfEachKind(directory)
        let order = ["missing", "empty", "plaintext", "plaintext-header", "encrypted", "not-a-database"]
        let result = try inspect(["--json"] + order.map { files[$0]! })
        // A missing file makes the exit code 1; the report is complete anyway.
        #expect(result.status == 1)
        let report = try Linking.jsonObject(result.stdout)
        let entries = try #require(report["files"] as? [[String: Any]])
        #expect(entries.count == order.count)
        for (entry, kind) in zip(entries, order) {
            #expect(entry["kind"] as? String == kind)
            #expect(entry["path"] as? String == files[kind])
            #expect(!(entry["detail"] as? String ?? "").isEmpty)
        }
        #expect(entries[2]["page_size"] as? Int == 4096)
        #expect(entries[2]["journal_mode"] as? String == "rollback")
        #expect(entries[3]["reserved_bytes"] as? Int == 80)
        #expect(entries[4]["page_size"] is NSNull)
        #expect(report["ok"] as? Bool == false, "a missing file makes ok false, like the exit code")
        // The encrypted file's page count comes from its size, with the page size assumed.
        #expect(entries[4]["page_count"] as? Int == 15)
        #expect(entries[4]["assumed_page_size"] as? Int == 4096)
        #expect(entries[4]["page_count_is_ambiguous"] as? Bool == true)
        #expect(entries[2]["page_count"] as? Int == 15)
        #expect(entries[2]["assumed_page_size"] is NSNull)
        #expect(entries[2]["page_count_is_ambiguous"] as? Bool == false)
        #expect(entries[0]["page_count"] is NSNull)

        let good = try inspect(["--json", files["plaintext"]!, files["encrypted"]!])
        #expect(good.status == 0)
        #expect(try Linking.jsonObject(good.stdout)["ok"] as? Bool == true)
    }

    @Test func helpOfInspect() throws {
        let result = try inspect(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: sqlcipher-doctor inspect [--json] [--] FILE..."))
        #expect(!result.stdout.contains("--library"), "inspect takes no library")
    }

    @Test func exitCodeIsZeroWhenEveryFileWasRead() throws {
        let directory = TemporaryDirectory()
        let files = try filesOfEachKind(directory)
        let result = try inspect([files["plaintext"]!, files["encrypted"]!, directory.path("sqlcipher3-wal.db")])
        #expect(result.status == 0)
        #expect(result.stdout.contains("plaintext.db: plaintext\n"))
        #expect(result.stdout.contains("sqlcipher4-default.db: encrypted\n"))
        #expect(result.stdout.contains("sqlcipher3-wal.db: encrypted\n"))
        #expect(result.stdout.contains("-wal (3176 bytes)"))
    }

    @Test func aFileNamedLikeAnOptionAfterTheSeparator() throws {
        let directory = TemporaryDirectory()
        let odd = directory.path("-odd.db")
        try Data().write(to: URL(fileURLWithPath: odd))
        let direct = try inspect(["--", odd])
        #expect(direct.status == 0)
        #expect(direct.stdout.contains(": empty"))
    }

    @Test func inspectNeverModifiesAFile() async throws {
        let directory = TemporaryDirectory()
        _ = try filesOfEachKind(directory)
        // Also a database in WAL mode with its -wal and -shm, left as a crashed process would.
        try FileManager.default.copyItem(at: Linking.fixtures.appendingPathComponent("sqlcipher4-wal.db"),
                                         to: directory.url.appendingPathComponent("sqlcipher4-wal.db"))
        try FileManager.default.copyItem(at: Linking.fixtures.appendingPathComponent("sqlcipher4-wal.db-wal"),
                                         to: directory.url.appendingPathComponent("sqlcipher4-wal.db-wal"))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        let before = try directory.snapshot()
        // Let a modification, if any, show up in the mtime.
        try await Task.sleep(for: .milliseconds(20))
        let paths = names.map { directory.path($0) } + [directory.path("missing.db")]
        #expect(try inspect(paths).status == 1)
        #expect(try inspect(["--json"] + paths).status == 1)
        let after = try directory.snapshot()
        #expect(after.keys.sorted() == names, "no file may appear (e.g. a -shm) or disappear")
        for name in names {
            #expect(after[name]?.0 == before[name]?.0, "\(name) changed")
            #expect(after[name]?.1 == before[name]?.1, "\(name) mtime changed")
        }
    }
}
