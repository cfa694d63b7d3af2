import Foundation
import Testing
@testable import SqlCipherKit

/// SIGKILL in the middle of `encryptInPlace` and of `rekey`, at seeded random moments: the file
/// must open afterwards with one of the two keys (or as the plaintext original) and hold all data.
@Suite(.serialized) struct CrashTests {
    /// Starts the helper, waits `delay` seconds after its first output line, kills it with SIGKILL
    /// and returns what it printed.
    func runAndKill(_ arguments: [String], after delay: TimeInterval) throws -> (output: String, killed: Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: productPath("sqlcipherkit-test-helper"))
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try launch(process)
        let reader = output.fileHandleForReading
        // Wait for the first line ("start" / "opened"): the process is past its own start-up.
        var seen = Data()
        while !seen.contains(UInt8(ascii: "\n")) {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        // A kill moment left to chance (the test's point): every moment must leave a file that opens intact.
        Thread.sleep(forTimeInterval: delay)
        let killed = process.isRunning
        if killed { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        seen.append(reader.readDataToEndOfFile())
        return (String(decoding: seen, as: UTF8.self), killed && process.terminationReason == .uncaughtSignal)
    }

    /// How long one uninterrupted run takes after its first line (`mark`), to spread the kill
    /// moments, which ``runAndKill(_:after:)`` also counts from that line: timed from the spawn,
    /// the start-up made most moments fall after the work (a run under load saw all 8 miss).
    func measure(_ arguments: [String], mark: String) throws -> TimeInterval {
        try helperRunDuration(arguments, mark: mark)
    }

    /// Kills `rekey-loop` (`arguments(rounds)`, which prints `opened` first) at seeded moments,
    /// round after round (``KillRounds``: eight, up to 1.1 runs), and checks after
    /// each that the file opens with exactly one of `keys` and every row, then what `check` adds.
    /// Some kill must have landed while the rekeys ran.
    func killRekeyLoop(_ arguments: (Int) -> [String], seed: UInt64, path: String, keys: (Data, Data), rows: Int,
                       check: (Int) throws -> Void = { _ in }) async throws {
        let duration = try measure(arguments(2), mark: "opened")
        var random = SeededGenerator(seed: seed)
        var killedWhileRunning = 0
        var rounds = KillRounds(planned: 8, duration: duration, reach: 1.1)
        while let span = rounds.next(landed: killedWhileRunning > 0) {
            let round = rounds.round
            let delay = Double.random(in: span, using: &random)
            let (_, killed) = try runAndKill(arguments(1000), after: delay)
            if killed { killedWhileRunning += 1 }
            try await expectOneKeyAndEveryRow(path, keyA: keys.0, keyB: keys.1, rows: rows, "round \(round), delay \(delay)")
            try check(round)
        }
        #expect(killedWhileRunning > 0)
    }

    @Test(arguments: [JournalMode.rollback, .wal])
    func killDuringEncryptInPlace(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let rows = 3000
        func makeSource(_ path: String) async throws {
            try FileReplacement.removeDatabaseFiles(path)
            let db = try Database(unencryptedPath: path, journalMode: mode)
            try await fill(db, rows: rows, size: 300)
            await db.close()
        }
        let key = "pass:crash-test"
        let timing = dir.path("timing.db")
        try await makeSource(timing)
        let duration = try measure(["encrypt-in-place", timing, key], mark: "start")
        var random = SeededGenerator(seed: 0x5EED_0001 &+ UInt64(mode == .wal ? 1 : 0))
        var outcomes: [String: Int] = [:]
        var killedWhileRunning = 0
        var rounds = KillRounds(planned: 8, duration: duration, reach: 1.1)
        while let span = rounds.next(landed: killedWhileRunning > 0) {
            let round = rounds.round
            let path = dir.path("round\(round).db")
            try await makeSource(path)
            let delay = Double.random(in: span, using: &random)
            let (output, killed) = try runAndKill(["encrypt-in-place", path, key], after: delay)
            if killed { killedWhileRunning += 1 }
            // Whatever the moment: the file opens, as plaintext or with the key, with every row.
            let db: Database
            if let plain = try? Database(unencryptedPath: path) {
                db = plain
                outcomes["plaintext", default: 0] += 1
                #expect(!output.contains("done"), "round \(round): reported done but is still plaintext")
            } else {
                db = try Database(path: path, key: "crash-test")
                outcomes["encrypted", default: 0] += 1
                #expect(filesContain([path], "xxxxxxxxxxxxxxxxxxxx").isEmpty)
            }
            #expect(try await countRows(db) == rows, "round \(round), delay \(delay), killed \(killed)")
            #expect(try await db.verifyIntegrity().isOK)
            await db.close()
            // A later call finishes the job from whatever state was left.
            if !db.isEncrypted {
                try Database.encryptInPlace(path: path, key: "crash-test")
                #expect(try await countRows(try Database(path: path, key: "crash-test")) == rows)
            }
            #expect(!FileManager.default.fileExists(atPath: path + ".sqlcipherkit-encrypting") || !db.isEncrypted)
        }
        #expect(outcomes.values.reduce(0, +) == rounds.count)
        // The kills did land while the conversion ran (not all after it had finished).
        #expect(killedWhileRunning > 0, "outcomes \(outcomes)")
    }

    @Test(arguments: [JournalMode.rollback, .wal])
    func killDuringRekey(mode: JournalMode) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rekey.db")
        let rows = 4000
        let keyA = rawKey(11), keyB = rawKey(22)
        let db = try Database(path: path, rawKey: keyA, journalMode: mode)
        try await fill(db, rows: rows, size: 300)
        await db.close()
        let arguments = { (rounds: Int) in ["rekey-loop", path, "raw:" + hex(keyA), "raw:" + hex(keyB), "\(rounds)"] }
        // Two rekeys (A->B->A) leave the key as it was; their duration spreads the kill moments.
        try await killRekeyLoop(arguments, seed: 0x5EED_0002 &+ UInt64(mode == .wal ? 1 : 0), path: path,
                                keys: (keyA, keyB), rows: rows)
    }

    /// SIGKILL while a `DatabasePool` rekeys (readers reading between rekeys, closed and reopened
    /// by each): the file opens with exactly one of the two keys and holds every row, intact.
    @Test func killDuringPoolRekey() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("pool-rekey.db")
        let rows = 4000
        let keyA = rawKey(41), keyB = rawKey(42)
        let db = try Database(path: path, rawKey: keyA)
        try await fill(db, rows: rows, size: 300)
        await db.close()
        let arguments = { (rounds: Int) in ["rekey-loop", path, "raw:" + hex(keyA), "raw:" + hex(keyB), "\(rounds)", "pool"] }
        try await killRekeyLoop(arguments, seed: 0x5EED_0004, path: path, keys: (keyA, keyB), rows: rows)
    }

    /// SIGKILL while a connection that SQL switched to `journal_mode = OFF` or `MEMORY` changes its
    /// key, with a 10-page cache so that rewritten pages reach the file early: without a journal
    /// on disk a killed rewrite would leave pages under both keys. The rekey lends such a
    /// connection a journal on disk, so the file always opens with one key and every row.
    @Test(arguments: ["OFF", "MEMORY"])
    func killDuringRekeyOfAConnectionWithoutADiskJournal(journal: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("rekey-\(journal).db")
        let rows = 4000
        let keyA = rawKey(31), keyB = rawKey(32)
        let db = try Database(path: path, rawKey: keyA, journalMode: .rollback)
        try await fill(db, rows: rows, size: 300)
        await db.close()
        let arguments = { (rounds: Int) in
            ["rekey-loop", path, "raw:" + hex(keyA), "raw:" + hex(keyB), "\(rounds)", journal]
        }
        try await killRekeyLoop(arguments, seed: 0x5EED_0003 &+ UInt64(journal == "OFF" ? 0 : 1), path: path,
                                keys: (keyA, keyB), rows: rows) { round in
            // A kill before the journal's first sync leaves one whose magic is still zero: the
            // database was not written yet, and SQLite ignores such a journal (it is hot only when
            // its first byte is not zero). A hot one would have been played back by the open above.
            let journal = FileManager.default.contents(atPath: path + "-journal")
            #expect(journal.map { $0.first ?? 0 == 0 } ?? true, "round \(round): a hot journal is left")
        }
    }

    /// After a kill during a rekey from `keyA` to `keyB` (the helper always starts from key A): the
    /// file opens with one of the two keys and holds every row, intact. It is left under key A,
    /// closed, for the next round.
    private func expectOneKeyAndEveryRow(_ path: String, keyA: Data, keyB: Data, rows: Int, _ round: String,
                                         sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let opened: Database
        var current = keyA
        if let withA = try? Database(path: path, rawKey: keyA) {
            opened = withA
        } else {
            opened = try Database(path: path, rawKey: keyB)
            current = keyB
        }
        #expect(try await countRows(opened) == rows, "\(round)", sourceLocation: sourceLocation)
        #expect(try await opened.verifyIntegrity().isOK, "\(round)", sourceLocation: sourceLocation)
        if current == keyB { try await opened.rekey(rawKey: keyA) }
        await opened.close()
    }
}
