import Foundation
import Synchronization

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
    @inlinable public var count: Int { storage.width }

    /// The values, in column order.
    public var values: ArraySlice<DatabaseValue> {
        ArraySlice((offset..<(offset + count)).map { storage.value(at: $0) })
    }

    /// The value at `index`. Traps when `index` is out of range, like an array; use
    /// ``get(_:as:)-(Int,_)`` for a checked read.
    @inlinable public subscript(index: Int) -> DatabaseValue {
        precondition(index >= 0 && index < count, "column index \(index) out of range 0..<\(count)")
        return storage.value(unchecked: offset + index)
    }

    /// The value of the named column, or `nil` when the row has no such column.
    @inlinable public subscript(name: String) -> DatabaseValue? {
        guard let index = storage.columns.index(of: name) else { return nil }
        return storage.value(unchecked: offset + index)
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
        return T.fromDatabaseValue(storage.value(unchecked: offset + index))
    }

    /// The named column converted to `T`.
    ///
    /// Ask for an optional type (`String?.self`) to accept NULL.
    /// - Throws: ``SqlCipherError/columnNotFound(name:available:)`` or
    ///   ``SqlCipherError/typeMismatch(column:stored:expected:)``.
    ///
    /// Inlined into the caller, as ``get(_:as:)-(String,_)`` is: an `init(row:)` that reads every
    /// column this way converts each value without a generic call (``RowDecodable``).
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let index = storage.columns.index(of: name) else { throw missingColumn(name) }
        let value = storage.value(unchecked: offset + index)
        guard let converted = T.fromDatabaseValue(value) else { throw mismatch(index, value, T.self) }
        return converted
    }

    /// The column at `index` converted to `T`.
    /// - Throws: ``SqlCipherError/columnIndexOutOfRange(index:count:)`` or
    ///   ``SqlCipherError/typeMismatch(column:stored:expected:)``.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard index >= 0 && index < count else { throw indexOutOfRange(index) }
        let value = storage.value(unchecked: offset + index)
        guard let converted = T.fromDatabaseValue(value) else { throw mismatch(index, value, T.self) }
        return converted
    }

    // The errors of decode, out of line so that the inlined code stays small.

    @usableFromInline
    func missingColumn(_ name: String) -> SqlCipherError {
        .columnNotFound(name: name, available: columnNames)
    }

    @usableFromInline
    func indexOutOfRange(_ index: Int) -> SqlCipherError {
        .columnIndexOutOfRange(index: index, count: count)
    }

    @usableFromInline
    func mismatch(_ index: Int, _ value: DatabaseValue, _ type: Any.Type) -> SqlCipherError {
        .typeMismatch(column: columnNames[index], stored: value.kindDescription, expected: String(describing: type))
    }

    /// The row decoded as `T`: an ``Entity`` or any `Decodable` type whose properties are
    /// columns of the row. Columns `T` does not read are ignored.
    ///
    /// ```swift
    /// let rows = try await db.query("SELECT * FROM products WHERE price < ?", 10.0)
    /// let products = try rows.map { try $0.decode(Product.self) }
    /// ```
    /// - Throws: ``SqlCipherError/decodingFailed(entity:column:stored:expected:)`` naming the type
    ///   and the column that is missing or does not fit.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try RowDecoder.decode(type, rows: [self])[0]
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
/// Lookups are on the path of every `row.get("name")`, so they avoid what costs most there:
/// hashing the name, `String ==` (which compares by Unicode canonical equivalence), and touching
/// reference-counted arrays per column. Each name's first eight UTF-8 bytes are packed into an
/// integer; a lookup packs the wanted name once and compares integers, reading the remaining bytes
/// only for longer names. Rows are usually read column after column, so the column after the last
/// one found is tried first. Wide results use a dictionary of the ASCII-folded names instead.
///
/// Before all that, the guessed column is compared by the bits of the two `String` values
/// (``StringBits``), inlined in the caller: a name of up to 15 UTF-8 bytes is stored inside the
/// `String` itself, the same bits for the same bytes however the string was made, so a literal
/// such as `"price"` matches its column with one comparison of two words. Equal bits always mean
/// equal bytes (the same inline bytes, or the same immutable storage); unequal bits prove nothing
/// and fall through to the byte comparison.
@usableFromInline
final class RowColumns: Sendable {
    @usableFromInline let names: [String]
    /// Each name's ``StringBits``, for the identity test of ``index(of:)``.
    @usableFromInline let nameBits: [StringBits]
    /// Each name's first eight bytes, little-endian and zero-padded.
    private let prefixes: [UInt64]
    /// Each name's length in bytes.
    private let lengths: [Int]
    /// Each name's bytes, read only for names longer than eight bytes and for case folding.
    private let bytes: [[UInt8]]
    /// Whether no earlier column has exactly the same name: only those may answer a guess.
    @usableFromInline let isFirstOfName: [Bool]
    /// The column after the one last found, tried first. Shared by every reader of the result;
    /// a stale or racing value only costs a scan.
    @usableFromInline let guess = Atomic<Int>(0)
    /// ASCII-folded name bytes to the indices of the columns that fold to them, in column order;
    /// only for results wider than ``linearScanLimit``.
    private let folded: [[UInt8]: [Int]]?

    /// The width up to which a lookup compares names one by one.
    static let linearScanLimit = 16

    init(names: [String]) {
        self.names = names
        nameBits = names.map(StringBits.init)
        let bytes = names.map { Array($0.utf8) }
        self.bytes = bytes
        prefixes = bytes.map { name in name.withUnsafeBufferPointer { Self.pack($0) } }
        lengths = bytes.map(\.count)
        var seen = Set<[UInt8]>()
        isFirstOfName = bytes.map { seen.insert($0).inserted }
        guard names.count > Self.linearScanLimit else {
            folded = nil
            return
        }
        var folded: [[UInt8]: [Int]] = [:]
        for (index, name) in bytes.enumerated() {
            folded[Self.asciiLowercased(name), default: []].append(index)
        }
        self.folded = folded
    }

    /// The index of the column called `name`, or nil.
    @inlinable @inline(__always)
    func index(of name: String) -> Int? {
        // After the last column, the first: the next row is read from its start.
        var guessed = guess.load(ordering: .relaxed)
        if guessed >= nameBits.count { guessed = 0 }
        if StringBits.isAvailable && guessed < nameBits.count && nameBits[guessed] == StringBits(name)
            && isFirstOfName[guessed] {
            guess.store(guessed + 1, ordering: .relaxed)
            return guessed
        }
        return lookUp(name)
    }

    /// ``index(of:)`` past its identity test.
    @usableFromInline
    func lookUp(_ name: String) -> Int? {
        var name = name
        return name.withUTF8 { key in
            let prefix = Self.pack(key)
            let guessed = guess.load(ordering: .relaxed)
            if guessed < names.count && isFirstOfName[guessed] && matches(guessed, prefix, key) {
                guess.store(guessed + 1, ordering: .relaxed)
                return guessed
            }
            let found = lookUp(key, prefix: prefix)
            if let found { guess.store(found + 1, ordering: .relaxed) }
            return found
        }
    }

    private func lookUp(_ key: UnsafeBufferPointer<UInt8>, prefix: UInt64) -> Int? {
        if let folded {
            guard let candidates = folded[Self.asciiLowercased(key)] else { return nil }
            return candidates.first { matches($0, prefix, key) } ?? candidates.first
        }
        for index in names.indices where matches(index, prefix, key) {
            return index
        }
        for index in names.indices where Self.equalIgnoringASCIICase(bytes[index], key) {
            return index
        }
        return nil
    }

    /// Whether column `index` is named `key` exactly, `prefix` being `key` packed.
    @inline(__always)
    private func matches(_ index: Int, _ prefix: UInt64, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard prefixes[index] == prefix, lengths[index] == key.count else { return false }
        return key.count <= 8 || bytes[index].withUnsafeBufferPointer { own in
            memcmp(own.baseAddress! + 8, key.baseAddress! + 8, own.count - 8) == 0
        }
    }

    /// The first eight bytes, little-endian, zero-padded.
    private static func pack(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var packed: UInt64 = 0
        for offset in 0..<min(8, bytes.count) {
            packed |= UInt64(bytes[offset]) << (8 * UInt64(offset))
        }
        return packed
    }

    /// Whether `a` and `b` are the same bytes once A-Z are taken as a-z.
    private static func equalIgnoringASCIICase(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where x != y {
            guard x | 0x20 == y | 0x20, x | 0x20 &- 97 < 26 else { return false }
        }
        return true
    }

    /// The bytes with A-Z turned into a-z.
    private static func asciiLowercased<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        bytes.map { $0 &- 65 < 26 ? $0 | 0x20 : $0 }
    }
}

/// The two machine words of a `String` value, compared as an identity test: equal bits are the
/// same string (the same inline bytes of a small string, or the same storage object); unequal
/// bits may still be equal strings. Never dereferenced, so no retain is taken.
@usableFromInline
struct StringBits: Equatable, Sendable {
    @usableFromInline let first: UInt64
    @usableFromInline let second: UInt64

    /// Whether `String` is two 64-bit words here (every 64-bit platform Swift supports). Where it
    /// is not, the identity test is skipped, which only costs the slower lookup.
    @inlinable
    static var isAvailable: Bool { MemoryLayout<String>.size == 16 }

    @inlinable
    init(_ string: String) {
        if Self.isAvailable {
            (first, second) = unsafeBitCast(string, to: (UInt64, UInt64).self)
        } else {
            (first, second) = (0, 0)
        }
    }

    @inlinable
    static func == (lhs: StringBits, rhs: StringBits) -> Bool {
        lhs.first == rhs.first && lhs.second == rhs.second
    }
}
