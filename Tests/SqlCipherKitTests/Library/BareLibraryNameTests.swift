import Foundation
import SqlCipherKit
import Testing

/// `SQLCIPHERKIT_LIBRARY=libsqlcipher.so.0` and `load(from: "libsqlcipher.so.0")` (issue 12,
/// item 10). A bare file name was made absolute against the current directory, so a file of that
/// name in the working directory was loaded (or, without one, the name failed). It must be looked
/// up the way `dlopen` looks up bare names; a path containing `/` stays a path.
///
/// Each case runs the test helper as a child whose current directory holds files named like the
/// libraries: fakes that must never be picked, and a real copy under a name found nowhere else.
@Suite struct BareLibraryNameTests {
    /// The library under test and the bare names it is known by (its link name and its file name).
    struct Subject {
        let real: String
        let linkName: String
    }

    static func subject() throws -> Subject {
        let requested = try Linking.libraryUnderTest()
        let real = URL(fileURLWithPath: requested).resolvingSymlinksInPath().path
        return Subject(real: real, linkName: (requested as NSString).lastPathComponent)
    }

    /// A directory holding a fake of every Debian library name and a real copy named
    /// `libsqlcipherkit-copy.so`.
    static func workingDirectory(_ subject: Subject) throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        for name in ["libsqlcipher.so.0", "libsqlcipher.so.1", "libsqlcipher.so", subject.linkName,
                     (subject.real as NSString).lastPathComponent] {
            _ = FileManager.default.createFile(atPath: dir.path(name), contents: Data("not a library\n".utf8))
        }
        try FileManager.default.copyItem(atPath: subject.real, toPath: dir.path("libsqlcipherkit-copy.so"))
        return dir
    }

    /// Runs the helper in `directory` with `environment` changes; returns the JSON objects it printed.
    static func helper(_ arguments: [String], in directory: URL,
                       environment: [String: String?] = [:]) throws -> [[String: Any]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: productPath("sqlcipherkit-test-helper"))
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var env = ProcessInfo.processInfo.environment
        env[SqlCipherLibrary.environmentVariable] = nil
        env["LD_LIBRARY_PATH"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try launch(process)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func aBareNameIsLookedUpByTheDynamicLinkerNotInTheCurrentDirectory() throws {
        let subject = try Self.subject()
        let dir = try Self.workingDirectory(subject)
        let results = try Self.helper(["load-library", subject.linkName], in: dir.url)
        let result = try #require(results.first)
        #expect(result["outcome"] as? String == "loaded", "\(result)")
        #expect(result["path"] as? String == subject.real)
    }

    @Test func theEnvironmentVariableTakesABareName() throws {
        let subject = try Self.subject()
        let dir = try Self.workingDirectory(subject)
        let result = try #require(try Self.helper(
            ["library-info"], in: dir.url, environment: [SqlCipherLibrary.environmentVariable: subject.linkName]).first)
        #expect(result["outcome"] as? String == "loaded", "\(result)")
        #expect(result["path"] as? String == subject.real)
    }

    @Test func aNameFoundOnlyInTheCurrentDirectoryIsNotFound() throws {
        let subject = try Self.subject()
        let dir = try Self.workingDirectory(subject)
        // A working library sits in the current directory under this name: a lookup there would load it.
        let result = try #require(try Self.helper(["load-library", "libsqlcipherkit-copy.so"], in: dir.url).first)
        #expect(result["outcome"] as? String == "error")
        #expect(result["case"] as? String == "libraryNotFound", "\(result)")
        #expect((result["description"] as? String)?.contains("search path") == true, "\(result)")
    }

    @Test func aPathWithASlashStaysAPath() throws {
        let subject = try Self.subject()
        let dir = try Self.workingDirectory(subject)
        // The fake in the current directory is what "./name" names, and it is no library.
        let fake = try #require(try Self.helper(["load-library", "./" + subject.linkName], in: dir.url).first)
        #expect(fake["outcome"] as? String == "error")
        #expect(fake["case"] as? String == "notSQLCipher", "\(fake)")
        // The real copy, by a relative path.
        let copy = try #require(try Self.helper(["load-library", "./libsqlcipherkit-copy.so"], in: dir.url).first)
        #expect(copy["outcome"] as? String == "loaded", "\(copy)")
        #expect(copy["path"] as? String == URL(fileURLWithPath: dir.path("libsqlcipherkit-copy.so")).resolvingSymlinksInPath().path)
    }

    @Test func theLibrarySearchPathIsHonoured() throws {
        let subject = try Self.subject()
        let dir = try Self.workingDirectory(subject)
        let searchPath = TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: searchPath.path("libsqlcipherkit-alias.so"),
                                                   withDestinationPath: subject.real)
        let found = try #require(try Self.helper(["load-library", "libsqlcipherkit-alias.so"], in: dir.url,
                                                 environment: ["LD_LIBRARY_PATH": searchPath.url.path]).first)
        #expect(found["outcome"] as? String == "loaded", "\(found)")
        #expect(found["path"] as? String == subject.real)
        let missing = try #require(try Self.helper(["load-library", "libsqlcipherkit-alias.so"], in: dir.url).first)
        #expect(missing["case"] as? String == "libraryNotFound", "\(missing)")
    }

    @Test func aBareNameOfTheLoadedLibraryIsTheSameLibrary() throws {
        let subject = try Self.subject()
        let dir = try Self.workingDirectory(subject)
        // By path, then by bare name: one library, the second call returns it.
        let results = try Self.helper(["load-library", subject.real, subject.linkName], in: dir.url)
        #expect(results.count == 2)
        #expect(results.allSatisfy { $0["outcome"] as? String == "loaded" && $0["path"] as? String == subject.real },
                "\(results)")
        // The other Debian library by bare name is a second SQLCipher: refused, whichever is loaded.
        let other = subject.linkName == "libsqlcipher.so.1" ? "libsqlcipher.so.0" : "libsqlcipher.so.1"
        let second = try Self.helper(["load-library", subject.real, other], in: dir.url)
        #expect(second.count == 2)
        #expect(second.last?["case"] as? String == "libraryAlreadyLoaded", "\(second)")
    }
}
