import Foundation

/// A Swift type that can be stored in and read from a database column.
///
/// SqlCipherKit provides conformances for `Int` and the fixed-width integers, `Double`, `Float`,
/// `Bool`, `String`, `Data`, `Date`, `UUID`, `URL`, ``DatabaseValue`` and `Optional` of any of them.
/// Conform your own types to store them in one column:
///
/// ```swift
/// struct Cents: DatabaseValueConvertible {
///     var value: Int64
///     var databaseValue: DatabaseValue { .integer(value) }
///     static func fromDatabaseValue(_ v: DatabaseValue) -> Cents? {
///         if case .integer(let i) = v { return Cents(value: i) }
///         return nil
///     }
/// }
/// ```
///
/// Reading follows SQLite's storage classes strictly, documented per type in <doc:RawSQL>:
/// a conversion that would lose information (an integer out of range, a real with a fraction read
/// as an integer, text read as a number) returns `nil` rather than a guess.
public protocol DatabaseValueConvertible: Sendable {
    /// The value to bind to a statement parameter.
    var databaseValue: DatabaseValue { get }
    /// The Swift value for a stored value, or `nil` when it cannot be represented.
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?
}

// MARK: Integers

extension DatabaseValueConvertible where Self: FixedWidthInteger {
    /// Integers within `Int64` are stored as `integer`; larger unsigned values as their decimal text,
    /// so no value is ever truncated.
    @inlinable public var databaseValue: DatabaseValue {
        if let exact = Int64(exactly: self) { return .integer(exact) }
        return .text(String(self))
    }

    /// Reads `integer` values in range, `real` values that are whole numbers in range, and the
    /// decimal text that ``databaseValue`` writes for values beyond `Int64` (for 64-bit unsigned
    /// types only, in that exact form: digits alone, no sign, no leading zero). Anything out of
    /// range, fractional, infinite or NaN is `nil`, never truncated or clamped.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        switch value {
        case .integer(let int): return Self(exactly: int)
        case .real(let double): return Self(exactly: double)
        case .text(let text):
            guard Self.bitWidth == 64 && !Self.isSigned, let parsed = Self(text, radix: 10),
                  String(parsed) == text else { return nil }
            return parsed
        default: return nil
        }
    }
}

extension Int: DatabaseValueConvertible {}
extension Int8: DatabaseValueConvertible {}
extension Int16: DatabaseValueConvertible {}
extension Int32: DatabaseValueConvertible {}
extension Int64: DatabaseValueConvertible {}
extension UInt: DatabaseValueConvertible {}
extension UInt8: DatabaseValueConvertible {}
extension UInt16: DatabaseValueConvertible {}
extension UInt32: DatabaseValueConvertible {}
extension UInt64: DatabaseValueConvertible {}

// MARK: Floating point

extension Double: DatabaseValueConvertible {
    /// Stored as `real`. NaN is stored as NULL, as SQLite itself does.
    @inlinable public var databaseValue: DatabaseValue { isNaN ? .null : .real(self) }

    /// Reads `real` values, and `integer` values that a `Double` holds exactly (every integer up
    /// to 2^53 in magnitude, and larger ones that are multiples of a power of two). Any other
    /// integer is `nil` rather than rounded.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .real(let double): return double
        case .integer(let int): return Double(exactly: int)
        default: return nil
        }
    }
}

extension Float: DatabaseValueConvertible {
    /// Stored as `real`.
    public var databaseValue: DatabaseValue { Double(self).databaseValue }

    /// Reads `real` and `integer` values, rounded to the nearest `Float`. A finite value beyond
    /// `Float`'s range, which would become an infinity, and a non-zero value too small for a
    /// `Float`, which would become zero, are `nil`; infinities stay infinities.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Float? {
        let double: Double
        switch value {
        case .real(let real): double = real
        case .integer(let int): return Float(int)  // every Int64 is within Float's range
        default: return nil
        }
        let float = Float(double)
        if float.isInfinite && double.isFinite { return nil }
        if float == 0 && double != 0 { return nil }
        return float
    }
}

// MARK: Bool

extension Bool: DatabaseValueConvertible {
    /// Stored as the integer 1 or 0.
    @inlinable public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }

    /// Reads integers (zero is false, anything else true) and reals the same way.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        switch value {
        case .integer(let int): return int != 0
        case .real(let double): return double != 0
        default: return nil
        }
    }
}

// MARK: Text and bytes

extension String: DatabaseValueConvertible {
    /// Stored as `text`, byte for byte (embedded NUL characters are kept).
    @inlinable public var databaseValue: DatabaseValue { .text(self) }

    /// Reads `text` only.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        if case .text(let text) = value { return text }
        return nil
    }
}

extension Data: DatabaseValueConvertible {
    /// Stored as `blob`.
    public var databaseValue: DatabaseValue { .blob(self) }

    /// Reads `blob`, and `text` as its UTF-8 bytes. Text whose bytes are not valid UTF-8 is
    /// read as a `blob` of exactly those bytes (see ``DatabaseValue``), so it reads back unchanged.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        switch value {
        case .blob(let data): return data
        case .text(let text): return Data(text.utf8)
        default: return nil
        }
    }
}

extension UUID: DatabaseValueConvertible {
    /// Stored as `text` in the canonical upper-case form, e.g. `E621E1F8-C36C-495A-93FC-0C247A3E6E5F`.
    public var databaseValue: DatabaseValue { .text(uuidString) }

    /// Reads text in either case, and 16-byte blobs.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> UUID? {
        switch value {
        case .text(let text): return UUID(uuidString: text)
        case .blob(let data) where data.count == 16:
            let b = [UInt8](data)
            return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                               b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        default: return nil
        }
    }
}

extension Date: DatabaseValueConvertible {
    /// Stored as UTF `text` in the form `YYYY-MM-DD HH:MM:SS.SSS`, which sorts in time order and
    /// which SQLite's date functions read (https://sqlite.org/lang_datefunc.html).
    public var databaseValue: DatabaseValue { .text(DatabaseDateFormat.string(from: self)) }

    /// Reads that text form (also with a `T` separator, without seconds or fraction, with a `Z` or
    /// `±HH:MM` offset, or a date alone), and `integer`/`real` values as seconds since 1970.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Date? {
        switch value {
        case .text(let text): return DatabaseDateFormat.date(from: text)
        case .integer(let int): return Date(timeIntervalSince1970: TimeInterval(int))
        case .real(let double): return Date(timeIntervalSince1970: double)
        default: return nil
        }
    }
}

extension URL: DatabaseValueConvertible {
    /// Stored as `text`, the URL's `absoluteString` (`https://example.com/a?b=c`): what another
    /// SQLite tool shows and what a predicate such as `col("link") == url` compares. (Through
    /// `Codable` alone a URL property became a JSON string, `"https:\/\/example.com\/a?b=c"`,
    /// which no comparison with the address matched.) A URL relative to a base is stored absolute.
    public var databaseValue: DatabaseValue { .text(absoluteString) }

    /// Reads that text, and the JSON string form that entities wrote before, so rows saved then
    /// still read back.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> URL? {
        guard case .text(let text) = value else { return nil }
        if text.hasPrefix("\""), let string = try? JSONDecoder().decode(String.self, from: Data(text.utf8)) {
            return URL(string: string)
        }
        return URL(string: text)
    }
}

// MARK: Raw values

extension DatabaseValueConvertible where Self: RawRepresentable, Self.RawValue: DatabaseValueConvertible {
    /// The raw value's column value: an enum with a raw value is stored as its raw value, as the
    /// `Codable` mapping of ``Entity`` stores it. Declare the conformance and nothing else:
    ///
    /// ```swift
    /// enum Status: String, Codable, DatabaseValueConvertible { case draft, published }
    /// let status = row.get("status", as: Status.self)
    /// ```
    @inlinable public var databaseValue: DatabaseValue { rawValue.databaseValue }

    /// The case whose raw value the column holds; nil for a value no case has.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        RawValue.fromDatabaseValue(value).flatMap(Self.init(rawValue:))
    }
}

// MARK: Optional

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// `nil` is stored as NULL.
    @inlinable public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }

    /// NULL reads as `.some(nil)`; other values as the wrapped type reads them.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.fromDatabaseValue(value).map { .some($0) }
    }
}

/// Whether `value` is a NaN `Double` or `Float`, also inside optionals: the values SQLite cannot
/// store (it binds NaN as NULL).
func isNotANumber<V>(_ value: V) -> Bool {
    if let double = value as? Double { return double.isNaN }
    if let float = value as? Float { return float.isNaN }
    return false
}
