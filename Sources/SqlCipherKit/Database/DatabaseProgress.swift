import Foundation
import Synchronization

/// How far a long operation has come: ``completed`` units of work out of ``total``.
///
/// ```swift
/// try await db.export(to: "/data/copy.db", key: "another passphrase") { progress in
///     print("\(progress.completed) of \(progress.total) \(progress.unit)")   // keep this quick
/// }
/// ```
///
/// The operations that take one (``Database/encrypt(plaintextAt:to:key:cipher:progress:)``,
/// ``Database/encryptInPlace(path:key:cipher:keepBackup:progress:)``,
/// ``Database/export(to:key:cipher:progress:)``,
/// ``Database/exportDecrypted(to:progress:)``,
/// ``Database/upgradeFromSqlCipher3(path:key:progress:)``,
/// ``Database/rekey(_:progress:)`` and ``Database/verifyIntegrity(progress:)``) call the
/// closure first with `completed == 0`, then soon after the work starts and at most about every
/// 50 ms while it goes on, and last
/// with `completed == total` when the work succeeded. The values never go down, and `total` does
/// not change during one operation. An operation that fails or is cancelled stops reporting
/// without reaching the total.
///
/// The closure runs on the thread doing the work, inside SQLite's progress callback or between
/// statements, while the database is busy: it must return quickly (store the value, or hand it
/// to another task) and must not call the database.
public struct DatabaseProgress: Sendable, Equatable {
    /// What ``DatabaseProgress/completed`` and ``DatabaseProgress/total`` count.
    public enum Unit: String, Sendable, Equatable {
        /// Database pages of the source. For copies, the pages written so far are estimated from
        /// the bytes the new file holds, which lag behind SQLite's page cache: the count can stay
        /// low and then jump to the total at the end.
        case pages
        /// Checks of ``Database/verifyIntegrity(progress:)`` (SQLCipher's page HMAC check,
        /// SQLite's `integrity_check`): SQLite does not say how far one check has come.
        case checks
    }

    /// Units done so far, from 0 to ``total``.
    public let completed: Int64
    /// Units of the whole operation.
    public let total: Int64
    /// What is counted.
    public let unit: Unit

    /// Makes a report; `completed` is clamped to `0...total`. The package makes every report a
    /// progress handler receives.
    package init(completed: Int64, total: Int64, unit: Unit) {
        self.total = max(0, total)
        self.completed = min(max(0, completed), self.total)
        self.unit = unit
    }

    /// The share done, from 0 to 1 (1 for an empty total).
    public var fraction: Double { total == 0 ? 1 : Double(completed) / Double(total) }
}

/// Sends one operation's reports to the caller's closure, never going down, and reaching the
/// total only through ``finish()``.
final class ProgressReporter: Sendable {
    let total: Int64
    let unit: DatabaseProgress.Unit
    private let callback: @Sendable (DatabaseProgress) -> Void
    /// The last value reported; -1 before the first.
    private let last = Mutex<Int64>(-1)

    /// A reporter, or nil when nobody listens (then nothing is sampled either).
    init?(total: Int64, unit: DatabaseProgress.Unit, _ callback: (@Sendable (DatabaseProgress) -> Void)?) {
        guard let callback else { return nil }
        self.total = max(0, total)
        self.unit = unit
        self.callback = callback
    }

    /// Reports `completed`, held below the total (only ``finish()`` reaches it) and never below
    /// the last value. Repeated values are not reported again.
    func report(_ completed: Int64) {
        let value = min(max(0, completed), max(0, total - 1))
        let send = last.withCheckedLock { last -> Bool in
            guard value > last else { return false }
            last = value
            return true
        }
        if send { callback(DatabaseProgress(completed: value, total: total, unit: unit)) }
    }

    /// The first report: nothing done yet.
    func start() { report(0) }

    /// The last report: everything done.
    func finish() {
        let send = last.withCheckedLock { last -> Bool in
            guard last < total else { return false }
            last = total
            return true
        }
        if send { callback(DatabaseProgress(completed: total, total: total, unit: unit)) }
    }
}
