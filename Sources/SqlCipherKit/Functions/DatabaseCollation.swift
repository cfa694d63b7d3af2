import Foundation

/// A collation written in Swift: an order of text that `ORDER BY`, comparisons and indexes can use
/// with `COLLATE name`. Add it to a database with ``Database/add(collation:)``.
///
/// ```swift
/// let localized = DatabaseCollation("localized") { $0.localizedStandardCompare($1) }
/// try await db.add(collation: localized)
/// try await db.execute("CREATE INDEX people_by_name ON people(name COLLATE localized)")
/// let rows = try await db.query("SELECT name FROM people ORDER BY name COLLATE localized")
/// ```
///
/// - The order must be total and must never change for a given file: an index sorted with it is
///   read assuming the same order, and a collation that changes (or is missing) makes such an index
///   return wrong rows (`PRAGMA integrity_check` then reports it; `REINDEX name` rebuilds it).
/// - Text that is not valid UTF-8 (SQLite does not check what other programs store) is compared
///   after replacing its invalid bytes with U+FFFD; two texts that then compare equal are ordered by
///   their bytes, so the order stays total.
/// - The closure runs on the connection's thread while SQLite sorts or searches, and must not
///   wait for the database.
/// - `BINARY`, `NOCASE`, `RTRIM` and any other collation that SQLite already defines cannot be
///   replaced (``SqlCipherError/registrationFailed(name:reason:)``).
public struct DatabaseCollation: Sendable {
    /// The name SQL uses after `COLLATE` (compared without regard to ASCII case).
    public let name: String
    let compare: @Sendable (String, String) -> ComparisonResult

    /// A collation that orders texts as `compare` does.
    /// - Parameters:
    ///   - name: 1 to 255 bytes of UTF-8 without NUL.
    ///   - compare: Returns `.orderedAscending` when the first text sorts first.
    public init(_ name: String, _ compare: @escaping @Sendable (String, String) -> ComparisonResult) {
        self.name = name
        self.compare = compare
    }

    /// The collation's identity in SQLite.
    var key: String { FunctionKey.fold(name) }
}
