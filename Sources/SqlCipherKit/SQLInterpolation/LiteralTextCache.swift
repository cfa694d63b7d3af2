import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the pieces of an ``SQL`` literal are in the program, for a literal whose every
/// interpolation is a value.
///
/// Each piece of text a literal holds is a `StaticString`, a constant of the program: its address
/// and length name its bytes for as long as the program runs. A value always writes `?`. So the
/// list of (address, length) for the pieces, with a mark for each value, stands for the whole
/// text, and two literals with the same list have the same text. That lets
/// ``LiteralTextCache`` find the text of a literal run again rather than write it again, which
/// is what made a literal slower than the same SQL with `?` and values.
///
/// This rests on a `StaticString`'s promise that its bytes live as long as the program: a
/// library unloaded and another loaded at its addresses could break it, and Swift does not
/// support unloading a library that holds Swift code.
///
/// At most ``capacity`` pieces and values are noted; a longer literal, or one with another
/// interpolation (an identifier, a list, a builder piece), writes its text as it goes.
@usableFromInline
struct LiteralShape: Sendable {
    /// How many pieces and values a shape notes.
    @inlinable static var capacity: Int { 12 }

    /// One word per entry: a piece's address shifted left 16 bits, or'ed with its length (1 to
    /// 65,535 bytes), or 0 for a value. Small, because the shape is copied into every literal
    /// and compared at every run.
    @usableFromInline var words = InlineArray<12, UInt>(repeating: 0)
    /// The entries noted, or -1 once the literal is no longer a plain shape.
    @usableFromInline var count = 0

    @inlinable init() {}

    /// Whether the literal is still a plain shape.
    @inlinable var isRecording: Bool { count >= 0 }

    /// Notes a piece of text; false when it cannot be noted: no room, a piece of 64 KiB or more,
    /// an address above 48 bits, or a literal of one character, which a `StaticString` holds as a
    /// scalar rather than at an address.
    @inlinable
    mutating func record(_ literal: StaticString) -> Bool {
        guard literal.hasPointerRepresentation else { return false }
        let length = UInt(literal.utf8CodeUnitCount)
        if length == 0 { return true }
        let address = UInt(bitPattern: literal.utf8Start)
        guard length <= 0xFFFF, address >> 48 == 0 else { return false }
        return note(address << 16 | length)
    }

    /// Notes a value; false when there is no room.
    @inlinable
    mutating func recordValue() -> Bool {
        note(0)
    }

    @inlinable
    mutating func note(_ word: UInt) -> Bool {
        guard count < Self.capacity else { return false }
        words[count] = word
        count += 1
        return true
    }

    /// Marks the literal as written piece by piece from now on.
    mutating func stopRecording() {
        count = -1
    }

    /// Writes the text the noted entries stand for.
    func write(into text: inout String) {
        for entry in 0..<max(count, 0) {
            let word = words[entry]
            guard word != 0, let start = UnsafePointer<UInt8>(bitPattern: word >> 16) else {
                text += "?"
                continue
            }
            text += String(decoding: UnsafeBufferPointer(start: start, count: Int(word & 0xFFFF)), as: UTF8.self)
        }
    }

    /// A hash of the entries (FNV-1a over the words: the addresses already differ well).
    var hash: UInt {
        var hash: UInt = 0xcbf2_9ce4_8422_2325
        for entry in 0..<max(count, 0) {
            hash = (hash ^ words[entry]) &* 0x100_0000_01b3
        }
        return hash
    }
}

/// The texts of the ``SQL`` literals a program has run, found by their ``LiteralShape``.
///
/// One table for the process, of a fixed size, behind one lock held only to look up or add an
/// entry (a leaf of the lock table in Architecture). The shapes are places in the program's
/// source, so a program has a fixed number of them, usually far fewer than the table holds.
/// When a shape finds its few slots taken, it replaces the first of them: the shapes a program
/// runs often keep or win back a place, and memory stays bounded whatever runs. The text handed
/// out is the same string storage at every run, which the statement cache compares by address
/// before it compares bytes. In front of the table, each thread keeps a few texts of its own
/// (``ThreadLiteralMemo``), so that a loop's literals are found without taking the lock.
@usableFromInline
enum LiteralTextCache {
    /// Slots of the open-addressing table; a power of two.
    static let slotCount = 512
    /// How many slots a shape may look at past its own before it takes its own back.
    static let probeLimit = 8
    /// Words per slot: the entry count (0 for an empty slot, as no plain shape is empty), then
    /// the entries.
    static let slotWords = 1 + LiteralShape.capacity

    /// The slots, flat, so that a lookup compares words in place rather than copying entries.
    private struct Table {
        var keys = [UInt](repeating: 0, count: LiteralTextCache.slotCount * LiteralTextCache.slotWords)
        var texts = [String](repeating: "", count: LiteralTextCache.slotCount)

        /// Whether `slot` holds `shape`; nil when the slot is empty.
        func holds(_ slot: Int, _ shape: LiteralShape) -> Bool? {
            let base = slot * LiteralTextCache.slotWords
            let count = Int(keys[base])
            if count == 0 { return nil }
            guard count == shape.count else { return false }
            // Through a span: subscripting the `InlineArray` of a borrowed shape copied all of it
            // for every word compared (half the lookup's instructions).
            let words = shape.words.span
            for entry in 0..<count where keys[base + 1 + entry] != words[entry] { return false }
            return true
        }

        mutating func store(_ shape: LiteralShape, _ text: String, at slot: Int) {
            let base = slot * LiteralTextCache.slotWords
            keys[base] = UInt(shape.count)
            for entry in 0..<shape.count { keys[base + 1 + entry] = shape.words[entry] }
            texts[slot] = text
        }
    }

    private static let table = Mutex(Table())

    /// The text a plain shape stands for: from the calling thread's memo, else from the table or
    /// written now (and added to both).
    /// (`inout` only so that the caller passes its shape in place; it is not changed.)
    @usableFromInline
    static func text(for shape: inout LiteralShape) -> String {
        // An empty shape (a literal of empty pieces) has the empty text, and marks empty slots.
        guard shape.count > 0 else { return "" }
        // The memo is borrowed from its thread-specific slot, which keeps it alive: no retain.
        return ThreadLiteralMemo.current._withUnsafeGuaranteedRef { memo in
            if let text = memo.lastText(for: shape) { return text }
            let hash = shape.hash
            if let text = memo.text(for: shape, hash: hash) { return text }
            let text = sharedText(for: shape, hash: hash)
            memo.store(shape, text, hash: hash)
            return text
        }
    }

    /// The text of `shape` from the process-wide table, written and added when it is not there.
    private static func sharedText(for shape: LiteralShape, hash: UInt) -> String {
        let start = Int(truncatingIfNeeded: hash >> 32) & (slotCount - 1)
        let found: String? = table.withCheckedLock { table in
            for probe in 0...probeLimit {
                let slot = (start + probe) & (slotCount - 1)
                switch table.holds(slot, shape) {
                case nil: return nil
                case true?: return table.texts[slot]
                case false?: continue
                }
            }
            return nil
        }
        if let found { return found }
        var text = ""
        shape.write(into: &text)
        let written = text
        return table.withCheckedLock { table in
            for probe in 0...probeLimit {
                let slot = (start + probe) & (slotCount - 1)
                switch table.holds(slot, shape) {
                case nil:
                    table.store(shape, written, at: slot)
                    return written
                case true?:
                    // Another thread added it meanwhile: hand out the storage the table keeps.
                    return table.texts[slot]
                case false?:
                    continue
                }
            }
            table.store(shape, written, at: start)
            return written
        }
    }
}

/// The texts of the literals the calling thread ran last, found without a lock.
///
/// A hit in ``LiteralTextCache``'s table costs two atomic read-modify-writes (taking and
/// releasing its lock): about a tenth of a one-row insert written as a literal, on the machines
/// this package is measured on (docs/performance.md). A loop runs its literals on one thread (a connection's executor, or
/// the caller's), so a few entries per thread, direct-mapped by the shape's hash, answer almost
/// every lookup with plain loads and one comparison of the shape. A miss goes to the table and
/// replaces the entry. Each thread's memo is its own (a thread-specific slot, never shared), is
/// made at the thread's first literal, and is freed when the thread ends.
final class ThreadLiteralMemo {
    /// Entries per thread; a power of two.
    static let entryCount = 16
    /// Words per entry: the entry count of the shape (0 for an empty entry), then its words.
    static let entryWords = 1 + LiteralShape.capacity

    /// The shapes, flat. Only the owning thread reads or writes them.
    private let keys: UnsafeMutablePointer<UInt>
    /// The texts, one per entry ("" in an empty one).
    private let texts: UnsafeMutablePointer<String>
    /// An empty values buffer with room, kept from a literal that has run, for the next literal
    /// this thread builds (``LiteralValueBuffers``).
    private var spareValues: [DatabaseValue] = []
    /// The entry that answered or was written last (``lastText(for:)``).
    private var lastEntry = 0

    private init() {
        keys = .allocate(capacity: Self.entryCount * Self.entryWords)
        keys.initialize(repeating: 0, count: Self.entryCount * Self.entryWords)
        texts = .allocate(capacity: Self.entryCount)
        texts.initialize(repeating: "", count: Self.entryCount)
    }

    deinit {
        texts.deinitialize(count: Self.entryCount)
        texts.deallocate()
        keys.deallocate()
    }

    /// The thread-specific slot; its destructor releases a thread's memo when the thread ends.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { memo in
            #if canImport(Darwin)
            Unmanaged<ThreadLiteralMemo>.fromOpaque(memo).release()
            #else
            if let memo { Unmanaged<ThreadLiteralMemo>.fromOpaque(memo).release() }
            #endif
        }
        precondition(created == 0, "no thread-specific key for the SQL literal memo")
        return key
    }()

    /// The calling thread's memo, made on first use; its slot holds the reference.
    static var current: Unmanaged<ThreadLiteralMemo> {
        if let memo = pthread_getspecific(key) {
            return Unmanaged<ThreadLiteralMemo>.fromOpaque(memo)
        }
        let memo = Unmanaged.passRetained(ThreadLiteralMemo())
        pthread_setspecific(key, memo.toOpaque())
        return memo
    }

    private func base(of hash: UInt) -> Int {
        Int(truncatingIfNeeded: hash >> 40) & (Self.entryCount - 1)
    }

    /// Puts the spare values buffer in the empty `values` if it has room for `capacity` values,
    /// else reserves room in `values`.
    @inline(__always)
    func takeValues(capacity: Int, into values: inout [DatabaseValue]) {
        guard spareValues.capacity >= capacity else {
            values.reserveCapacity(capacity)
            return
        }
        swap(&values, &spareValues)
    }

    /// Keeps `values`' buffer, emptied, as the spare, unless a spare is kept already or the
    /// buffer is large (a literal with a long list should not pin its memory).
    ///
    /// Should another copy of the literal share the buffer, emptying it copies it first; kept as
    /// the spare, the copy then serves the next literal built on the thread, so a thread never
    /// allocates more buffers than without the spare, plus one.
    @inline(__always)
    func giveBack(_ values: inout [DatabaseValue]) {
        guard spareValues.capacity == 0, values.capacity > 0, values.capacity <= LiteralValueBuffers.largestKept
        else { return }
        // Popped one by one: `removeAll(keepingCapacity:)` goes through the general
        // `replaceSubrange`, about 60 instructions more for the few values of a literal.
        while values.popLast() != nil {}
        swap(&values, &spareValues)
    }

    /// The text of the entry that answered last, if it holds `shape`: a loop runs the same
    /// literal again and again, and this compares its words without hashing them.
    @inline(__always)
    func lastText(for shape: borrowing LiteralShape) -> String? {
        holds(lastEntry, shape) ? texts[lastEntry] : nil
    }

    /// Whether `entry` holds `shape`.
    @inline(__always)
    private func holds(_ entry: Int, _ shape: borrowing LiteralShape) -> Bool {
        let words = keys + entry * Self.entryWords
        guard words[0] == UInt(bitPattern: shape.count) else { return false }
        let shapeWords = shape.words.span
        for index in 0..<shape.count where words[1 + index] != shapeWords[index] { return false }
        return true
    }

    /// The text noted for `shape`, or nil.
    @inline(__always)
    func text(for shape: borrowing LiteralShape, hash: UInt) -> String? {
        let entry = base(of: hash)
        guard holds(entry, shape) else { return nil }
        lastEntry = entry
        return texts[entry]
    }

    /// Notes `text` for `shape`, in place of the entry its hash names.
    func store(_ shape: LiteralShape, _ text: String, hash: UInt) {
        let entry = base(of: hash)
        let words = keys + entry * Self.entryWords
        words[0] = UInt(bitPattern: shape.count)
        let shapeWords = shape.words.span
        for index in 0..<shape.count { words[1 + index] = shapeWords[index] }
        texts[entry] = text
        lastEntry = entry
    }
}

extension StaticString {
    /// The literal's text as a `String` (a `StaticString` holds UTF-8, or one scalar).
    var sqlText: String {
        withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    }
}

/// The values buffers of ``SQL`` literals, recycled per thread.
///
/// A literal's values are an array that lives from the literal's first interpolation to the end
/// of its statement: one allocation and one free per statement that the same SQL with `?` and
/// positional values does not pay (the compiler keeps a call's variadic arguments on the
/// stack). The `Connection` methods that run a literal they own give its emptied buffer back to
/// the thread it ran on, and the next literal built on that thread takes it. A thread keeps at
/// most one buffer, of at most ``largestKept`` values.
@usableFromInline
enum LiteralValueBuffers {
    /// The most values a kept buffer holds room for.
    static let largestKept = 64

    /// Gives the empty `values` room for `capacity` values: the thread's spare buffer when it is
    /// large enough.
    @usableFromInline
    static func take(capacity: Int, into values: inout [DatabaseValue]) {
        ThreadLiteralMemo.current._withUnsafeGuaranteedRef { $0.takeValues(capacity: capacity, into: &values) }
    }

    /// Gives the buffer of a literal that has run back to the calling thread, emptied.
    static func giveBack(_ values: inout [DatabaseValue]) {
        ThreadLiteralMemo.current._withUnsafeGuaranteedRef { $0.giveBack(&values) }
    }
}
