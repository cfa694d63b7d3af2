import Foundation

/// One row of a query result.
///
/// ```swift
/// let rows = try await db.query("SELECT id, name FROM products WHERE price < ?", 50.0)
/// for row in rows {
///     let name = row.get("name", as: String.self)          // String?: nil when NULL or not text
///     let id: Int = try row.decode("id", as: Int.self)       // throws with the reason
/// }
/// ```
///
/// Column names match exactly first, then without regard to ASCII case, as SQLite identifiers do.
/// The rows of one result share a single buffer, so a result of many rows costs one allocation
/// for its numbers (and one more for its text and blobs).
public struct Row: Sendable, CustomStringConvertible {
    // The accessors below are @inlinable so that a caller's `row.get(3, as: Int.self)` compiles
    // to a direct read and an inlined conversion instead of an unspecialized generic call into
    // this module: on a 200,000-row fetch that call was most of the wrapper's cost.
    @usableFromInline let storage: RowStorage
    @usableFromInline let offset: Int

    init(storage: RowStorage, offset: Int) {
        self.storage = storage
        self.offset = offset
    }

    /// The column names, in result order.
    public var columnNames: [String] { storage.columns.names }

    /// The number of columns.
    @inlinable public var count: Int { storage.columns.names.count }

    /// The values, in column order.
    public var values: ArraySlice<DatabaseValue> {
        ArraySlice((offset..<(offset + count)).map { storage.value(at: $0) })
    }

    /// The value at `index`. Traps when `index` is out of range, like an array; use
    /// ``get(_:as:)-(Int,_)`` for a checked read.
    @inlinable public subscript(index: Int) -> DatabaseValue {
        precondition(index >= 0 && index < count, "column index \(index) out of range 0..<\(count)")
        return storage.value(at: offset + index)
    }

    /// The value of the named column, or `nil` when the row has no such column.
    @inlinable public subscript(name: String) -> DatabaseValue? {
        guard let index = storage.columns.index(of: name) else { return nil }
        return storage.value(at: offset + index)
    }

    /// The named column converted to `T`, or `nil` when the column is missing, NULL, or not
    /// convertible (see ``DatabaseValueConvertible``).
    @inlinable public func get<T: DatabaseValueConvertible>(_ name: String, as type: T.Type = T.self) -> T? {
        guard let value = self[name] else { return nil }
        return T.fromDatabaseValue(value)
    }

    /// The column at `index` converted to `T`, or `nil` when the index is out of range, the value
    /// is NULL, or not convertible.
    @inlinable public func get<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type = T.self) -> T? {
        guard index >= 0 && index < count else { return nil }
        return T.fromDatabaseValue(storage.value(at: offset + index))
    }

    /// The named column converted to `T`.
    ///
    /// Ask for an optional type (`String?.self`) to accept NULL.
    /// - Throws: ``SqlCipherError/columnNotFound(name:available:)`` or
    ///   ``SqlCipherError/typeMismatch(column:stored:expected:)``.
    public func decode<T: DatabaseValueConvertible>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let index = storage.columns.index(of: name) else {
            throw SqlCipherError.columnNotFound(name: name, available: columnNames)
        }
        return try decode(index, as: type)
    }

    /// The column at `index` converted to `T`.
    /// - Throws: ``SqlCipherError/columnIndexOutOfRange(index:count:)`` or
    ///   ``SqlCipherError/typeMismatch(column:stored:expected:)``.
    public func decode<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard index >= 0 && index < count else {
            throw SqlCipherError.columnIndexOutOfRange(index: index, count: count)
        }
        let value = storage.value(at: offset + index)
        guard let converted = T.fromDatabaseValue(value) else {
            throw SqlCipherError.typeMismatch(
                column: columnNames[index], stored: value.kindDescription, expected: String(describing: T.self))
        }
        return converted
    }

    /// The row as `name: value` pairs.
    public var description: String {
        "[" + zip(columnNames, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }
}

/// Column names of a result, and how a name finds its column.
///
/// A name matches byte for byte first, then without regard to ASCII case, as SQLite compares
/// identifiers (https://sqlite.org/lang_keywords.html); other letters must match exactly, so `É`
/// does not find `é`. The first column of a name wins when a result repeats it.
///
/// Results are usually narrow and names short, so a lookup packs the name's first eight UTF-8
/// bytes into an integer and compares it with each column's: cheaper than hashing the name, and
/// much cheaper than `String ==`, which compares by Unicode canonical equivalence. Only longer
/// names compare their remaining bytes. Wide results also get a dictionary.
@usableFromInline
final class RowColumns: Sendable {
    @usableFromInline let names: [String]
    /// Each name as bytes, with its first eight bytes packed for the comparison.
    private let keys: [NameKey]
    /// ASCII-folded name bytes to the indices of the columns that fold to them, in column order;
    /// only for results wider than ``linearScanLimit``.
    private let folded: [[UInt8]: [Int]]?

    /// The width up to which a lookup compares names one by one.
    static let linearScanLimit = 16

    init(names: [String]) {
        self.names = names
        keys = names.map { name in
            var name = name
            return name.withUTF8 { NameKey($0) }
        }
        guard names.count > Self.linearScanLimit else {
            folded = nil
            return
        }
        var folded: [[UInt8]: [Int]] = [:]
        for (index, key) in keys.enumerated() {
            folded[key.asciiLowercased, default: []].append(index)
        }
        self.folded = folded
    }

    /// The index of the column called `name`, or nil.
    @usableFromInline
    func index(of name: String) -> Int? {
        var name = name
        return name.withUTF8 { bytes in
            let wanted = NameKey.Probe(bytes)
            if let folded {
                guard let candidates = folded[NameKey(bytes).asciiLowercased] else { return nil }
                return candidates.first { keys[$0].matches(wanted) } ?? candidates.first
            }
            for index in keys.indices where keys[index].matches(wanted) {
                return index
            }
            for index in keys.indices where keys[index].matchesIgnoringASCIICase(bytes) {
                return index
            }
            return nil
        }
    }
}

/// A column name's bytes, with the first eight packed into an integer.
private struct NameKey: Sendable {
    let prefix: UInt64
    /// The byte count, kept beside the prefix so that a mismatch is found without reading `bytes`.
    let count: Int
    let bytes: [UInt8]

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        prefix = Self.pack(bytes)
        count = bytes.count
        self.bytes = Array(bytes)
    }

    /// A name looked up: its packed prefix, computed once per lookup, and its bytes.
    struct Probe {
        let prefix: UInt64
        let bytes: UnsafeBufferPointer<UInt8>

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            prefix = NameKey.pack(bytes)
            self.bytes = bytes
        }
    }

    /// The first eight bytes, little-endian, zero-padded.
    static func pack(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var packed: UInt64 = 0
        for offset in 0..<min(8, bytes.count) {
            packed |= UInt64(bytes[offset]) << (8 * UInt64(offset))
        }
        return packed
    }

    /// Whether the name is `probe`'s bytes exactly.
    @inline(__always)
    func matches(_ probe: Probe) -> Bool {
        guard prefix == probe.prefix, count == probe.bytes.count else { return false }
        return count <= 8 || bytes.withUnsafeBufferPointer { own in
            memcmp(own.baseAddress! + 8, probe.bytes.baseAddress! + 8, own.count - 8) == 0
        }
    }

    /// Whether the name is `other` once A-Z are taken as a-z.
    func matchesIgnoringASCIICase(_ other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == other.count else { return false }
        for (x, y) in zip(bytes, other) where x != y {
            guard x | 0x20 == y | 0x20, x | 0x20 &- 97 < 26 else { return false }
        }
        return true
    }

    /// The bytes with A-Z turned into a-z.
    var asciiLowercased: [UInt8] {
        bytes.map { $0 &- 65 < 26 ? $0 | 0x20 : $0 }
    }
}
