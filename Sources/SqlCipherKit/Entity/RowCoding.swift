/// A type that reads itself from a ``Row``, without `Decoder`.
///
/// Every method that decodes rows as a type (`fetch`, `fetchOne`, cursors, streams, live
/// requests, ``Row/decode(_:)``) calls ``init(row:)`` when the type adopts this protocol, and
/// goes through `Decodable` otherwise. Adopting it is an optimisation, never a requirement: a
/// hand-written initializer reads each column directly from the row's buffer, where the
/// `Decodable` path pays the standard library's keyed-container machinery per property (about
/// half of the time of an entity fetch; docs/performance.md).
///
/// ```swift
/// struct Product: Entity, RowCodable {
///     static let tableName = TableName("products")
///     static let primaryKey: WritableKeyPath<Product, Int?> & Sendable = \.id
///     var id: Int?
///     var name: String
///     var price: Double
///
///     init(row: Row) throws {
///         id = try row.decode("id")
///         name = try row.decode("name")
///         price = try row.decode("price")
///     }
///
///     func encode(to columns: inout EntityColumns) {
///         columns.set("id", id)
///         columns.set("name", name)
///         columns.set("price", price)
///     }
/// }
/// ```
///
/// Read with ``Row/decode(_:as:)-(String,_)`` to get the same values and the same conversion rules
/// as the `Codable` mapping of ``Entity``: both paths use each type's ``DatabaseValueConvertible``
/// conversion. A ``SqlCipherError/typeMismatch(column:stored:expected:)`` or
/// ``SqlCipherError/columnNotFound(name:available:)`` thrown by the initializer reaches the caller
/// as ``SqlCipherError/decodingFailed(entity:column:stored:expected:)`` naming the type, exactly
/// as the `Decodable` path reports it; other errors pass through unchanged.
///
/// The row passed in is valid for as long as you keep it, but keep it only when you must: while
/// no decoded value holds on to it, a fetch reuses its buffer for the next row.
public protocol RowDecodable {
    /// Reads a value from one row of a result.
    init(row: Row) throws

    /// Decodes every row that `next` returns, in order. An implementation detail: do not
    /// implement it. Its default implementation is inlinable, so the conforming type's module
    /// compiles it for that type: the loop, the array and ``init(row:)`` are then specialized,
    /// where the package's generic code would move each value through the type's metadata.
    static func _decodeRows(_ next: () throws -> Row?) throws -> [Self]
}

extension RowDecodable {
    /// Decodes every row that `next` returns with ``init(row:)``; see the requirement.
    @inlinable
    public static func _decodeRows(_ next: () throws -> Row?) throws -> [Self] {
        var result: [Self] = []
        while let row = try next() {
            do {
                result.append(try Self(row: row))
            } catch let error as SqlCipherError {
                throw RowDecodableReader.entityError(error, Self.self)
            }
        }
        return result
    }
}

/// A type that writes its own columns for `save`, without `Encoder`.
///
/// `save` calls ``encode(to:)`` when the entity adopts this protocol, and goes through `Encodable`
/// otherwise. Set every column the table has for the entity, the primary key's column included,
/// in the same order each time (the order is where the columns' positions come from, so a batch
/// prepares its statements once). See ``RowDecodable`` for an example.
public protocol RowEncodable {
    /// Sets the entity's columns, each with ``EntityColumns/set(_:_:)-(_,Value)``.
    func encode(to columns: inout EntityColumns) throws
}

/// A type that reads itself from a row and writes its own columns: ``RowDecodable`` and
/// ``RowEncodable``.
public typealias RowCodable = RowDecodable & RowEncodable

/// The columns an entity writes in ``RowEncodable/encode(to:)``: names and values, in order.
///
/// ```swift
/// func encode(to columns: inout EntityColumns) {
///     columns.set("id", id)
///     columns.set("createdAt", createdAt)     // a Date, stored as the Codable mapping stores it
///     columns.set("status", status)           // an enum with a raw value (DatabaseValueConvertible)
/// }
/// ```
///
/// A value is stored as its ``DatabaseValueConvertible/databaseValue``: the same column value the
/// `Codable` mapping of ``Entity`` writes for it. Like that mapping, a NaN `Double` or `Float` and
/// a double optional holding `.some(nil)` are refused: `save` throws
/// ``SqlCipherError/encodingFailed(entity:reason:)`` naming the column. Setting a column twice
/// keeps the last value.
public struct EntityColumns {
    /// The column names: this entity's first ``count`` of them, then (while encoding) the rest of
    /// the previous entity's layout, which the next names are expected to follow.
    @usableFromInline var names: [String] = []
    /// This entity's values, in the order of ``names``.
    @usableFromInline var values: [DatabaseValue] = []
    /// How many columns this entity has set so far.
    @usableFromInline var count = 0
    /// Bumped whenever ``names`` changes, so that a writer knows when to prepare new statements.
    @usableFromInline var layoutVersion = 0
    /// The first value that cannot be stored, reported after encoding.
    @usableFromInline var problem: String?
    /// Where each of this entity's first ``indexedCount`` names is, built only once an entity has
    /// ``wideEntityColumns`` columns: looking a new name up among the names set so far by a scan
    /// made the first save of a wide entity quadratic (32,766 columns took 42 seconds before
    /// SQLite's refusal of as many variables).
    var wideIndex: [String: Int] = [:]
    var indexedCount = 0
    static let wideEntityColumns = 64

    /// Empty columns. `save` makes its own; make one to check what an `encode(to:)` writes:
    ///
    /// ```swift
    /// var columns = EntityColumns()
    /// try product.encode(to: &columns)
    /// assert(columns["price"] == .real(9.99))
    /// ```
    public init() {}

    /// The value set for `column` (matched byte for byte), or nil when it was not set.
    public subscript(column: String) -> DatabaseValue? {
        names[..<count].firstIndex { Self.sameName($0, column) }.map { values[$0] }
    }

    /// Sets `column` to `value` stored as the `Codable` mapping of ``Entity`` stores one property
    /// whose type is not ``DatabaseValueConvertible``: a single-value type (an enum with a raw
    /// value) as that value, a struct, array or dictionary as JSON text (keys sorted, dates as
    /// `YYYY-MM-DD HH:MM:SS.SSS`), nil as NULL.
    ///
    /// ```swift
    /// columns.setCodable("address", address)   // {"city":"Paris","street":"1 rue X"}
    /// ```
    ///
    /// A value that cannot be encoded makes `save` throw ``SqlCipherError/encodingFailed(entity:reason:)``.
    public mutating func setCodable<Value: Encodable>(_ column: String, _ value: Value) {
        if let optional = value as? any OptionalValue, optional.isNone {
            put(column, .null)
            return
        }
        if let optional = value as? any NestedOptional, optional.holdsNil {
            checkNull(column, value)
            put(column, .null)
            return
        }
        do {
            put(column, try ColumnValueCoding.encode(value))
        } catch {
            if problem == nil { problem = "column \"\(column)\" (\(Value.self)): \(error)" }
            put(column, .null)
        }
    }

    /// The column names set so far, in order.
    public var columnNames: ArraySlice<String> { names[..<count] }

    /// Sets `column` to `value`.
    ///
    /// Inlined into the caller, so that `columns.set("price", price)` converts a `Double` without
    /// a generic call. Always: left to its heuristics, the compiler once kept a specialised copy
    /// per type out of line, a call per column that cost a row-protocol save 3% to 6%.
    @inlinable @inline(__always)
    public mutating func set<Value: DatabaseValueConvertible>(_ column: String, _ value: Value) {
        let stored = value.databaseValue
        if case .null = stored { checkNull(column, value) }
        put(column, stored)
    }

    /// Sets `column` to `value`, NULL for nil.
    ///
    /// The optional form of ``set(_:_:)-(_,Value)``: a nil needs no check, so a nil key (an
    /// entity SQLite has not assigned one yet) costs a store.
    @inlinable @inline(__always)
    public mutating func set<Wrapped: DatabaseValueConvertible>(_ column: String, _ value: Wrapped?) {
        guard let value else {
            put(column, .null)
            return
        }
        let stored = value.databaseValue
        // NULL from a value that is not nil: NaN, or an inner optional's nil (`.some(nil)`).
        if case .null = stored { checkNull(column, Optional(value)) }
        put(column, stored)
    }

    /// Notes a value that became NULL but is not nil (NaN, or `.some(nil)`).
    @usableFromInline
    mutating func checkNull<Value>(_ column: String, _ value: Value) {
        guard problem == nil else { return }
        if isNotANumber(value) {
            problem = "column \"\(column)\" (\(Value.self)): \(ColumnValueCoding.NotANumber())"
        } else if let optional = value as? any NestedOptional, optional.holdsNil {
            problem = "column \"\(column)\" (\(Value.self)) holds .some(nil), which a column cannot tell apart from nil: "
                + "both are NULL and read back as nil. Use a single optional, or an enum that says what the inner nil means"
        }
    }

    /// Stores the value of `column`. Inlined, always: a loop of saves sets the same names in the
    /// same order, and the usual case is one identity comparison and one store; where the caller
    /// made the value (`.integer(n)` in the encoder's containers), the compiler then knows its
    /// case and stores it without the generic copy a call costs (docs/performance.md, "Entities").
    @inlinable @inline(__always)
    mutating func put(_ column: String, _ value: DatabaseValue) {
        if count < names.count && count < values.count && StringBits.isAvailable
            && StringBits(names[count]) == StringBits(column) {
            // The same name at the same position as in the previous entity; the names before
            // `count` differ from it (a layout has no repeats), so it is not set twice.
            values[count] = value
            count += 1
        } else {
            putSlow(column, value)
        }
    }

    /// Byte-for-byte name equality (as SQLite compares identifiers exactly), with the identity of
    /// the two strings first: the same literal each time, in a loop of saves.
    @inline(__always)
    static func sameName(_ a: String, _ b: String) -> Bool {
        if StringBits.isAvailable && StringBits(a) == StringBits(b) { return true }
        return SQLText.sameBytes(a, b)
    }

    /// The same name by bytes rather than identity, a column set twice (the last value wins), or
    /// a layout that differs from the previous one.
    @usableFromInline
    mutating func putSlow(_ column: String, _ value: DatabaseValue) {
        if count < names.count && Self.sameName(names[count], column) {
            store(value)
            return
        }
        if let index = indexOfSetColumn(column) {
            values[index] = value
            return
        }
        if count < names.count { names.removeSubrange(count...) }
        names.append(column)
        store(value)
        layoutVersion += 1
    }

    /// The position of `column` among the names this entity has set, or nil. A scan for a narrow
    /// entity; for a wide one, ``wideIndex``, extended to the names set since the last lookup (the
    /// first ``count`` names never change while an entity is encoded).
    private mutating func indexOfSetColumn(_ column: String) -> Int? {
        guard count >= Self.wideEntityColumns else { return names[..<count].firstIndex { Self.sameName($0, column) } }
        while indexedCount < count {
            wideIndex[names[indexedCount]] = indexedCount
            indexedCount += 1
        }
        guard let found = wideIndex[column] else { return nil }
        if Self.sameName(names[found], column) { return found }
        // Equal as Swift strings but not byte for byte (é as one scalar or two), which SQLite
        // names apart: the scan decides.
        return names[..<count].firstIndex { Self.sameName($0, column) }
    }

    private mutating func store(_ value: DatabaseValue) {
        if count < values.count {
            values[count] = value
        } else {
            values.append(value)
        }
        count += 1
    }

    /// Starts the next entity, keeping the previous layout to compare against.
    mutating func startEntity() {
        count = 0
        problem = nil
        if indexedCount > 0 {
            wideIndex.removeAll(keepingCapacity: true)
            indexedCount = 0
        }
    }

    /// Ends an entity: drops what is left of the previous layout. Returns the first problem.
    mutating func finishEntity() -> String? {
        if count < names.count {
            names.removeSubrange(count...)
            layoutVersion += 1
        }
        if count < values.count { values.removeSubrange(count...) }
        return problem
    }
}

extension Row {
    /// The named column read as the `Codable` mapping of ``Entity`` reads one property whose type
    /// is not ``DatabaseValueConvertible``: the counterpart of ``EntityColumns/setCodable(_:_:)``.
    ///
    /// ```swift
    /// address = try row.decodeCodable("address", as: Address.self)   // JSON text to a struct
    /// ```
    ///
    /// Ask for an optional type to accept NULL.
    /// - Throws: ``SqlCipherError/columnNotFound(name:available:)`` or
    ///   ``SqlCipherError/typeMismatch(column:stored:expected:)``.
    public func decodeCodable<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let index = storage.columns.index(of: name) else {
            throw SqlCipherError.columnNotFound(name: name, available: columnNames)
        }
        let value = storage.value(at: offset + index)
        do {
            return try ColumnValueCoding.decode(type, from: value)
        } catch let error as SqlCipherError {
            throw error
        } catch {
            throw SqlCipherError.typeMismatch(column: name, stored: value.kindDescription, expected: String(describing: T.self))
        }
    }
}

/// An `Optional` that can tell whether it holds a nil of an inner optional (`.some(nil)`).
protocol NestedOptional {
    /// Whether this is `.some(x)` where `x` is itself a nil optional.
    var holdsNil: Bool { get }
}

extension Optional: NestedOptional {
    var holdsNil: Bool {
        guard case .some(let wrapped) = self else { return false }
        return (wrapped as? any OptionalValue)?.isNone ?? false
    }
}

// MARK: - Decoding through RowDecodable

/// The `RowDecodable` half of every decoding entry point (``RowDecoder``, ``Cursor``).
///
/// The entry points are generic over `T: Decodable`, so they ask once per call whether `T` is
/// also ``RowDecodable`` and, when it is, open that conformance in the generic functions below,
/// where `R` is `T` itself: values of `R` are values of `T`, which `unsafeBitCast` only renames.
@usableFromInline
enum RowDecodableReader {
    /// Decodes `row` as `R`, reporting the row's own errors as the `Decodable` path does.
    @inline(__always)
    static func decode<R: RowDecodable>(_ type: R.Type, row: Row) throws -> R {
        do {
            return try R(row: row)
        } catch let error as SqlCipherError {
            throw entityError(error, R.self)
        }
    }

    /// ``SqlCipherError/decodingFailed(entity:column:stored:expected:)`` for the errors of
    /// ``Row/decode(_:as:)-(String,_)``, which name no entity; other errors unchanged.
    @usableFromInline
    static func entityError<R>(_ error: SqlCipherError, _ type: R.Type) -> SqlCipherError {
        switch error {
        case let .typeMismatch(column, stored, expected):
            return .decodingFailed(entity: String(describing: R.self), column: column, stored: stored, expected: expected)
        case let .columnNotFound(name, available):
            return .decodingFailed(entity: String(describing: R.self), column: name, stored: SqlCipherError.noSuchColumn,
                                   expected: "a value; the result's columns are \(available.joined(separator: ", "))")
        default:
            return error
        }
    }

    /// Every row of a finished result decoded as `R`, returned as `[T]` (`R` is `T`).
    static func decode<R: RowDecodable, T>(_ type: R.Type, as: T.Type, rows: [Row]) throws -> [T] {
        precondition(R.self == T.self, "RowDecodableReader opened another type than asked for")
        var iterator = rows.makeIterator()
        return unsafeBitCast(try R._decodeRows { iterator.next() }, to: [T].self)
    }

    /// Steps `statement` to the end and decodes each row as `R` as it comes, returned as `[T]`
    /// (`R` is `T`). Each row is read into one reused buffer (``Statement/currentRow(reusing:columns:)``),
    /// so nothing is allocated per row but the values themselves. The caller resets the statement.
    static func decode<R: RowDecodable, T>(_ type: R.Type, as: T.Type, statement: Statement) throws -> [T] {
        precondition(R.self == T.self, "RowDecodableReader opened another type than asked for")
        let state = RowReadState(statement: statement)
        return unsafeBitCast(try R._decodeRows(state.nextRow), to: [T].self)
    }

    /// A reader of the current row of a statement as `R`, returned as `T` (`R` is `T`), for cursors.
    static func currentRowReader<R: RowDecodable, T>(_ type: R.Type, as: T.Type) -> (Statement) throws -> T {
        precondition(R.self == T.self, "RowDecodableReader opened another type than asked for")
        let state = RowReadState()
        return { statement in
            let entity = try decode(R.self, row: state.currentRow(of: statement))
            return unsafeBitCast(entity, to: T.self)
        }
    }
}

// MARK: - Encoding through RowEncodable

/// Writes an entity's columns through its ``RowEncodable`` conformance; made once per writer
/// (``EntityWriter``) when the entity adopts the protocol.
struct RowEncodableColumns<T> {
    /// Calls `encode(to:)` of the entity, opened as its `RowEncodable` type.
    let encode: (T, inout EntityColumns) throws -> Void

    /// The writer for `T`, or nil when `T` does not adopt ``RowEncodable``.
    static func make(for type: T.Type) -> RowEncodableColumns<T>? {
        guard let encodable = T.self as? any RowEncodable.Type else { return nil }
        return make(encodable)
    }

    private static func make<R: RowEncodable>(_ type: R.Type) -> RowEncodableColumns<T> {
        precondition(R.self == T.self, "RowEncodableColumns opened another type than asked for")
        return RowEncodableColumns { entity, columns in
            try unsafeBitCast(entity, to: R.self).encode(to: &columns)
        }
    }
}
