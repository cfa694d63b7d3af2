import Foundation

/// Prepared statements of one connection, keyed by SQL text, least recently used first out.
///
/// The query builder renders the same SQL for a template whatever values are bound, so a template
/// run many times is prepared once. Bounded so that ad-hoc SQL cannot grow it without limit.
///
/// Loops run one or two statements over and over (an insert; an update then an insert), so the
/// two most recently used statements are checked first by comparing their text, which is cheaper
/// than hashing it and costs nothing when the caller passes the same string storage each time.
/// A hit records its time in the statement itself, so finding a statement never writes to the
/// dictionary.
///
/// SQL texts match byte for byte, as SQLite reads them, never by Swift's `String ==`: that
/// compares by Unicode canonical equivalence, so `"é"` written precomposed and as `e` plus a
/// combining accent would be one key, while SQLite sees two different identifiers (two tables).
struct StatementCache {
    private var entries: [SQLText: Statement] = [:]
    private var recent: Statement? {
        didSet { recentText = recent?.sql }
    }
    /// The string last seen to name ``recent``: its own text, or a caller's string of the same
    /// bytes in other storage (the same SQL from a literal and from a `String`). Checked by its
    /// representation first, so a loop that passes one string finds its statement without
    /// comparing bytes, whichever string the statement was prepared with.
    private var recentText: String?
    private var previous: Statement?
    private var clock: UInt64 = 0
    let capacity: Int

    /// How many lookups found a prepared statement; for tests and benchmarks.
    private(set) var hits = 0
    /// How many lookups had to prepare.
    private(set) var misses = 0

    init(capacity: Int = 64) {
        precondition(capacity > 0, "a statement cache needs room for at least one statement")
        self.capacity = capacity
    }

    var count: Int { entries.count }

    /// The cached statement for `sql`, marked as just used.
    mutating func statement(for sql: String) -> Statement? {
        clock &+= 1
        let found: Statement
        if let recent, let recentText, SQLText.sameRepresentation(recentText, sql) {
            found = recent
        } else if let recent, SQLText.sameBytes(recent.sql, sql) {
            found = recent
            recentText = sql
        } else if let previous, SQLText.sameBytes(previous.sql, sql) {
            found = previous
            self.previous = recent
            self.recent = previous
        } else if let entry = entries[SQLText(sql)] {
            found = entry
            previous = recent
            recent = entry
        } else {
            misses += 1
            return nil
        }
        hits += 1
        found.lastUse = clock
        return found
    }

    /// Adds a statement, evicting the least recently used one when full.
    mutating func insert(_ statement: Statement) {
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            entries.removeValue(forKey: oldest.key)
            if recent === oldest.value { recent = nil }
            if previous === oldest.value { previous = nil }
        }
        clock &+= 1
        statement.lastUse = clock
        entries[SQLText(statement.sql)] = statement
        previous = recent
        recent = statement
    }

    /// Drops every statement (they finalize as they are released).
    mutating func removeAll() {
        entries.removeAll()
        recent = nil
        previous = nil
    }
}

/// SQL text as a dictionary key that compares and hashes its UTF-8 bytes.
struct SQLText: Hashable {
    let text: String

    init(_ text: String) {
        self.text = text
    }

    static func == (lhs: SQLText, rhs: SQLText) -> Bool {
        sameBytes(lhs.text, rhs.text)
    }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Whether `a` and `b` are one string value bit for bit: the same storage (or the same small
    /// string) and length, hence the same bytes. False says nothing; ``sameBytes(_:_:)`` decides.
    @inline(__always)
    static func sameRepresentation(_ a: String, _ b: String) -> Bool {
        unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
    }

    /// Whether `a` and `b` are the same UTF-8 bytes.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a
        var b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in
                // The same storage (a literal's cached text, a string the caller keeps) is the
                // common case and needs no comparison.
                a.count == 0 || a.baseAddress == b.baseAddress || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
            }
        }
    }
}
