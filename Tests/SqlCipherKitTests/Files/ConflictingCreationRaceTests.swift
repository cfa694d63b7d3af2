import Foundation
import SqlCipherKit
import Testing

/// Two processes creating one new file at the same moment with settings that cannot both hold:
/// different keys, a key against `Database(unencryptedPath:)`, SQLCipher 4 against SQLCipher 3
/// settings, a plaintext header against none, a `DatabasePool` against a `Database`, WAL against
/// a rollback journal. Whoever wins, the loser gets a typed error (or, when the two requests fit
/// one file, opens the winner's), the file opens with the winner's settings only, holds every row
/// either side was told was committed, and is never plaintext when the side that succeeded asked
/// for a key.
@Suite(.serialized) struct ConflictingCreationRaceTests {
    static let rounds = 6

    /// One side: `create-race` arguments after the path and barrier.
    struct Side: CustomStringConvertible {
        let kind: String, key: String, options: String
        var description: String { "\(kind) \(key) \(options)" }
        var encrypted: Bool { key != "none" }

        /// Opens the file as this side would, in this process.
        func open(_ path: String) throws -> Database {
            var cipher = options.contains("v3") ? CipherSettings.sqlcipher3 : CipherSettings.default
            if options.contains("header32") { cipher.plaintextHeaderSize = 32 }
            if key == "none" { return try Database(unencryptedPath: path, readOnly: true) }
            return try Database(path: path, key: String(key.dropFirst(5)), cipher: cipher, readOnly: true)
        }
    }

    static let scenarios: [(String, Side, Side)] = [
        ("different keys", Side(kind: "database", key: "pass:alpha", options: ""), Side(kind: "database", key: "pass:beta", options: "")),
        ("a pool and a database, different keys", Side(kind: "pool", key: "pass:alpha", options: ""),
         Side(kind: "database", key: "pass:beta", options: "")),
        ("a key and no key", Side(kind: "database", key: "pass:alpha", options: ""), Side(kind: "database", key: "none", options: "")),
        ("a pool and no key", Side(kind: "pool", key: "pass:alpha", options: ""),
         Side(kind: "database", key: "none", options: "rollback")),
        ("WAL and rollback, one key", Side(kind: "database", key: "pass:alpha", options: ""),
         Side(kind: "database", key: "pass:alpha", options: "rollback")),
        ("a pool and a rollback database, one key", Side(kind: "pool", key: "pass:alpha", options: ""),
         Side(kind: "database", key: "pass:alpha", options: "rollback")),
    ]

    static let version4Scenarios: [(String, Side, Side)] = [
        ("SQLCipher 4 and 3 settings", Side(kind: "database", key: "pass:alpha", options: ""),
         Side(kind: "database", key: "pass:alpha", options: "v3")),
        ("a plaintext header and none", Side(kind: "pool", key: "pass:alpha", options: ""),
         Side(kind: "database", key: "pass:alpha", options: "header32,rollback")),
    ]

    @Test(arguments: 0..<scenarios.count)
    func conflictingCreators(_ index: Int) async throws {
        try await race(Self.scenarios[index])
    }

    @Test(.enabled(if: isSQLCipher4()), arguments: 0..<version4Scenarios.count)
    func conflictingCipherSettings(_ index: Int) async throws {
        try await race(Self.version4Scenarios[index])
    }

    /// A program that does not take SqlCipherKit's creation lock (here the plaintext libsqlite3
    /// this test links, as Python's sqlite3 module or any C program would) writes and commits a
    /// plaintext database into the file that an opening has just created, before the opening reads
    /// it. The opening fails (its key does not open that page 1), and it removed the file as its
    /// own creation: the other program's committed rows were gone (seen racing Python's sqlite3
    /// against a pool, 6 of 40 rounds). The file, and the rows in it, are the other program's now.
    @Test(arguments: ["database", "pool"])
    func aPlaintextProgramThatWritesTheNewFileFirstKeepsItsRows(kind: String) async throws {
        let folder = TemporaryDirectory()
        let path = folder.path("new.db")
        let (lines, context) = try await openingPausedInItsCreation(path, kind: kind) {
            try LibSQLite3.run(path, "CREATE TABLE p(v TEXT); INSERT INTO p VALUES ('theirs')")
        }
        #expect(lines.last?.hasPrefix("error keyFailed") == true, "\(context)")
        #expect(Linking.hasPlaintextHeader(path), "the other program's file is gone or changed: \(context)")
        #expect(try LibSQLite3.run(path, "SELECT v FROM p") == [["theirs"]], "\(context)")
    }

    /// The same with the sides turned: a plaintext opening (`Database(unencryptedPath:)`) created
    /// the file, and the `sqlcipher` shell wrote an encrypted database into it first.
    @Test func anEncryptingProgramThatWritesTheNewFileFirstKeepsItsRows() async throws {
        let folder = TemporaryDirectory()
        let path = folder.path("new.db")
        let cli = isSQLCipher4() ? SqlcipherCLI.version4 : SqlcipherCLI.version3
        let key = ["PRAGMA key = 'theirs-key'"]
        let (lines, context) = try await openingPausedInItsCreation(path, kind: "plain") {
            _ = try SqlcipherCLI.run(cli, path, key + ["CREATE TABLE p(v TEXT)", "INSERT INTO p VALUES ('theirs')"])
        }
        #expect(lines.last?.hasPrefix("error ") == true, "\(context)")
        #expect(FileManager.default.fileExists(atPath: path), "the other program's file is gone: \(context)")
        #expect(try SqlcipherCLI.run(cli, path, key + ["SELECT v FROM p"]) == ["theirs"], "\(context)")
    }

    /// Runs a child's opening of `path` (`kind`: database, pool or plain) that pauses inside
    /// SQLite's open of the file it has just created, runs `foreignWrite` meanwhile (another
    /// program writing that file), then lets the opening go on. Returns the child's lines and a
    /// context for failure messages.
    private func openingPausedInItsCreation(_ path: String, kind: String,
                                            foreignWrite: () throws -> Void) async throws -> (lines: [String], context: String) {
        let gate = path + ".gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let child = try CreationRaceTests.RaceChild([path, kind, Linking.randomKeyHex(), gate],
                                                    command: "foreign-writer-pause")
        await child.waitReady()
        // The opening is paused inside SQLite's open of the file it created: it is there and empty.
        #expect(FileManager.default.contents(atPath: path)?.isEmpty == true)
        try foreignWrite()
        let release = open(gate, O_RDWR)
        try #require(release >= 0)
        let lines = await child.finish()
        close(release)
        return (lines, "\(lines) \(child.standardError)")
    }

    private func race(_ scenario: (String, Side, Side)) async throws {
        let (name, a, b) = scenario
        let folder = TemporaryDirectory()
        for round in 0..<Self.rounds {
            let path = folder.path("race\(round).db"), barrier = folder.path("barrier\(round)")
            try #require(mkfifo(barrier, 0o600) == 0)
            let sides = [a, b]
            let children = try sides.enumerated().map { index, side in
                try CreationRaceTests.RaceChild([path, side.kind, side.key, barrier, "s\(index)", "2"]
                    + (side.options.isEmpty ? [] : [side.options]))
            }
            for child in children { await child.waitReady() }
            let gate = open(barrier, O_RDWR)
            try #require(gate >= 0)
            var outputs: [[String]] = []
            for child in children { outputs.append(await child.finish()) }
            close(gate)
            let context = "\(name), round \(round): \(outputs) \(children.map(\.standardError))"
            let succeeded = sides.indices.filter { outputs[$0].last == "done" }
            for index in sides.indices where !succeeded.contains(index) {
                #expect(outputs[index].last?.hasPrefix("error ") == true, "not a typed error: \(context)")
                #expect(outputs[index].last?.contains("sqlite(") != true, "an untyped SQLite error: \(context)")
            }
            try #require(!succeeded.isEmpty, "neither side created the file: \(context)")
            let acknowledged = outputs.flatMap { $0.filter { $0.hasPrefix("ack ") }.map { String($0.dropFirst(4)) } }
            if sides.contains(where: \.encrypted) && succeeded.contains(where: { sides[$0].encrypted }) {
                let kind = DatabaseFileInspector.inspect(path).kind
                #expect(kind != .plaintext, "a side was promised a key and the file is plaintext: \(context)")
            }
            // The file opens with every successful side's settings and holds every acknowledged row.
            // A passphrase file with a plaintext header keeps no salt (CipherSettings'
            // plaintextHeaderSize): only the process that made it can read it, so it is not reopened.
            for index in succeeded where !sides[index].options.contains("header32") {
                let db = try sides[index].open(path)
                let stored = Set(try await db.query("SELECT id FROM t").compactMap { $0.get("id", as: String.self) })
                await db.close()
                #expect(acknowledged.allSatisfy(stored.contains), "lost rows: \(context)")
            }
            // ... and with no failed side's settings unless they fit the same file.
            for index in sides.indices where !succeeded.contains(index) && !sides[succeeded[0]].options.contains("header32") {
                if let db = try? sides[index].open(path) {
                    let readable = (try? await db.query("SELECT count(*) FROM t")) != nil
                    await db.close()
                    #expect(!readable || sides[index].key == sides[succeeded[0]].key, "\(context)")
                }
            }
        }
    }
}
