import Foundation
import Testing
@testable import SqlCipherKit

/// SIGKILL while a child process converts a plaintext file that ANOTHER process holds open in a
/// `DatabasePool`, its readers reading all the while: `encryptInPlace` (which needs the file to
/// itself) and `encrypt(plaintextAt:to:)` (which only reads it), at seeded random moments. The
/// file opens afterwards with every row (as plaintext, or encrypted when the conversion ended);
/// the readers never fail and never see other rows; a copy's target is absent or whole.
@Suite(.serialized) struct KilledConversionBesideReadersTests {
    static let rows = 3000

    func makePlaintext(_ path: String) async throws {
        let db = try Database(unencryptedPath: path)
        try await fill(db, rows: Self.rows, size: 300, marker: "READER-MARKER ")
        await db.close()
    }

    /// Starts a `pool-read` child on `path` and waits until it has read once.
    func startReaders(_ path: String, stop: String) throws -> (KillableChild, String) {
        let reader = try KillableChild(helperArguments: ["pool-read", path, "none", stop])
        let first = try #require(reader.waitForLine(startingWith: "reading", timeout: 60), "\(reader.lines)")
        return (reader, String(first.dropFirst("reading ".count)))
    }

    /// Stops the readers and checks that every read they made, all through, saw `answer`.
    func stopReaders(_ reader: KillableChild, stop: String, answer: String,
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        #expect(FileManager.default.createFile(atPath: stop, contents: nil))
        #expect(reader.waitForExit() == 0, "\(reader.lines) \(reader.standardError)", sourceLocation: sourceLocation)
        let summary = reader.lines.last ?? ""
        #expect(summary.contains("errors 0 distinct \(answer) first-error none"), "\(summary)", sourceLocation: sourceLocation)
        return summary
    }

    @Test func encryptInPlaceKilledWhileAnotherProcessReadsThroughAPool() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db"), stop = dir.path("stop")
        try await makePlaintext(path)
        let (reader, answer) = try startReaders(path, stop: stop)
        #expect(answer == "\(Self.rows) \(Self.rows * 300 + Self.rows * 14 + 10 + 90 * 2 + 900 * 3 + 2000 * 4)")

        // Uninterrupted, what the user gets: the file is refused while the pool holds it, unchanged.
        let start = Date()
        let attempt = try runHelper(["encrypt-in-place", path, "pass:readers"])
        let duration = Date().timeIntervalSince(start)
        #expect(attempt.status == 1 && attempt.stdout.contains("another connection is using the file"),
                "\(attempt.stdout) \(attempt.stderr)")
        #expect(attempt.stdout.contains("close every connection to it first"))

        let scenario = "SIGKILL during encryptInPlace, another process reading"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        for round in 0..<Reliability.count(short: 6, long: 40) {
            let delay = Double.random(in: 0...duration, using: &random)
            let label = "round \(round), delay \(delay)"
            let (_, killed) = try KillableChild.killed(["encrypt-in-place", path, "pass:readers"], after: delay)
            record.rounds += 1
            if killed { record.faults += 1 }
            // Still the plaintext original, whole, whatever the moment.
            let db = try Database(unencryptedPath: path)
            #expect(try await countRows(db) == Self.rows, "\(label)")
            #expect(try await db.verifyIntegrity().isOK, "\(label)")
            await db.close()
            #expect(!FileManager.default.fileExists(atPath: path + ".sqlcipherkit-encrypting")
                    || FileManager.default.contents(atPath: path + ".sqlcipherkit-encrypting").map {
                        $0.range(of: Data("READER-MARKER".utf8)) == nil } == true, "\(label): a plaintext work file")
        }
        let summary = try stopReaders(reader, stop: stop, answer: answer)
        record.notes = "refused while the pool is open (\(Int(duration * 1000)) ms); still plaintext ×\(record.rounds); readers: "
            + summary
        record.record()

        // With the pool closed, the next call is not blocked by anything the kills left.
        try Database.encryptInPlace(path: path, key: "readers")
        let db = try Database(path: path, key: "readers")
        #expect(try await countRows(db) == Self.rows)
        await db.close()
        #expect(filesContain([path], "READER-MARKER").isEmpty)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.contains("sqlcipherkit-encrypting") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test func encryptedCopyKilledWhileAnotherProcessReadsThroughAPool() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("shared.db"), stop = dir.path("stop")
        try await makePlaintext(path)
        let (reader, answer) = try startReaders(path, stop: stop)
        let duration = try helperRunDuration(["encrypt-copy", path, dir.path("timing.db"), "pass:copy"])
        let scenario = "SIGKILL during encrypt(plaintextAt:to:), another process reading"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Crash safety", scenario: scenario)
        var outcomes: [String: Int] = [:]
        // Up to 1.3 times a run, so that some kills come after the copy took its name; past the
        // planned rounds, more until one kill has left no target.
        var rounds = KillRounds(planned: Reliability.count(short: 6, long: 40), duration: duration, reach: 1.3)
        while let span = rounds.next(landed: outcomes["absent", default: 0] > 0) {
            let round = rounds.round
            let name = "copy\(round).db", target = dir.path(name)
            let delay = Double.random(in: span, using: &random)
            let label = "round \(round), delay \(delay)"
            let (lines, killed) = try KillableChild.killed(["encrypt-copy", path, target, "pass:copy"], after: delay)
            record.rounds += 1
            if killed { record.faults += 1 }
            // The source is untouched and the readers go on (checked at the end).
            let source = try Database(unencryptedPath: path)
            #expect(try await countRows(source) == Self.rows, "\(label)")
            await source.close()
            // The target is absent or whole; nothing beside it holds plaintext.
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.contains(name) }
            #expect(filesContain(names.map { dir.path($0) }, "READER-MARKER").isEmpty, "\(label): plaintext in \(names)")
            if FileManager.default.fileExists(atPath: target) {
                outcomes["whole", default: 0] += 1
                let copy = try Database(path: target, key: "copy", readOnly: true)
                #expect(try await countRows(copy) == Self.rows, "\(label)")
                #expect(try await copy.verifyIntegrity().isOK, "\(label)")
                await copy.close()
            } else {
                outcomes["absent", default: 0] += 1
                #expect(!lines.contains("done"), "\(label): reported done, but there is no target")
                // The next copy to the same target succeeds and removes the dead one's hidden file.
                try Database.encrypt(plaintextAt: path, to: target, key: "copy")
                let after = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".\(name).") }
                #expect(after.isEmpty, "\(label): left \(after)")
            }
        }
        let summary = try stopReaders(reader, stop: stop, answer: answer)
        record.notes = "one run takes \(Int(duration * 1000)) ms; target "
            + outcomes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") + "; readers: " + summary
        record.record()
        #expect(outcomes["absent", default: 0] > 0, "no kill landed during the copy: \(outcomes)")
    }
}
