import Foundation
import SqlCipherKit
import Testing

@Suite struct EncryptionSelfTestTests {
    @Test func passesWithARawKeyAndCleansUp() async throws {
        let library = try SqlCipherLibrary.shared
        let directory = TemporaryDirectory()
        let result = await library.runEncryptionSelfTest(keyKind: .rawKey, directory: directory.url)
        #expect(result.passed, "\(result.failure ?? "")")
        #expect(result.failure == nil)
        #expect(result.keyKind == .rawKey)
        #expect(result.checks.map(\.name) == EncryptionSelfTest.Check.Name.allCases)
        #expect(result.check(.headerEncrypted)?.passed == true)
        #expect(result.checks.allSatisfy { !$0.detail.isEmpty })
        // The database lived in a folder of its own inside the given directory; both it and its
        // folder are gone, the given directory is left.
        let folder = (result.databasePath as NSString).deletingLastPathComponent
        #expect((folder as NSString).deletingLastPathComponent == directory.url.path)
        #expect(!FileManager.default.fileExists(atPath: folder))
        #expect(FileManager.default.fileExists(atPath: directory.url.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
        // While open the database was in WAL mode, so the -wal was among the scanned files.
        #expect(result.check(.markerAbsent)?.detail.contains("selftest.db-wal") == true)
        #expect(result.check(.wrongKeyRefused)?.detail.contains("keyFailed") == true)
    }

    @Test func passesWithAPassphrase() async throws {
        let result = await (try SqlCipherLibrary.shared).runEncryptionSelfTest(keyKind: .passphrase)
        #expect(result.passed, "\(result.failure ?? "")")
        #expect(result.keyKind == .passphrase)
        #expect(!FileManager.default.fileExists(atPath: result.databasePath))
    }

    @Test func anUnusableDirectoryFailsWithoutThrowingAndReportsEachStep() async throws {
        let library = try SqlCipherLibrary.shared
        let missing = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/deeper")
        let result = await library.runEncryptionSelfTest(keyKind: .rawKey, directory: missing)
        #expect(!result.passed)
        #expect(result.check(.headerEncrypted)?.passed != true)
        #expect(result.checks.map(\.name) == EncryptionSelfTest.Check.Name.allCases)
        let create = try #require(result.check(.createDatabase))
        #expect(!create.passed)
        #expect(create.detail.contains("could not create"))
        for name in [EncryptionSelfTest.Check.Name.headerEncrypted, .markerAbsent, .keyReadsBack, .wrongKeyRefused] {
            #expect(result.check(name)?.passed == false)
            #expect(result.check(name)?.detail.hasPrefix("not run") == true)
        }
        // Nothing was created, so there is nothing left behind.
        #expect(result.check(.filesRemoved)?.passed == true)
        #expect(result.failure?.hasPrefix("create_database:") == true)
    }

    @Test func twoRunsUseDifferentFoldersAndMarkers() async throws {
        let library = try SqlCipherLibrary.shared
        async let first = library.runEncryptionSelfTest(keyKind: .rawKey)
        async let second = library.runEncryptionSelfTest(keyKind: .rawKey)
        let (a, b) = await (first, second)
        #expect(a.passed && b.passed, "\(a.failure ?? "") \(b.failure ?? "")")
        #expect(a.databasePath != b.databasePath)
    }
}
