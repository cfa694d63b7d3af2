import CSqlCipherBridge

/// State shared by the decoders of every row of one result: the column names, where the current
/// row's values are, and a guess of the next column's position.
///
/// Synthesized `init(from:)` reads keys in declaration order, which is usually the table's
/// column order, so each lookup first compares the key with the column after the previous one
/// (a cheap string comparison) and only then falls back to the name table built once per result.
///
/// A fetch decodes straight from the statement positioned on each row, so no intermediate buffer
/// of every value is built; live queries, which receive a finished result, decode from its
/// ``RowStorage``. Both read through ``value(at:)``, so they cannot disagree.
final class RowDecodingContext {
    let entityName: String
    let columns: RowColumns
    let names: [String]
    private var last = -1
    /// The statement positioned on the current row, when decoding while stepping.
    private let statement: Statement?
    /// ``statement`` without reference counting: read once per column, and kept alive by
    /// ``statement`` for as long as this context lives.
    private let statementRef: Unmanaged<Statement>?
    /// The keyed container of the last `Key` type asked for, reused for every row: its state is
    /// this context's, so a new one per row would only cost metadata lookups and an allocation.
    private var cachedContainer: AnyObject?
    private var cachedKeyType: ObjectIdentifier?
    /// The buffer and offset of the current row, when decoding a finished result.
    private var storage: RowStorage?
    private var offset = 0

    init(entityName: String, columns: RowColumns, statement: Statement? = nil) {
        self.entityName = entityName
        self.columns = columns
        self.names = columns.names
        self.statement = statement
        self.statementRef = statement.map { Unmanaged.passUnretained($0) }
    }

    /// Drops the reused container, which refers back to this context: call when the result is done.
    func finish() {
        cachedContainer = nil
        cachedKeyType = nil
    }

    /// The keyed container for `Key`, made on the first row and reused after.
    @inline(__always)
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        if cachedKeyType == ObjectIdentifier(Key.self), let cachedContainer {
            // Stored below by the same `Key`, so the holder's type is known.
            return unsafeDowncast(cachedContainer, to: ContainerHolder<Key>.self).container
        }
        let container = KeyedDecodingContainer(RowDecoder.Container<Key>(context: self))
        cachedContainer = ContainerHolder(container)
        cachedKeyType = ObjectIdentifier(Key.self)
        return container
    }

    /// Resets the position guess before the statement's next row.
    @inline(__always)
    func startRow() {
        last = -1
    }

    /// Moves to `row` of a finished result.
    @inline(__always)
    func startRow(_ row: Row) {
        last = -1
        if row.storage !== storage { storage = row.storage }
        offset = row.offset
    }

    /// The value of column `index` of the current row.
    @inline(__always)
    func value(at index: Int) -> DatabaseValue {
        if let statementRef { return statementRef._withUnsafeGuaranteedRef { $0.value(at: Int32(index)) } }
        // Row decoding hot path (once per decoded value): ``startRow(_:)`` set `storage` whenever
        // there is no statement to read from.
        return storage.unsafelyUnwrapped.value(at: offset + index)
    }

    /// Whether column `index` of the current row is NULL, without materializing text or blobs.
    @inline(__always)
    func isNull(at index: Int) -> Bool {
        if let statementRef {
            return statementRef._withUnsafeGuaranteedRef { scb_column_type($0.handle, Int32(index)) == 5 }
        }
        return storage.unsafelyUnwrapped.value(at: offset + index).isNull
    }

    /// The index of the column for `key`, or nil when the result has no such column.
    @inline(__always)
    func index(of key: String) -> Int? {
        // The column after the previous one first: comparing unequal strings costs more than
        // comparing equal ones, and the next column is the usual hit.
        let next = last + 1
        if next < names.count && names[next] == key {
            last = next
            return next
        }
        if last >= 0 && names[last] == key { return last }
        guard let found = columns.index(of: key) else { return nil }
        last = found
        return found
    }
}

/// A keyed container kept by a ``RowDecodingContext`` between rows.
final class ContainerHolder<Key: CodingKey> {
    let container: KeyedDecodingContainer<Key>

    init(_ container: KeyedDecodingContainer<Key>) {
        self.container = container
    }
}

/// Decodes an entity from one row, with the entity mapping of ``ColumnValueCoding``.
///
/// The static entry points below are where every decoding method of the package arrives; a type
/// that adopts ``RowDecodable`` is handed to ``RowDecodableReader`` there instead of being decoded.
struct RowDecoder: Decoder {
    let context: RowDecodingContext

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Every row of `rows` (one result) decoded as `T`.
    /// - Throws: ``SqlCipherError/decodingFailed(entity:column:stored:expected:)``.
    static func decode<T: Decodable>(_ type: T.Type, rows: [Row]) throws -> [T] {
        if let rowType = T.self as? any RowDecodable.Type {
            return try RowDecodableReader.decode(rowType, as: T.self, rows: rows)
        }
        guard let first = rows.first else { return [] }
        let context = RowDecodingContext(entityName: String(describing: T.self), columns: first.storage.columns)
        defer { context.finish() }
        var result: [T] = []
        result.reserveCapacity(rows.count)
        for row in rows {
            context.startRow(row)
            result.append(try decode(type, decoder: RowDecoder(context: context)))
        }
        return result
    }

    /// Steps `statement` to the end and decodes each row as `T` as it comes, reading the columns
    /// from the statement. The caller resets the statement.
    ///
    /// Column names are read after the first step, as ``Statement/fetchAll()`` does: a statement
    /// whose schema changed is prepared again inside the first step.
    /// - Throws: ``SqlCipherError/decodingFailed(entity:column:stored:expected:)`` and SQLite's errors.
    static func decode<T: Decodable>(_ type: T.Type, statement: Statement) throws -> [T] {
        if let rowType = T.self as? any RowDecodable.Type {
            return try RowDecodableReader.decode(rowType, as: T.self, statement: statement)
        }
        guard try statement.step() else { return [] }
        let context = RowDecodingContext(
            entityName: String(describing: T.self), columns: RowColumns(names: statement.columnNames()),
            statement: statement)
        defer { context.finish() }
        let decoder = RowDecoder(context: context)
        // The entities go to a buffer of our own and become an array once at the end: appending
        // to `[T]` in unspecialized generic code looks up the array's metadata on every row.
        var capacity = 64
        var count = 0
        var buffer = UnsafeMutablePointer<T>.allocate(capacity: capacity)
        defer {
            buffer.deinitialize(count: count)
            buffer.deallocate()
        }
        repeat {
            context.startRow()
            let entity = try decode(type, decoder: decoder)
            if count == capacity {
                let larger = UnsafeMutablePointer<T>.allocate(capacity: capacity * 2)
                larger.moveInitialize(from: buffer, count: count)
                buffer.deallocate()
                buffer = larger
                capacity *= 2
            }
            (buffer + count).initialize(to: entity)
            count += 1
        } while try statement.step()
        let result = [T](unsafeUninitializedCapacity: count) { elements, initialized in
            elements.baseAddress!.moveInitialize(from: buffer, count: count)
            initialized = count
        }
        count = 0
        return result
    }

    /// Decodes the row `context`'s statement is positioned on, for cursors that step one row at
    /// a time. The caller calls `context.finish()` when done.
    static func decodeCurrentRow<T: Decodable>(_ type: T.Type, context: RowDecodingContext) throws -> T {
        context.startRow()
        return try decode(type, decoder: RowDecoder(context: context))
    }

    private static func decode<T: Decodable>(_ type: T.Type, decoder: RowDecoder) throws -> T {
        do {
            return try T(from: decoder)
        } catch let error as SqlCipherError {
            throw error
        } catch let error as DecodingError {
            // Thrown by the entity's own init(from:) (a custom validation, for example).
            let (column, reason) = Self.describe(error)
            throw SqlCipherError.decodingFailed(
                entity: decoder.context.entityName, column: column, stored: "a value it rejected", expected: reason)
        }
    }

    private static func describe(_ error: DecodingError) -> (String, String) {
        switch error {
        case let .typeMismatch(_, context), let .valueNotFound(_, context), let .keyNotFound(_, context),
             let .dataCorrupted(context):
            return (context.codingPath.first?.stringValue ?? "", context.debugDescription)
        @unknown default:
            return ("", String(describing: error))
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        context.container(keyedBy: type)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw SqlCipherError.decodingFailed(
            entity: context.entityName, column: "", stored: "a row of named columns",
            expected: "an init(from:) that uses a keyed container, not an unkeyed one")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw SqlCipherError.decodingFailed(
            entity: context.entityName, column: "", stored: "a row of named columns",
            expected: "an init(from:) that uses a keyed container, not a single-value one")
    }

    struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let context: RowDecodingContext
        var codingPath: [any CodingKey] { [] }

        var allKeys: [Key] { context.names.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool {
            context.index(of: key.stringValue) != nil
        }

        @inline(__always)
        private func value(for key: Key, expecting type: Any.Type) throws -> DatabaseValue {
            guard let index = context.index(of: key.stringValue) else {
                throw SqlCipherError.decodingFailed(
                    entity: context.entityName, column: key.stringValue, stored: SqlCipherError.noSuchColumn,
                    expected: String(describing: type))
            }
            return context.value(at: index)
        }

        private func mismatch(_ key: Key, _ value: DatabaseValue, _ type: Any.Type) -> SqlCipherError {
            .decodingFailed(entity: context.entityName, column: key.stringValue,
                            stored: value.kindDescription, expected: String(describing: type))
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            guard let index = context.index(of: key.stringValue) else { return true }
            return context.isNull(at: index)
        }

        // Fast paths for the common scalar types; everything else goes through the generic decode.

        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            let value = try value(for: key, expecting: type)
            if case .integer(let int) = value, let result = Int(exactly: int) { return result }
            guard let result = Int.fromDatabaseValue(value) else { throw mismatch(key, value, type) }
            return result
        }

        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            let value = try value(for: key, expecting: type)
            if case .integer(let int) = value { return int }
            guard let result = Int64.fromDatabaseValue(value) else { throw mismatch(key, value, type) }
            return result
        }

        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            let value = try value(for: key, expecting: type)
            guard let result = Double.fromDatabaseValue(value) else { throw mismatch(key, value, type) }
            return result
        }

        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            let value = try value(for: key, expecting: type)
            guard case .text(let text) = value else { throw mismatch(key, value, type) }
            return text
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            let value = try value(for: key, expecting: type)
            guard let result = Bool.fromDatabaseValue(value) else { throw mismatch(key, value, type) }
            return result
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let value = try value(for: key, expecting: type)
            do {
                return try ColumnValueCoding.decode(type, from: value)
            } catch let error as SqlCipherError {
                throw error
            } catch {
                throw mismatch(key, value, type)
            }
        }

        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            guard let index = context.index(of: key.stringValue) else { return nil }
            let value = context.value(at: index)
            if case .null = value { return nil }
            guard let result = Int.fromDatabaseValue(value) else { throw mismatch(key, value, type) }
            return result
        }

        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            guard let index = context.index(of: key.stringValue) else { return nil }
            let value = context.value(at: index)
            switch value {
            case .null: return nil
            case .text(let text): return text
            default: throw mismatch(key, value, type)
            }
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let index = context.index(of: key.stringValue) else { return nil }
            let value = context.value(at: index)
            if case .null = value { return nil }
            do {
                return try ColumnValueCoding.decode(type, from: value)
            } catch let error as SqlCipherError {
                throw error
            } catch {
                throw mismatch(key, value, type)
            }
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            throw SqlCipherError.decodingFailed(
                entity: context.entityName, column: key.stringValue, stored: "one column value",
                expected: "a property with a Codable type of its own (nested containers are not supported)")
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw SqlCipherError.decodingFailed(
                entity: context.entityName, column: key.stringValue, stored: "one column value",
                expected: "a property with a Codable type of its own (nested containers are not supported)")
        }

        func superDecoder() throws -> any Decoder {
            throw SqlCipherError.decodingFailed(
                entity: context.entityName, column: "super", stored: "a row of named columns",
                expected: "an init(from:) without superDecoder()")
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            throw SqlCipherError.decodingFailed(
                entity: context.entityName, column: key.stringValue, stored: "a row of named columns",
                expected: "an init(from:) without superDecoder(forKey:)")
        }
    }
}
