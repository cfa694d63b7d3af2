import Foundation

/// Converts one Swift value to and from one column value, following the entity mapping:
/// ``DatabaseValueConvertible`` types by their own conversion, single-value `Codable` types (such
/// as enums with a raw value) by the value they encode, and every other `Codable` as JSON text.
enum ColumnValueCoding {
    /// Signals that a value needs a keyed or unkeyed container, so it is stored as JSON.
    struct NeedsJSON: Error {}

    /// Signals that a stored value cannot be read as the requested type.
    struct Mismatch: Error {}

    /// Signals a NaN `Double` or `Float`, which SQLite cannot store: it binds NaN as NULL, which
    /// a non-optional property cannot read back (every fetch of the row would fail) and an
    /// optional one reads back as nil, another value. An entity refuses it on save.
    struct NotANumber: Error, CustomStringConvertible {
        var description: String {
            "the value is NaN, which SQLite cannot store (it would become NULL and read back as nil, or fail to "
                + "decode). Store a finite number, or nil in an optional property"
        }
    }

    // MARK: Encoding

    static func encode<T: Encodable>(_ value: T) throws -> DatabaseValue {
        if let convertible = value as? any DatabaseValueConvertible {
            let stored = convertible.databaseValue
            if case .null = stored, isNotANumber(value) { throw NotANumber() }
            return stored
        }
        let probe = ColumnValueEncoder()
        try value.encode(to: probe)
        if probe.needsJSON { return .text(try jsonText(value)) }
        guard let result = probe.value else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: [], debugDescription: "\(T.self) encoded no value"))
        }
        return result
    }

    static func jsonText<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(DatabaseDateFormat.string(from: date))
        }
        let data = UnorderedCollections.canonical(try encoder.encode(value), of: value)
        if holdsBareNaN(data) { throw DecimalNotANumber() }
        return String(decoding: data, as: UTF8.self)
    }

    /// Signals a `Decimal` NaN in a value stored as JSON. `JSONEncoder` writes it as a bare `NaN`,
    /// which is not JSON: the save would succeed and every later fetch of the row would fail to
    /// decode it (a `Double` NaN is refused by the encoder itself).
    struct DecimalNotANumber: Error, CustomStringConvertible {
        var description: String {
            "the value holds a Decimal NaN, which JSON has no form for: it would be written as NaN and could never be "
                + "decoded again. Store a number, or nil in an optional property"
        }
    }

    /// Whether `json` holds a `NaN` token outside its strings. `JSONEncoder`'s output has no other
    /// bare `N`: outside strings there are only punctuation, numbers, `true`, `false` and `null`.
    static func holdsBareNaN(_ json: Data) -> Bool {
        json.withUnsafeBytes { bytes in
            var inString = false
            var escaped = false
            for byte in bytes {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == UInt8(ascii: "N") {
                    return true
                }
            }
            return false
        }
    }

    // MARK: Decoding

    static func decode<T: Decodable>(_ type: T.Type, from value: DatabaseValue) throws -> T {
        if let convertible = type as? any DatabaseValueConvertible.Type {
            // Unwrap before casting: a nil result cast to an optional `T` would succeed as nil.
            guard let converted = convertible.fromDatabaseValue(value), let result = converted as? T else {
                throw Mismatch()
            }
            return result
        }
        do {
            return try T(from: ColumnValueDecoder(value: value))
        } catch is NeedsJSON {
            let data: Data
            switch value {
            case .text(let text): data = Data(text.utf8)
            case .blob(let blob): data = blob
            default: throw Mismatch()
            }
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .custom { decoder in
                let container = try decoder.singleValueContainer()
                let text = try container.decode(String.self)
                guard let date = DatabaseDateFormat.date(from: text) else {
                    throw DecodingError.dataCorruptedError(
                        in: container, debugDescription: "\(text) is not a date in YYYY-MM-DD HH:MM:SS.SSS form")
                }
                return date
            }
            return try decoder.decode(T.self, from: data)
        }
    }
}

// MARK: Single-value probe encoder

/// Captures the single value a type encodes, or notes that it asked for a container.
final class ColumnValueEncoder: Encoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    var value: DatabaseValue?
    var needsJSON = false

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        needsJSON = true
        return KeyedEncodingContainer(DiscardingKeyedEncodingContainer<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        needsJSON = true
        return DiscardingUnkeyedEncodingContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        Single(encoder: self)
    }

    struct Single: SingleValueEncodingContainer {
        let encoder: ColumnValueEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws { encoder.value = .null }

        mutating func encode<T: Encodable>(_ value: T) throws {
            encoder.value = try ColumnValueCoding.encode(value)
        }
    }
}

/// A container that accepts and drops everything: the probe only needs to know it was asked for.
struct DiscardingKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(DiscardingKeyedEncodingContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        DiscardingUnkeyedEncodingContainer()
    }
    mutating func superEncoder() -> any Encoder { ColumnValueEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { ColumnValueEncoder() }
}

/// The unkeyed counterpart of ``DiscardingKeyedEncodingContainer``.
struct DiscardingUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count = 0
    mutating func encodeNil() throws { count += 1 }
    mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(DiscardingKeyedEncodingContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingUnkeyedEncodingContainer() }
    mutating func superEncoder() -> any Encoder { ColumnValueEncoder() }
}

// MARK: Single-value decoder

/// Decodes a type from one column value through a single-value container; a request for a keyed
/// or unkeyed container means the value is stored as JSON.
struct ColumnValueDecoder: Decoder {
    let value: DatabaseValue
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw ColumnValueCoding.NeedsJSON()
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ColumnValueCoding.NeedsJSON()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        Single(value: value)
    }

    struct Single: SingleValueDecodingContainer {
        let value: DatabaseValue
        var codingPath: [any CodingKey] { [] }

        func decodeNil() -> Bool { value.isNull }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try ColumnValueCoding.decode(type, from: value)
        }
    }
}
