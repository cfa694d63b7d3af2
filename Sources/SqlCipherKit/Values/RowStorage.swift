import Foundation

/// The values of every row of one result, row after row, as two flat buffers.
///
/// For each value, `kinds` holds SQLite's fundamental type code (1 integer, 2 real, 3 text,
/// 4 blob, 5 NULL; https://sqlite.org/c3ref/c_blob.html) and `bits` holds the integer, the bit
/// pattern of the real, or, for text and blobs, the position of the value in `objects`.
///
/// Why not `[DatabaseValue]`: a ``DatabaseValue`` takes 24 bytes and each copy switches on its
/// case to retain a payload, and an array grown by appending copies itself at each doubling. On a
/// 200,000-row fetch of integers those costs were larger than reading the values from SQLite.
/// Here the bridge writes each row straight into the buffers (`scb_read_columns`), which grow with
/// `realloc`, as the C floor's buffer does, so large results are moved by the kernel rather than
/// copied.
///
/// The row hot path reads these buffers once per value: `unsafelyUnwrapped` on them is used where a
/// width above 0 (checked by the caller) proves they were allocated, to keep a branch out of the
/// loop.
///
/// Immutable once built, hence `@unchecked Sendable`: the buffers are never written after
/// ``RowStorageBuilder/finish(columns:)``, and they are freed only in `deinit`. The one exception
/// is a storage of one row made by ``singleRow(columns:)`` for a cursor or a row-by-row decode:
/// its owner writes the next row into it (``refill(fill:text:blob:)``) only while
/// `isKnownUniquelyReferenced` says that no ``Row`` of the previous row is left anywhere, so no
/// one can see the change; as soon as a caller keeps a row, the next row gets a storage of its own.
/// That is how a cursor reads rows without one allocation per row, yet every ``Row`` it returned
/// keeps its values.
@usableFromInline
final class RowStorage: @unchecked Sendable {
    @usableFromInline let columns: RowColumns
    /// The number of columns, kept here so that a row's bounds check is one load away.
    @usableFromInline let width: Int
    /// The number of values, over all rows.
    @usableFromInline let valueCount: Int
    @usableFromInline let kinds: UnsafeMutablePointer<UInt8>?
    @usableFromInline let bits: UnsafeMutablePointer<Int64>?
    /// The text and blob values, in the order their `bits` point to. Written again only by
    /// ``refill(fill:text:blob:)``.
    @exclusivity(unchecked)
    @usableFromInline private(set) var objects: [DatabaseValue]

    fileprivate init(columns: RowColumns, valueCount: Int, kinds: UnsafeMutablePointer<UInt8>?,
                     bits: UnsafeMutablePointer<Int64>?, objects: [DatabaseValue]) {
        self.columns = columns
        self.width = columns.names.count
        self.valueCount = valueCount
        self.kinds = kinds
        self.bits = bits
        self.objects = objects
    }

    deinit {
        free(kinds)
        free(bits)
    }

    /// The value at `index`, counted over all rows.
    @inlinable
    func value(at index: Int) -> DatabaseValue {
        precondition(index >= 0 && index < valueCount, "value index \(index) out of range 0..<\(valueCount)")
        return value(unchecked: index)
    }

    /// The value at `index`, which the caller has checked: a ``Row`` checks its column index
    /// against ``width``, and its offset is a multiple of ``width`` below ``valueCount``.
    @inlinable @inline(__always)
    func value(unchecked index: Int) -> DatabaseValue {
        let bits = self.bits.unsafelyUnwrapped[index]
        switch kinds.unsafelyUnwrapped[index] {
        case 1: return .integer(bits)
        case 2: return .real(Double(bitPattern: UInt64(bitPattern: bits)))
        case 3, 4: return objects[Int(truncatingIfNeeded: bits)]
        default: return .null
        }
    }

    /// Every value, over all rows, built anew at each call (use ``value(at:)`` to read one).
    var allValues: [DatabaseValue] {
        (0..<valueCount).map { value(at: $0) }
    }

    /// Splits the buffers into rows.
    func rows() -> [Row] {
        guard width > 0 else { return [] }
        let count = valueCount / width
        return [Row](unsafeUninitializedCapacity: count) { rows, initialized in
            var offset = 0
            for index in 0..<count {
                (rows.baseAddress.unsafelyUnwrapped + index).initialize(to: Row(storage: self, offset: offset))
                offset &+= width
            }
            initialized = count
        }
    }

    /// An empty storage of one row of `columns`, for ``refill(fill:text:blob:)``.
    /// - Throws: SQLITE_NOMEM, as ``RowStorageBuilder/reserve(_:)`` does.
    static func singleRow(columns: RowColumns) throws -> RowStorage {
        let width = columns.names.count
        guard width > 0 else { return RowStorage(columns: columns, valueCount: 0, kinds: nil, bits: nil, objects: []) }
        guard let kinds = malloc(width)?.assumingMemoryBound(to: UInt8.self) else {
            throw RowStorageBuilder.outOfMemory(width)
        }
        guard let bits = malloc(width * MemoryLayout<Int64>.stride)?.assumingMemoryBound(to: Int64.self) else {
            free(kinds)
            throw RowStorageBuilder.outOfMemory(width)
        }
        return RowStorage(columns: columns, valueCount: width, kinds: kinds, bits: bits, objects: [])
    }

    /// Writes the next row into a storage of ``singleRow(columns:)``, which the caller has just
    /// found uniquely referenced. `fill`, `text` and `blob` as for ``RowStorageBuilder/appendRow(width:fill:text:blob:)``.
    @inline(__always)
    func refill(fill: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int64>) -> Int32,
                text: (Int32) -> DatabaseValue, blob: (Int32) -> DatabaseValue) {
        guard width > 0 else { return }
        let kinds = self.kinds.unsafelyUnwrapped
        let bits = self.bits.unsafelyUnwrapped
        let objectCount = fill(kinds, bits)
        if !objects.isEmpty { objects.removeAll(keepingCapacity: true) }
        guard objectCount > 0 else { return }
        for column in 0..<width {
            let kind = kinds[column]
            guard kind == 3 || kind == 4 else { continue }
            bits[column] = Int64(objects.count)
            objects.append(kind == 3 ? text(Int32(column)) : blob(Int32(column)))
        }
    }
}

/// Collects a result's values into growing buffers, then hands them to a ``RowStorage``.
///
/// Non-copyable so that the buffers have one owner: they are freed by the storage, or here if the
/// result is abandoned (a step that throws halfway).
struct RowStorageBuilder: ~Copyable {
    private var kinds: UnsafeMutablePointer<UInt8>?
    private var bits: UnsafeMutablePointer<Int64>?
    private var capacity = 0
    private(set) var count = 0
    private var objects: [DatabaseValue] = []

    init() {}

    deinit {
        free(kinds)
        free(bits)
    }

    /// Makes room for `extra` more values, doubling as an array does.
    /// - Throws: SQLITE_NOMEM as ``SqlCipherError/sqlite(code:extendedCode:message:sql:)`` when
    ///   memory is exhausted.
    mutating func reserve(_ extra: Int) throws {
        guard count + extra > capacity else { return }
        // A small first allocation: most results of `query` are a few rows (a lookup by key, a
        // count), and realloc grows large ones in place or by remapping pages.
        let wanted = max(count + extra, capacity * 2, 64)
        guard let grownKinds = realloc(kinds, wanted)?.assumingMemoryBound(to: UInt8.self) else {
            throw Self.outOfMemory(wanted)
        }
        kinds = grownKinds
        guard let grownBits = realloc(bits, wanted * MemoryLayout<Int64>.stride)?.assumingMemoryBound(to: Int64.self) else {
            throw Self.outOfMemory(wanted)
        }
        bits = grownBits
        capacity = wanted
    }

    static func outOfMemory(_ values: Int) -> SqlCipherError {
        .sqlite(code: 7, extendedCode: 7, message: "out of memory while reading a result of \(values) values; "
                + "fetch fewer rows at a time (LIMIT and OFFSET, or a narrower WHERE)", sql: nil)
    }

    /// Appends one row, `width` columns wide; room must have been reserved.
    ///
    /// `fill` writes the row's kinds and bits in place (``Statement`` has the bridge do it) and
    /// returns how many are text or blobs; those are then asked of `text` and `blob` by column and
    /// kept in `objects`, their slot in `bits` pointing there.
    mutating func appendRow(width: Int, fill: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int64>) -> Int32,
                            text: (Int32) -> DatabaseValue, blob: (Int32) -> DatabaseValue) {
        precondition(count + width <= capacity, "RowStorageBuilder.appendRow without reserve")
        guard width > 0 else { return }
        let rowKinds = kinds.unsafelyUnwrapped + count
        let rowBits = bits.unsafelyUnwrapped + count
        count += width
        guard fill(rowKinds, rowBits) > 0 else { return }
        for column in 0..<width {
            let kind = rowKinds[column]
            guard kind == 3 || kind == 4 else { continue }
            rowBits[column] = Int64(objects.count)
            objects.append(kind == 3 ? text(Int32(column)) : blob(Int32(column)))
        }
    }

    /// The storage, which now owns the buffers.
    consuming func finish(columns: RowColumns) -> RowStorage {
        let storage = RowStorage(columns: columns, valueCount: count, kinds: kinds, bits: bits, objects: objects)
        kinds = nil
        bits = nil
        return storage
    }
}
