import Foundation
import Testing
@testable import SqlCipherKit

/// Facts of the library this test run loaded (SQLCIPHERKIT_LIBRARY: libsqlcipher.so.1 or .so.0).
@Suite struct SqlCipherLibraryTests {
    /// The SQLCipher major version Debian ships under the file name the run selected.
    private func expectedMajorVersion() throws -> Int? {
        let requested = try Linking.libraryUnderTest()
        let name = (requested as NSString).lastPathComponent
        if name.hasPrefix("libsqlcipher.so.1") { return 4 }
        if name.hasPrefix("libsqlcipher.so.0") { return 3 }
        return nil
    }

    @Test func versionsMatchTheSelectedLibrary() throws {
        let library = try SqlCipherLibrary.shared
        let expected = try #require(try expectedMajorVersion(), "run with SQLCIPHERKIT_LIBRARY set to libsqlcipher.so.1 or .so.0")
        #expect(library.cipherMajorVersion == expected)
        #expect(library.cipherVersion.hasPrefix("\(expected)."))
        #expect(!library.cipherVersion.isEmpty)
        // SQLCipher 4 is built on SQLite 3.2x+ and 3.4.1 on SQLite 3.15: the numbers agree with the strings.
        let parts = SqlCipherLibrary.versionComponents(library.sqliteVersion)
        #expect(parts.count == 3)
        #expect(library.sqliteVersionNumber == parts[0] * 1_000_000 + parts[1] * 1000 + parts[2])
        #expect(library.sqliteVersionNumber >= (expected == 4 ? 3_020_000 : 3_015_000))
        #expect(library.hasPrepareV3 == (library.sqliteVersionNumber >= 3_020_000))
        #expect(!library.sqliteSourceID.isEmpty)
        #expect(library.cipherProvider == "openssl")
        #expect(library.cipherProviderVersion?.contains("OpenSSL") == true)
    }

    @Test func pathIsTheResolvedFileOfTheSelection() throws {
        let library = try SqlCipherLibrary.shared
        let requested = try Linking.libraryUnderTest()
        #expect(library.path == URL(fileURLWithPath: requested).resolvingSymlinksInPath().path)
        #expect(library.path.hasPrefix("/"))
        #expect(FileManager.default.fileExists(atPath: library.path))
    }

    @Test func loadedWithIsolationAndAuditedBeforeUse() throws {
        let library = try SqlCipherLibrary.shared
        #expect(library.loadMethod == "RTLD_NOW|RTLD_LOCAL|RTLD_DEEPBIND")
        #expect(library.wasAlreadyLoaded == false)
        #expect(library.bindingAudit.isSupported)
        // Debian's builds call their own sqlite3_* functions through hundreds of slots (435 / 355).
        #expect(library.bindingAudit.checked > 100)
        #expect(library.bindingAudit.foreign.isEmpty)
    }

    @Test func loadingTheSameFileAgainReturnsTheSameInstance() throws {
        let library = try SqlCipherLibrary.shared
        // The symlink name, the resolved name and a path with a detour all name the same file.
        let requested = try Linking.libraryUnderTest()
        let detour = (library.path as NSString).deletingLastPathComponent + "/./"
            + (library.path as NSString).lastPathComponent
        #expect(try SqlCipherLibrary.load(from: requested) === library)
        #expect(try SqlCipherLibrary.load(from: library.path) === library)
        #expect(try SqlCipherLibrary.load(from: detour) === library)
    }

    /// An empty path names no file, and C would read a path with a NUL only up to the NUL (here:
    /// the loaded library itself, returned as if it had been named).
    @Test func anEmptyPathOrOneWithANulNamesNoLibrary() throws {
        let library = try SqlCipherLibrary.shared
        for path in ["", library.path + "\0.bak"] {
            do {
                _ = try SqlCipherLibrary.load(from: path)
                Issue.record("load(from: \(path.debugDescription)) returned a library")
            } catch let error as SqlCipherError {
                guard case .libraryNotFound(let searched, _) = error else {
                    Issue.record("expected libraryNotFound, got \(error)")
                    continue
                }
                #expect(searched.count == 1 && (searched[0].contains("empty") || searched[0].contains("NUL")), "\(searched)")
                #expect(!"\(error)".contains("search path"), "\(error)")
            }
        }
    }

    @Test func aDifferentLibraryIsRefusedOnceOneIsLoaded() throws {
        let library = try SqlCipherLibrary.shared
        let other = library.cipherMajorVersion >= 4 ? "libsqlcipher.so.0" : "libsqlcipher.so.1"
        let otherPath = Linking.libraryDirectory + "/" + other
        try #require(FileManager.default.fileExists(atPath: otherPath))
        #expect(throws: SqlCipherError.libraryAlreadyLoaded(loaded: library.path, requested: otherPath)) {
            try SqlCipherLibrary.load(from: otherPath)
        }
        // Still the same library afterwards.
        #expect(try SqlCipherLibrary.shared === library)
    }

    @Test func otherSQLiteLibrariesListTheLinkedLibsqlite3() throws {
        let library = try SqlCipherLibrary.shared
        // Make sure the linker kept libsqlite3 in this test binary: call it.
        #expect(!LibSQLite3.version.isEmpty)
        let others = library.otherSQLiteLibraries
        let sqlite3 = try #require(others.first { $0.path.hasSuffix("/libsqlite3.so.0") }, "listed: \(others)")
        #expect(sqlite3.version == LibSQLite3.version)
        #expect(!others.contains { $0.path == library.path })
        #expect(SqlCipherLibrary.sqliteLibrariesInProcess == others)
    }

    @Test func discoveryPrefersSQLCipher4() {
        let paths = SqlCipherLibrary.searchPaths
        let first1 = paths.firstIndex { $0.hasSuffix("/libsqlcipher.so.1") }
        let first0 = paths.firstIndex { $0.hasSuffix("/libsqlcipher.so.0") }
        #expect(first1 != nil && first0 != nil)
        if let first1, let first0 { #expect(first1 < first0) }
        #expect(paths.contains(Linking.libraryDirectory + "/libsqlcipher.so.1"))
        #expect(paths.allSatisfy { $0.hasPrefix("/") })
    }

    @Test func versionGates() throws {
        let library = try SqlCipherLibrary.shared
        #expect(library.cipherVersionIsAtLeast(3, 4, 0))
        #expect(library.cipherVersionIsAtLeast(4) == (library.cipherMajorVersion >= 4))
        #expect(!library.cipherVersionIsAtLeast(99))
        if library.cipherMajorVersion < 4 {
            #expect(throws: SqlCipherError.self) { try library.require("a 4.x feature", cipher: 4) }
        } else {
            try library.require("a 4.x feature", cipher: 4)
        }
    }

    /// What other builds and later releases report as `cipher_version`: the numbers are read
    /// whatever edition word follows, and a two-digit minor compares as a number.
    @Test(arguments: [
        ("4.6.1 community", [4, 6, 1]), ("4.10.0 community", [4, 10, 0]), ("4.6.1 enterprise", [4, 6, 1]),
        ("4.5.6 FIPS", [4, 5, 6]), ("5.0.0 community", [5, 0, 0]), ("4.6.1-beta", [4, 6, 1]), ("3.4.1", [3, 4, 1]),
        ("4.6", [4, 6]), ("4.19.0 commercial edition", [4, 19, 0]),
    ])
    func cipherVersionsOfOtherBuildsParse(_ version: String, _ expected: [Int]) {
        #expect(SqlCipherLibrary.versionComponents(version) == expected)
    }

    /// A version string that does not start with its number (a `v`, a product name, a space), or a
    /// component too large for `Int`, must not read as an older version: major 0 would turn off
    /// every SQLCipher 4 path (cipher_compatibility, cipher_log, cipher_integrity_check) and make
    /// the doctor warn of a SQLCipher 3 fallback.
    @Test(arguments: [
        ("v4.6.1", [4, 6, 1]), ("SQLCipher 4.6.1 community", [4, 6, 1]), (" 4.6.1", [4, 6, 1]),
        ("99999999999999999999.0.0", [Int.max, 0, 0]), ("4..6", [4]),
    ])
    func cipherVersionsWithAPrefixOrAHugeNumberAreNotOlder(_ version: String, _ expected: [Int]) {
        #expect(SqlCipherLibrary.versionComponents(version) == expected)
    }

    @Test func loadErrorsDescribeWhatToDo() {
        let errors: [SqlCipherError] = [
            .libraryNotFound(searched: ["/a"], package: "libsqlcipher1"),
            .notSQLCipher(path: "/x", reason: "r"),
            .bindingConflict(path: "/x", foreign: 1, checked: 2, symbol: "sqlite3_step", boundTo: "/y"),
            .missingSymbol(path: "/x", symbol: "sqlite3_key"),
            .unsupportedRuntime(reason: "r"),
            .libraryAlreadyLoaded(loaded: "/a", requested: "/b"),
        ]
        for error in errors {
            let text = error.description
            #expect(text.count > 40)
            // Each says what to do: install, point, make sure, run, use.
            #expect(["Install", "Point", "Make sure", "Run", "Use", "point"].contains { text.contains($0) }, "\(text)")
        }
        #expect(SqlCipherError.libraryNotFound(searched: ["/a"], package: "libsqlcipher1").description.contains("apt-get install libsqlcipher1"))
        #expect(SqlCipherError.bindingConflict(path: "/x", foreign: 1, checked: 2, symbol: "sqlite3_step", boundTo: "/y")
            .description.contains("sqlite3_step is bound to /y"))
    }
}
