import CSqlCipherBenchFloor
import Foundation
import SqlCipherKit

/// The benchmark table and its SQL: an integer primary key and nine integer columns.
enum BenchSchema {
    static let table = "bench"
    /// The ten column names, in table order.
    static let columns = ["id"] + (1...9).map { "c\($0)" }

    static func createSQL(_ table: String = table) -> String {
        "CREATE TABLE \(table)(id INTEGER PRIMARY KEY, "
            + columns.dropFirst().map { "\($0) INTEGER NOT NULL" }.joined(separator: ", ") + ")"
    }

    static let insertSQL = "INSERT INTO \(table)(\(columns.joined(separator: ", "))) VALUES ("
        + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"

    static let selectSQL = "SELECT \(columns.joined(separator: ", ")) FROM \(table)"

    static let deleteSQL = "DELETE FROM \(table)"

    /// The value of `column` (1...9) of row `id`; column 0 is the id. The same arithmetic as the C
    /// floor's scbf_value, so both sides write the same numbers.
    @inline(__always)
    static func value(_ id: Int, _ column: Int, salt: Int) -> Int {
        column == 0 ? id : id &* column &+ salt
    }

    /// The checksum of rows `1...count` as both sides compute it (a wrapping sum of every value).
    static func expectedChecksum(rows count: Int, salt: Int = 0) -> Int64 {
        var sum: Int64 = 0
        guard count > 0 else { return sum }
        for id in 1...count {
            for column in 0..<columns.count {
                sum &+= Int64(scbf_value(Int64(id), Int32(column), Int64(salt)))
            }
        }
        return sum
    }

    /// How the C floor upserts on this library: one `INSERT ... ON CONFLICT DO UPDATE` on SQLite
    /// 3.24+, else an UPDATE followed by an INSERT when it changed nothing.
    static func upsertPlan(for library: SqlCipherLibrary) -> UpsertPlan {
        let assignments = columns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        if library.sqliteVersionNumber >= 3_024_000 {
            return UpsertPlan(sql: insertSQL + " ON CONFLICT(id) DO UPDATE SET " + assignments, insertSQL: nil)
        }
        let sets = columns.dropFirst().enumerated().map { "\($1) = ?\($0 + 2)" }.joined(separator: ", ")
        return UpsertPlan(sql: "UPDATE \(table) SET \(sets) WHERE id = ?1", insertSQL: insertSQL)
    }
}

/// The C floor's upsert: `sql` alone, or an UPDATE (`sql`) and the INSERT for rows it missed.
struct UpsertPlan {
    let sql: String
    let insertSQL: String?
}

/// The keys the benchmark opens its files with.
enum BenchKey {
    case passphrase
    case rawKey
    case none

    static let passphraseText = "correct horse battery staple"
    /// A fixed 32-byte raw key.
    static let rawKeyBytes = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })

    /// The bytes the C floor hands to sqlite3_key: the passphrase, `x'<64 hex>'` for the raw key
    /// (SQLCipher's raw-key form, https://www.zetetic.net/sqlcipher/sqlcipher-api/#key), or
    /// nothing for a plaintext file.
    var floorBytes: Data {
        switch self {
        case .passphrase:
            return Data(Self.passphraseText.utf8)
        case .rawKey:
            return Self.rawKeyLiteral(Self.rawKeyBytes)
        case .none:
            return Data()
        }
    }

    /// SQLCipher's raw-key form of `key`, `x'<64 hex>'`, as the C floor hands it to SQLCipher.
    static func rawKeyLiteral(_ key: Data) -> Data {
        Data("x'\(key.map { String(format: "%02x", $0) }.joined())'".utf8)
    }

    /// Opens a SqlCipherKit database with this key.
    func openDatabase(_ path: String) throws -> Database {
        switch self {
        case .passphrase: return try Database(path: path, key: Self.passphraseText)
        case .rawKey: return try Database(path: path, rawKey: Self.rawKeyBytes)
        case .none: return try Database(unencryptedPath: path)
        }
    }
}

/// Encrypted (with the raw key, so that setting up costs no key derivation) or plaintext.
enum Encryption: String, CaseIterable {
    case encrypted
    case unencrypted

    var key: BenchKey { self == .encrypted ? .rawKey : .none }
}
