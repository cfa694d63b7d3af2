/// A keyed container kept by an ``EntityEncoder`` between entities.
final class EncodingContainerHolder<Key: CodingKey> {
    let container: KeyedEncodingContainer<Key>

    init(_ container: KeyedEncodingContainer<Key>) {
        self.container = container
    }
}

/// Encodes an entity into its columns, in coding-key order, with the entity mapping of
/// ``ColumnValueCoding``. Optionals that are nil become NULL (rather than being left out, as
/// `encodeIfPresent` would by default), so saving a nil property clears the column.
final class EntityEncoder: Encoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    let entityName: String
    /// The entity's columns: names, values, the layout kept from the previous entity and its
    /// version, and the first unsupported use of the coder. The same buffer a ``RowEncodable``
    /// entity writes into (``EntityWriter`` passes it to `encode(to:)`), so that both paths keep
    /// one layout by one rule.
    ///
    /// Touched several times per column from the containers: the run-time exclusivity checks of a
    /// class property would cost more than the column itself, and the encoder is used by one
    /// encode at a time, never re-entered.
    @exclusivity(unchecked)
    var columns = EntityColumns()
    /// The keyed container of the last `Key` type asked for, reused for every entity of a batch:
    /// its state is this encoder's, so a new one per entity would only cost metadata lookups and
    /// an allocation. It refers back to the encoder, so ``finish()`` breaks the cycle.
    private var cachedContainer: AnyObject?
    private var cachedKeyType: ObjectIdentifier?

    init(entityName: String) {
        self.entityName = entityName
    }

    /// The columns and values of `entity`.
    /// - Throws: ``SqlCipherError/encodingFailed(entity:reason:)``.
    static func encode<T: Entity>(_ entity: T) throws -> (columns: [String], values: [DatabaseValue]) {
        let encoder = EntityEncoder(entityName: String(describing: T.self))
        defer { encoder.finish() }
        try encoder.encode(entity)
        return (encoder.columns.names, encoder.columns.values)
    }

    /// Encodes `entity` into ``columns``, reusing this encoder's buffers: a batch
    /// encodes every entity with one encoder, and entities of one type nearly always encode the
    /// same keys in the same order, so each key costs one comparison with the previous layout.
    /// - Throws: ``SqlCipherError/encodingFailed(entity:reason:)``.
    func encode<T: Entity>(_ entity: T) throws {
        // The previous entity's values stay until overwritten, to keep the buffer without a
        // generic removeAll per entity.
        columns.startEntity()
        do {
            try entity.encode(to: self)
        } catch let error as SqlCipherError {
            throw error
        } catch {
            throw SqlCipherError.encodingFailed(entity: entityName, reason: String(describing: error))
        }
        if let problem = columns.finishEntity() {
            throw SqlCipherError.encodingFailed(entity: entityName, reason: problem)
        }
    }

    @inline(__always)
    func put(_ key: String, _ value: DatabaseValue) {
        columns.put(key, value)
    }

    func putEncoded<T: Encodable>(_ key: String, _ value: T) throws {
        do {
            put(key, try ColumnValueCoding.encode(value))
        } catch {
            throw SqlCipherError.encodingFailed(
                entity: entityName, reason: "column \"\(key)\" (\(T.self)): \(error)")
        }
    }

    /// Stores a `Double`, refusing NaN: SQLite would store NULL, which a non-optional property
    /// cannot read back and an optional one reads back as nil (ColumnValueCoding.NotANumber).
    @inline(__always)
    func putDouble(_ key: String, _ value: Double) throws {
        guard !value.isNaN else {
            throw SqlCipherError.encodingFailed(
                entity: entityName, reason: "column \"\(key)\" (Double): \(ColumnValueCoding.NotANumber())")
        }
        put(key, .real(value))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if cachedKeyType == ObjectIdentifier(Key.self), let cachedContainer {
            // Stored below by the same `Key`, so the holder's type is known.
            return unsafeDowncast(cachedContainer, to: EncodingContainerHolder<Key>.self).container
        }
        let container = KeyedEncodingContainer(Container<Key>(encoder: self))
        cachedContainer = EncodingContainerHolder(container)
        cachedKeyType = ObjectIdentifier(Key.self)
        return container
    }

    /// Drops the reused container, which refers back to this encoder: call when done encoding.
    func finish() {
        cachedContainer = nil
        cachedKeyType = nil
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        reject("its encode(to:) asks for an unkeyed container; an entity must encode with a keyed container")
        return DiscardingUnkeyedEncodingContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        reject("its encode(to:) asks for a single-value container; an entity must encode with a keyed container")
        return ColumnValueEncoder().singleValueContainer()
    }

    func reject(_ reason: String) {
        if columns.problem == nil { columns.problem = reason }
    }

    struct Container<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: EntityEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { encoder.put(key.stringValue, .null) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { encoder.put(key.stringValue, value.databaseValue) }
        mutating func encode(_ value: String, forKey key: Key) throws { encoder.put(key.stringValue, .text(value)) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try encoder.putDouble(key.stringValue, value) }
        mutating func encode(_ value: Int, forKey key: Key) throws { encoder.put(key.stringValue, .integer(Int64(value))) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { encoder.put(key.stringValue, .integer(value)) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try encoder.putEncoded(key.stringValue, value)
        }

        // The protocol's default `encodeIfPresent` skips nil; an entity stores NULL instead.
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
            encoder.put(key.stringValue, value?.databaseValue ?? .null)
        }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
            encoder.put(key.stringValue, value.map { .text($0) } ?? .null)
        }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
            if let value { try encoder.putDouble(key.stringValue, value) } else { encoder.put(key.stringValue, .null) }
        }
        mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try put(value, key) }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
            encoder.put(key.stringValue, value.map { .integer(Int64($0)) } ?? .null)
        }
        mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try put(value, key) }
        mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try put(value, key) }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try put(value, key) }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
            encoder.put(key.stringValue, value.map { .integer($0) } ?? .null)
        }
        mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try put(value, key) }
        mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try put(value, key) }
        mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try put(value, key) }
        mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try put(value, key) }
        mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try put(value, key) }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try put(value, key) }

        private func put<T: Encodable>(_ value: T?, _ key: Key) throws {
            if let value {
                // A double optional holding .some(nil): SQL has one NULL, so it would read back
                // as nil (.none), a different value. Refused rather than silently changed.
                if let inner = value as? any OptionalValue, inner.isNone {
                    throw SqlCipherError.encodingFailed(
                        entity: encoder.entityName,
                        reason: "column \"\(key.stringValue)\" (\(T?.self)) holds .some(nil), which a column cannot tell "
                            + "apart from nil: both are NULL and read back as nil. Use a single optional, or an enum "
                            + "that says what the inner nil means")
                }
                try encoder.putEncoded(key.stringValue, value)
            } else {
                encoder.put(key.stringValue, .null)
            }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            encoder.reject("column \"\(key.stringValue)\" uses a nested container; give the property a Codable type "
                + "of its own (stored as JSON) instead")
            return KeyedEncodingContainer(DiscardingKeyedEncodingContainer<NestedKey>())
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.reject("column \"\(key.stringValue)\" uses a nested container; give the property a Codable type "
                + "of its own (stored as JSON) instead")
            return DiscardingUnkeyedEncodingContainer()
        }

        mutating func superEncoder() -> any Encoder {
            encoder.reject("its encode(to:) uses superEncoder(), which has no column to go to")
            return ColumnValueEncoder()
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            encoder.reject("its encode(to:) uses superEncoder(forKey:), which has no column to go to")
            return ColumnValueEncoder()
        }
    }
}

/// An `Optional` of any wrapped type, so that a generic value can be asked whether it is nil.
protocol OptionalValue {
    /// Whether this is `.none`.
    var isNone: Bool { get }
}

extension Optional: OptionalValue {
    var isNone: Bool { self == nil }
}
