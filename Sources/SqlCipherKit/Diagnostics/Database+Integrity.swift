import Foundation

/// What ``Database/verifyIntegrity(progress:)`` checked and what it found.
///
/// ```swift
/// let report = try await db.verifyIntegrity()
/// if !report.isOK { print(report.problems) }
/// if !report.checksRun.contains(.cipherHMAC) { print(report.skipped) }  // e.g. on SQLCipher 3.4.1
/// ```
///
/// A check that did not run is listed in ``skipped`` with the reason, never counted as passed.
public struct IntegrityReport: Sendable, Equatable {
    /// One kind of check.
    public enum Check: String, Sendable, Hashable, CaseIterable {
        /// SQLCipher's page HMAC check, `PRAGMA cipher_integrity_check` (SQLCipher 4.2+): every
        /// page of the main file is authenticated with the key
        /// (https://www.zetetic.net/sqlcipher/sqlcipher-api/#cipher_integrity_check).
        case cipherHMAC = "cipher_integrity_check"
        /// SQLite's structural check, `PRAGMA integrity_check`
        /// (https://sqlite.org/pragma.html#pragma_integrity_check).
        case sqliteIntegrity = "integrity_check"
    }

    /// A check that did not run, and why.
    public struct Skipped: Sendable, Equatable {
        /// The check.
        public let check: Check
        /// Why it did not run, e.g. that the loaded SQLCipher has no such check.
        public let reason: String
    }

    /// The checks that ran to completion or reported problems.
    public let checksRun: [Check]
    /// The checks that did not run.
    public let skipped: [Skipped]
    /// Every problem found, one line each, prefixed with the check that found it.
    public let problems: [String]
    /// Remarks that are not problems but limit what was checked or explain the problems, e.g. WAL
    /// frames that could not be checkpointed before the HMAC check because another connection was
    /// reading, or a page 1 that stopped decrypting because the key was most likely changed.
    public let notes: [String]

    /// Whether no check that ran found a problem. Look at ``checksRun`` to know what that covers.
    public var isOK: Bool { problems.isEmpty }

    /// Whether every page's HMAC was checked and none failed.
    public var hmacVerified: Bool { checksRun.contains(.cipherHMAC) && !problems.contains { $0.hasPrefix(Check.cipherHMAC.rawValue) } }
}

extension IntegrityReport.Check: CustomStringConvertible {
    /// What the check is and the pragma that runs it, e.g. "SQLCipher's page HMAC check (PRAGMA
    /// cipher_integrity_check)": `print(report.checksRun)` then reads as a list of checks, where the
    /// synthesized form would print only the case names.
    public var description: String {
        switch self {
        case .cipherHMAC: return "SQLCipher's page HMAC check (PRAGMA \(rawValue))"
        case .sqliteIntegrity: return "SQLite's structural check (PRAGMA \(rawValue))"
        }
    }
}

extension IntegrityReport.Skipped: CustomStringConvertible {
    /// The check and why it did not run, as one line.
    public var description: String { "\(check) did not run: \(reason)" }
}

extension DatabaseAccess {
    /// Checks the database: SQLCipher's page HMACs where the loaded version can
    /// (`cipher_integrity_check`, SQLCipher 4.2+, after a WAL checkpoint, since it reads the main file
    /// only), then SQLite's `integrity_check`.
    ///
    /// ```swift
    /// let report = try await db.verifyIntegrity()
    /// #expect(report.isOK)
    /// ```
    ///
    /// On SQLCipher 3.4.1 the HMAC check does not exist; the report lists it under
    /// ``IntegrityReport/skipped`` rather than claiming it passed. (On 3.4.1 the pragma is silently
    /// ignored and returns no rows, which is also what a clean file gives on 4.x, so it is not run.)
    /// A damaged page that stops a check is reported as a problem, not thrown. When the structural
    /// check cannot read page 1 of an encrypted file that this connection opened with a working
    /// key, a note says that another connection most likely changed the key (rekey) since: the HMAC
    /// lines then fail for every page, which is the key change rather than damage.
    ///
    /// `progress` counts checks (``DatabaseProgress/Unit/checks``): 0 of the checks that will run,
    /// then one more as each ends. SQLite does not report how far inside one check it is, so on a
    /// large file the value stays put for as long as a check takes. Cancelling the calling task
    /// interrupts the running check and throws `CancellationError`; nothing is written.
    ///
    /// - Parameter progress: Called with the checks done (see ``DatabaseProgress``); it must return quickly.
    /// - Throws: ``SqlCipherError/databaseClosed``; SQLite errors other than damage; `CancellationError`.
    public func verifyIntegrity(progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws -> IntegrityReport {
        try await _withConnection(.write) { conn in
            try conn.core.asInternal { try integrityReport(on: conn.core, progress: progress) }
        }
    }

    /// The note of a report whose structural check could not read page 1 on an encrypted
    /// connection, which opened the file with a key that worked: the HMAC lines before it then
    /// read like damage of every page, where the usual cause is a rekey by another connection.
    static var pageOneStoppedDecryptingNote: String {
        "page 1 no longer decrypts with the key this connection opened the file with. If another connection "
            + "(in this process or another) changed the key (rekey) since, that is what the problems above show, not "
            + "damage: close this connection, open the file with the key it has now and check again. If no key was "
            + "changed, the file was replaced or damaged: run sqlcipher-doctor verify on it"
    }

    private func integrityReport(on core: SQLiteConnection,
                                 progress: (@Sendable (DatabaseProgress) -> Void)?) throws -> IntegrityReport {
        var run: [IntegrityReport.Check] = []
        var skipped: [IntegrityReport.Skipped] = []
        var problems: [String] = []
        var notes: [String] = []

        if !isEncrypted {
            skipped.append(.init(check: .cipherHMAC, reason: "the database is not encrypted, so its pages carry no HMAC"))
        } else if path == ":memory:" {
            skipped.append(.init(check: .cipherHMAC, reason: "an in-memory database has no encrypted pages"))
        } else if cipherSettings.usesHMAC == false {
            skipped.append(.init(
                check: .cipherHMAC,
                reason: "the database was opened with CipherSettings(usesHMAC: false), so its pages carry no HMAC and a "
                    + "changed byte cannot be told from data; export(to:key:cipher:) writes a copy whose pages have one"))
        } else if !library.cipherVersionIsAtLeast(4, 2) {
            skipped.append(.init(
                check: .cipherHMAC,
                reason: "SQLCipher \(library.cipherVersion) has no cipher_integrity_check (it needs SQLCipher 4.2.0 "
                    + "or later); page HMACs are still checked whenever a page is read"))
        }
        let reporter = ProgressReporter(total: skipped.isEmpty ? 2 : 1, unit: .checks, progress)
        reporter?.start()
        // An interrupt stops a check with SQLITE_INTERRUPT: that is the cancellation, not a problem.
        let gate = core.interruptGate
        if skipped.isEmpty {
            if journalMode == .wal && !core.isInTransaction {
                let (busy, frames, done) = try core.checkpoint("TRUNCATE")
                if busy {
                    notes.append("the WAL could not be checkpointed (another connection is using the file): "
                        + "\(max(0, frames - done)) of its \(max(0, frames)) frames were not HMAC-checked")
                }
            } else if journalMode == .wal {
                notes.append("a transaction is open, so the WAL was not checkpointed: pages still in it were not HMAC-checked")
            }
            do {
                let rows = try core.query("PRAGMA cipher_integrity_check")
                problems += rows.map { "\(IntegrityReport.Check.cipherHMAC.rawValue): " + ($0.get(0, as: String.self) ?? $0.description) }
            } catch SqlCipherError.sqlite(let code, _, let message, _) {
                if gate.isCancellingCurrentCall { throw CancellationError() }
                problems.append("\(IntegrityReport.Check.cipherHMAC.rawValue): stopped with SQLite error \(code): \(message)")
            }
            run.append(.cipherHMAC)
            // cipher_integrity_check runs no SQL inside, so the interrupt cannot stop it: stop here.
            if gate.isCancellingCurrentCall { throw CancellationError() }
            reporter?.report(1)
        }

        do {
            let rows = try core.query("PRAGMA integrity_check")
            let lines = rows.map { $0.get(0, as: String.self) ?? $0.description }
            if lines != ["ok"] {
                problems += lines.map { "\(IntegrityReport.Check.sqliteIntegrity.rawValue): " + $0 }
            }
        } catch SqlCipherError.sqlite(let code, _, let message, _) {
            if gate.isCancellingCurrentCall { throw CancellationError() }
            problems.append("\(IntegrityReport.Check.sqliteIntegrity.rawValue): stopped with SQLite error \(code): \(message)")
            if code == SQLiteConnection.sqliteNotADatabase, isEncrypted { notes.append(Self.pageOneStoppedDecryptingNote) }
        }
        run.append(.sqliteIntegrity)
        if gate.isCancellingCurrentCall { throw CancellationError() }
        reporter?.finish()
        return IntegrityReport(checksRun: run, skipped: skipped, problems: problems, notes: notes)
    }
}
