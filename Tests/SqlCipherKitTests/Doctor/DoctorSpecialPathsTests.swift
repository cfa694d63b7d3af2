import Foundation
import SqlCipherKit
import Testing

/// `sqlcipher-doctor inspect` and `verify` given something that is no file to read — a named pipe,
/// a socket, a directory, a device, or a chain of links to a pipe — answer at once (each child
/// runs under `timeout`) with a non-zero status and a verdict, and create nothing beside it.
@Suite struct DoctorSpecialPathsTests {
    private static func doctor(_ arguments: [String]) throws -> ChildResult {
        try runChild("/usr/bin/timeout", ["-s", "KILL", "20", productPath("sqlcipher-doctor")] + arguments,
                     environment: ["DOCTOR_TEST_KEY": "any passphrase"])
    }

    @Test func specialPathsAreRefusedAtOnce() throws {
        let dir = TemporaryDirectory()
        let pipe = dir.path("pipe.db"), folder = dir.path("folder.db"), socketPath = dir.path("socket.db")
        let link = dir.path("link.db"), hop = dir.path("hop.db")
        try #require(mkfifo(pipe, 0o600) == 0)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try #require(symlink("hop.db", link) == 0 && symlink("pipe.db", hop) == 0)
        let socketDescriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socketDescriptor >= 0)
        defer { close(socketDescriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in socketPath.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: dir.url.path))
        for path in [pipe, folder, socketPath, link, "/dev/zero"] {
            let inspect = try Self.doctor(["inspect", path])
            #expect(inspect.status == 1 && inspect.stdout.contains("not-a-database"), "\(path): \(inspect.stdout) \(inspect.stderr)")
            let verify = try Self.doctor(["verify", "--key-env", "DOCTOR_TEST_KEY", path])
            #expect(verify.status == 1 && verify.stdout.contains("NOT-VERIFIABLE"), "\(path): \(verify.stdout) \(verify.stderr)")
        }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.url.path)) == before)
    }

    /// A file whose name is not valid UTF-8 (`\xff.db`) was reported missing: Swift decodes the
    /// command line as UTF-8 and replaced the byte, so the doctor looked at another name. Each
    /// command now says so (usage error, status 2), naming the argument by position.
    @Test func aFileNameThatIsNotUTF8IsNamedAsSuch() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("store.db"), rawKey: rawKey())
        await db.close()
        // The shell makes the name: a Swift string cannot hold the byte 0xFF.
        #expect(try runChild("/bin/sh", ["-c", "cd \"$0\" && mv store.db \"$(printf 'st\\377re.db')\"", dir.url.path]).status == 0)
        for command in ["inspect", "inspect --json", "verify --key-env DOCTOR_TEST_KEY"] {
            let script = "cd \"$1\" && exec \"$0\" \(command) \"$(printf 'st\\377re.db')\""
            let result = try runChild("/usr/bin/timeout", ["-s", "KILL", "20", "/bin/sh", "-c", script,
                                                           productPath("sqlcipher-doctor"), dir.url.path],
                                      environment: ["DOCTOR_TEST_KEY": "any passphrase"])
            let position = command.split(separator: " ").count + 1
            #expect(result.status == 2 && !result.signaled, "\(command): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("argument \(position) is not valid UTF-8"), "\(command): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(command): \(result.stdout)")
        }
    }

    /// Names from the files inspected (the file's own name, its tables') were printed as they are:
    /// an escape sequence in a name reached the terminal (its title, colours, the cursor), and a
    /// newline or carriage return printed a line of the file's own that read like the doctor's
    /// verdict. Text output now writes every control character as an escape; JSON escapes them
    /// as JSON does.
    @Test func namesFromTheFilesCannotWriteToTheTerminal() async throws {
        let dir = TemporaryDirectory()
        let name = "x\u{1B}]0;owned\u{07}\nfake.db: VERIFIED\r\u{202E}.db"
        let path = dir.path(name)
        let db = try Database(path: path, rawKey: rawKey())
        try await db.execute("CREATE TABLE \"t\u{1B}[2J\nfake: ok\"(x)")
        await db.close()
        let hex = rawKey().map { String(format: "%02x", $0) }.joined()
        for arguments in [["inspect", path], ["verify", "--raw-key-env", "DOCTOR_TEST_KEY", path]] {
            let result = try runChild("/usr/bin/timeout", ["-s", "KILL", "20", productPath("sqlcipher-doctor")] + arguments,
                                      environment: ["DOCTOR_TEST_KEY": hex])
            #expect(!result.signaled, "\(arguments[0]): \(result.stderr)")
            let controls = result.stdout.unicodeScalars.filter {
                ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0.value == 0x202E
            }
            #expect(controls.isEmpty, "\(arguments[0]): \(controls.map(\.value))")
            #expect(!result.stdout.split(separator: "\n").contains { $0.hasPrefix("fake") }, "\(arguments[0]): \(result.stdout)")
            #expect(result.stdout.contains("\\u{1B}]0;owned\\u{7}\\u{A}fake.db: VERIFIED\\u{D}\\u{202E}.db"),
                    "\(arguments[0]): \(result.stdout)")
        }
    }
}
