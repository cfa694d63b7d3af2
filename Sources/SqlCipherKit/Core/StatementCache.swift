/// Prepared statements of one connection, keyed by SQL text, least recently used first out.
///
/// The query builder renders the same SQL for a template whatever values are bound, so a template
/// run many times is prepared once. Bounded so that ad-hoc SQL cannot grow it without limit.
struct StatementCache {
    private var entries: [String: (statement: Statement, lastUse: UInt64)] = [:]
    private var clock: UInt64 = 0
    let capacity: Int

    /// How many lookups found a prepared statement; for tests and benchmarks.
    private(set) var hits = 0
    /// How many lookups had to prepare.
    private(set) var misses = 0

    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    var count: Int { entries.count }

    /// The cached statement for `sql`, marked as just used.
    mutating func statement(for sql: String) -> Statement? {
        clock &+= 1
        guard let entry = entries[sql] else {
            misses += 1
            return nil
        }
        hits += 1
        entries[sql] = (entry.statement, clock)
        return entry.statement
    }

    /// Adds a statement, evicting the least recently used one when full.
    mutating func insert(_ statement: Statement) {
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            entries.removeValue(forKey: oldest.key)
        }
        clock &+= 1
        entries[statement.sql] = (statement, clock)
    }

    /// Drops every statement (they finalize as they are released).
    mutating func removeAll() {
        entries.removeAll()
    }
}
