import Foundation
import SqlCipherKit
import Testing

/// Tampering: bytes flipped in each region of an encrypted file (page 1's salt, header area and
/// body, a middle page, the last page, the per-page IV/HMAC reserve) and of its `-wal`. Reads must
/// fail with a typed error or return exactly what was committed, never other data; on 4.x,
/// ``Database/verifyIntegrity()`` must name the damaged page.
@Suite struct TamperingTests {
    /// A part of the main file, as byte ranges computed from the page size and reserve.
    struct Region: Sendable {
        let name: String
        /// The page the bytes belong to (1-based).
        let page: Int
        let range: Range<Int>
    }

    static let rowCount = 160
    static func body(_ id: Int) -> String { "tamper row \(id) " + String(repeating: "abcdefghij", count: 28) }

    @Test func flippedBytesInTheMainFileNeverReadAsOtherData() async throws {
        let scenario = "flipped bytes in the main file"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Tampering", scenario: scenario)
        var tally = Tally()
        let dir = TemporaryDirectory()
        let pristine = dir.path("pristine.db")
        let key = rawKey(9)
        try await Self.makeDatabase(pristine, key: key, mode: .rollback)
        let expected = Self.expectedRows()

        // The layout: SQLCipher's defaults of the loaded version (4.x: 4096-byte pages, 80 reserved
        // bytes = 16 IV + 64 HMAC-SHA512; 3.x: 1024, 48 = 16 IV + 20 HMAC-SHA1 + 12 padding).
        let pageSize = isSQLCipher4() ? 4096 : 1024
        let reserve = isSQLCipher4() ? 80 : 48
        let size = try #require(FileManager.default.contents(atPath: pristine)).count
        let pages = size / pageSize
        #expect(size % pageSize == 0 && pages >= 8, "unexpected file layout: \(size) bytes")
        let middle = pages / 2
        func body(_ page: Int) -> Range<Int> { ((page - 1) * pageSize + (page == 1 ? 100 : 0))..<(page * pageSize - reserve) }
        func reserveArea(_ page: Int) -> Range<Int> { (page * pageSize - reserve)..<(page * pageSize) }
        let regions = [
            Region(name: "page 1 salt", page: 1, range: 0..<16),
            Region(name: "page 1 header area", page: 1, range: 16..<100),
            Region(name: "page 1 body", page: 1, range: body(1)),
            Region(name: "page 1 IV/HMAC reserve", page: 1, range: reserveArea(1)),
            Region(name: "middle page body", page: middle, range: body(middle)),
            Region(name: "middle page IV/HMAC reserve", page: middle, range: reserveArea(middle)),
            Region(name: "last page body", page: pages, range: body(pages)),
            Region(name: "last page IV/HMAC reserve", page: pages, range: reserveArea(pages)),
        ]
        let perRegion = Reliability.count(short: 4, long: 60)
        for region in regions {
            for _ in 0..<perRegion {
                let offset = Int.random(in: region.range, using: &random)
                let mask = UInt8.random(in: 1...255, using: &random)
                let path = dir.path("tampered-\(record.rounds).db")
                try FileManager.default.copyItem(atPath: pristine, toPath: path)
                try flip(path, at: offset, mask: mask)
                record.rounds += 1
                record.faults += 1
                let outcome = await Self.readEverything(path, key: key, mode: .rollback, expected: [expected],
                                                        damagedPage: region.page)
                var label = "\(region.name): \(outcome.label)"
                // SQLCipher 3 rounds its 36 bytes of IV and HMAC-SHA1 up to 48: the last 12 bytes of
                // each page are not authenticated, so a flip there changes nothing that is read.
                if !isSQLCipher4(), region.name.hasSuffix("reserve"), offset % pageSize >= pageSize - 12 {
                    label += " (unauthenticated padding)"
                }
                tally.add(label)
                if let violation = outcome.violation {
                    Issue.record("\(region.name), byte \(offset) ^ \(mask): \(violation)")
                    record.failures += 1
                }
            }
        }
        record.notes = tally.summary
        record.record()
    }

    @Test func flippedBytesInTheWALNeverReadAsOtherData() async throws {
        let scenario = "flipped bytes in the -wal"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Tampering", scenario: scenario)
        var tally = Tally()
        let dir = TemporaryDirectory()
        let key = rawKey(10)
        let live = dir.path("live.db")
        let pristine = dir.path("pristine.db")

        // The base content in the main file, then three transactions kept in the -wal only; the
        // files are copied while the connection is open (closing would checkpoint them away).
        try await Self.makeDatabase(live, key: key, mode: .wal)
        let db = try Database(path: live, rawKey: key)
        _ = try await db.query("PRAGMA wal_autocheckpoint = 0")
        var states = [Self.expectedRows()]
        for step in 1...3 {
            try await db.transaction { conn in
                try conn.execute("UPDATE t SET body = ? WHERE id % 7 = ?", "wal update \(step) " + String(repeating: "z", count: 200), step)
                try conn.execute("INSERT INTO t(id, body) VALUES (?, ?)", 10_000 + step, "wal insert \(step)")
            }
            states.append(try await Self.rows(db))
        }
        try FileManager.default.copyItem(atPath: live, toPath: pristine)
        try FileManager.default.copyItem(atPath: live + "-wal", toPath: pristine + "-wal")
        await db.close()

        let pageSize = isSQLCipher4() ? 4096 : 1024
        let walSize = try #require(FileManager.default.contents(atPath: pristine + "-wal")).count
        let frameSize = 24 + pageSize
        let frames = (walSize - 32) / frameSize
        #expect(frames >= 3, "the -wal holds \(frames) frames")
        func frame(_ index: Int) -> Int { 32 + index * frameSize }
        let regions: [(String, Range<Int>)] = [
            ("WAL header", 0..<32),
            ("first frame header", frame(0)..<(frame(0) + 24)),
            ("first frame page", (frame(0) + 24)..<frame(1)),
            ("middle frame page", (frame(frames / 2) + 24)..<frame(frames / 2 + 1)),
            ("last frame header", frame(frames - 1)..<(frame(frames - 1) + 24)),
            ("last frame page", (frame(frames - 1) + 24)..<frame(frames)),
        ]
        let perRegion = Reliability.count(short: 4, long: 60)
        for (name, range) in regions {
            for _ in 0..<perRegion {
                let offset = Int.random(in: range, using: &random)
                let mask = UInt8.random(in: 1...255, using: &random)
                let path = dir.path("tampered-\(record.rounds).db")
                try FileManager.default.copyItem(atPath: pristine, toPath: path)
                try FileManager.default.copyItem(atPath: pristine + "-wal", toPath: path + "-wal")
                try flip(path + "-wal", at: offset, mask: mask)
                record.rounds += 1
                record.faults += 1
                // A frame whose checksum no longer matches ends the log for SQLite: the reader sees
                // the last transaction committed before it, which is a state that was committed.
                let outcome = await Self.readEverything(path, key: key, mode: .wal, expected: states, damagedPage: nil)
                tally.add("\(name): \(outcome.label)")
                if let violation = outcome.violation {
                    Issue.record("\(name), byte \(offset) ^ \(mask): \(violation)")
                    record.failures += 1
                }
            }
        }
        record.notes = tally.summary
        record.record()
    }

    // MARK: Reading a tampered file

    struct Outcome {
        var label: String
        var violation: String?
    }

    /// Opens `path` and reads every row two ways (table scan and index scan), then runs the
    /// integrity checks. The rows must equal one of `expected` unless a typed error stops the read.
    static func readEverything(_ path: String, key: Data, mode: JournalMode, expected: [[String]],
                               damagedPage: Int?) async -> Outcome {
        let db: Database
        do {
            db = try Database(path: path, rawKey: key, journalMode: mode)
        } catch {
            return typedOrViolation(error, stage: "open")
        }
        // Closed before the next round copies its files: a late close would checkpoint them.
        let outcome = await readEverything(db, expected: expected, damagedPage: damagedPage)
        await db.close()
        return outcome
    }

    private static func readEverything(_ db: Database, expected: [[String]], damagedPage: Int?) async -> Outcome {
        var stage = "scan"
        do {
            let scanned = try await rows(db)
            stage = "index scan"
            let indexed = try await db.query("SELECT id, body FROM t INDEXED BY t_body ORDER BY body, id")
                .map { "\($0.get("id", as: Int.self) ?? -1):\($0.get("body", as: String.self) ?? "<null>")" }
            guard let state = expected.firstIndex(of: scanned) else {
                return Outcome(label: "WRONG DATA", violation: "the rows read are none of the committed states")
            }
            guard indexed.sorted() == scanned.sorted() else {
                return Outcome(label: "WRONG DATA", violation: "the index and the table disagree")
            }
            stage = "integrity"
            let problems = try await integrityProblems(db)
            var label = expected.count > 1 ? "read committed state \(state) of \(expected.count - 1)" : "read correctly"
            if !problems.isEmpty {
                label += ", verifyIntegrity reports it"
                if isSQLCipher4(), let page = damagedPage, !problems.contains(where: { $0.contains("page \(page)") }) {
                    return Outcome(label: label, violation: "verifyIntegrity does not name page \(page): \(problems)")
                }
            }
            return Outcome(label: label)
        } catch {
            var outcome = typedOrViolation(error, stage: stage)
            guard outcome.violation == nil else { return outcome }
            // The read failed: on 4.x verifyIntegrity must name the damaged page.
            if isSQLCipher4(), let page = damagedPage {
                do {
                    let problems = try await integrityProblems(db)
                    if problems.contains(where: { $0.contains("page \(page)") }) {
                        outcome.label += ", verifyIntegrity names page \(page)"
                    } else {
                        outcome.violation = "verifyIntegrity does not name page \(page): \(problems)"
                    }
                } catch {
                    outcome.violation = "verifyIntegrity threw \(error)"
                }
            }
            return outcome
        }
    }

    private static func typedOrViolation(_ error: any Error, stage: String) -> Outcome {
        guard let typed = error as? SqlCipherError else {
            return Outcome(label: "untyped error", violation: "\(stage): an untyped error \(error)")
        }
        switch typed {
        case .keyFailed, .notADatabase, .sqlite(11, _, _, _), .sqlite(26, _, _, _):
            return Outcome(label: "\(stage): \(errorKind(typed))")
        case .cannotOpen(_, let reason) where stage == "open" && reason.contains("-wal beside it is not a -wal file SQLite wrote"):
            // A flipped byte of the WAL's magic number: the opening refuses the file before SQLite
            // would overwrite and delete it (ForeignCompanion), and reads nothing.
            return Outcome(label: "\(stage): \(errorKind(typed)) (damaged WAL header)")
        default:
            // Still typed, but not one of the errors damage should give: worth a look.
            return Outcome(label: "\(stage): \(errorKind(typed))", violation: "\(stage): unexpected error \(typed)")
        }
    }

    static func makeDatabase(_ path: String, key: Data, mode: JournalMode) async throws {
        let db = try Database(path: path, rawKey: key, journalMode: mode)
        try await db.transaction { conn in
            try conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            try conn.execute("CREATE INDEX t_body ON t(body)")
            for id in 1...rowCount { try conn.execute("INSERT INTO t(id, body) VALUES (?, ?)", id, body(id)) }
        }
        await db.close()
    }

    static func expectedRows() -> [String] { (1...rowCount).map { "\($0):\(body($0))" } }

    static func rows(_ db: Database) async throws -> [String] {
        try await db.query("SELECT id, body FROM t ORDER BY id")
            .map { "\($0.get("id", as: Int.self) ?? -1):\($0.get("body", as: String.self) ?? "<null>")" }
    }
}

/// XORs one byte of a file with `mask`.
func flip(_ path: String, at offset: Int, mask: UInt8) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64(offset))
    guard let byte = try handle.read(upToCount: 1)?.first else { throw ReliabilityViolation("no byte at \(offset)") }
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: [byte ^ mask])
}
