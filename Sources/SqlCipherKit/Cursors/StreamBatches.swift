// The machinery behind ``DatabaseStream``: where a stream reads (a Database's connection or a
// pool reader leased for the whole stream), the statements kept open between batches, and the
// batch read on the database actor.

/// The statement of one stream iterator, kept open on the database actor between batches.
///
/// When the iterator goes away before the end (a `break` out of the loop), its hold is ended at
/// once, so the database releases the statement before it runs its next call: a `DROP TABLE`
/// right after the loop finds nothing open. A task also releases it soon after, for a database
/// that is not called again. Swift does not always destroy an iterator whose loop was left, so
/// this is only the fast path: ``StreamHold`` is the rule that does not depend on it.
final class StreamHandle: @unchecked Sendable {
    let database: Database
    let id: UInt64
    let hold: StreamHold
    /// Gives the connection back to its pool (nothing for a ``Database``).
    let release: @Sendable () -> Void
    /// Whether the actor still holds the statement. Changed only by the iterator that owns the
    /// handle (an iterator is used by one task at a time).
    var isOpen = true

    init(database: Database, id: UInt64, hold: StreamHold, release: @escaping @Sendable () -> Void) {
        self.database = database
        self.id = id
        self.hold = hold
        self.release = release
    }

    /// The statement ended with the last batch (the database already released it).
    func finished() {
        guard isOpen else { return }
        isOpen = false
        if hold.end() { release() }
    }

    /// Releases the statement now rather than at deinit, then the connection; nothing when
    /// another call preempted the stream (it released both).
    func close() {
        guard isOpen else { return }
        isOpen = false
        guard hold.end() else { return }
        let database = self.database
        let id = self.id
        let release = self.release
        Task {
            await database.closeStream(id)
            release()
        }
    }

    deinit {
        close()
    }
}

/// The statements of the streams open on one connection, by stream number.
struct OpenStreams {
    final class Entry {
        let statement: Statement
        let hold: StreamHold
        var columns: RowColumns?

        init(statement: Statement, hold: StreamHold) {
            self.statement = statement
            self.hold = hold
        }
    }

    private var entries: [UInt64: Entry] = [:]
    private var last: UInt64 = 0

    /// Opens a stream over `statement` and returns its number and entry.
    mutating func open(_ statement: Statement, hold: StreamHold) -> (id: UInt64, entry: Entry) {
        last &+= 1
        let entry = Entry(statement: statement, hold: hold)
        entries[last] = entry
        return (last, entry)
    }

    subscript(id: UInt64) -> Entry? {
        entries[id]
    }

    /// Releases stream `id`'s statement.
    mutating func close(_ id: UInt64) {
        if let entry = entries.removeValue(forKey: id) { entry.statement.reset() }
    }

    /// Releases the statements of iterators that ended (went away) without a last batch.
    mutating func closeAbandoned() {
        guard !entries.isEmpty else { return }
        for (id, entry) in entries where entry.hold.isEnded { close(id) }
    }

    /// Ends every stream paused between batches, for a statement that failed because their
    /// statements are open; true when there was one. Each such stream throws
    /// ``SqlCipherError/streamPreempted(reason:)`` if it is resumed.
    mutating func endPaused(reason: String) -> Bool {
        guard !entries.isEmpty else { return false }
        var ended = false
        for (id, entry) in entries where entry.hold.preempt(reason: reason) {
            close(id)
            ended = true
        }
        return ended
    }

    /// Releases every statement.
    mutating func closeAll() {
        for entry in entries.values { entry.statement.reset() }
        entries.removeAll()
    }

    /// How many streams are open (for tests).
    var count: Int { entries.count }
}

/// Where a stream reads: the connection of a ``Database``, or a reader of a ``DatabasePool``
/// checked out for the whole stream (its open statement holds that reader's snapshot, which no
/// other read may share) and checked back in when the stream ends or is left.
struct StreamSource: Sendable {
    struct Lease: Sendable {
        let database: Database
        let release: @Sendable () -> Void
        /// Whether the connection may no longer be used (its pool was closed): a reader checked
        /// out for a stream is not closed under it, so the stream asks before each batch.
        var isRevoked: @Sendable () -> Bool = { false }
    }

    let lease: @Sendable (StreamHold) async throws -> Lease

    init(_ access: some DatabaseAccess) {
        switch access {
        case let database as Database:
            lease = { _ in Lease(database: database, release: {}) }
        case let pool as DatabasePool:
            lease = { hold in
                guard !pool.isClosed else { throw SqlCipherError.databaseClosed }
                let reader = try await pool.readers.checkout(holding: hold)
                return Lease(database: reader, release: { pool.readers.checkin(reader) },
                             isRevoked: { pool.isClosed })
            }
        default:
            lease = { _ in
                throw SqlCipherError.unsupported(
                    feature: "streams on \(type(of: access))", requires: "a Database or a DatabasePool",
                    loaded: access.library.cipherVersion)
            }
        }
    }
}

extension Database {
    /// Reads the next batch of stream `id`, or opens the stream (with `id` nil) and reads its
    /// first batch. A stream that ends or fails is released here.
    func streamBatch(_ id: UInt64?, query: QuerySource, limit: Int, hold: StreamHold) async throws
        -> (id: UInt64, rows: [Row], done: Bool) {
        var current = id
        do {
            return try await perform { core in
                let number: UInt64
                let entry: OpenStreams.Entry
                if let id {
                    guard let open = core.streams[id] else { throw SqlCipherError.connectionNotUsable }
                    (number, entry) = (id, open)
                } else {
                    let statement = try core.openStatement(query)
                    // A statement that writes and stays open between batches would hold back the
                    // commit of every later write of this database (SQLite commits only when no
                    // writing statement is pending), silently.
                    guard statement.isReadOnly else {
                        // Quoted as every description quotes SQL, redacted: a `key=` literal of
                        // the text showed as written (found by the attack review).
                        throw SqlCipherError.invalidQuery(
                            reason: "a stream runs only statements that read, and \(SqlCipherError.quoted(statement.sql)) "
                                + "writes: left open between batches, it would hold back the commit of every later write. "
                                + "Run it with execute, or with query for its rows")
                    }
                    (number, entry) = core.streams.open(statement, hold: hold)
                    current = number
                }
                let batch = try entry.statement.fetch(limit: limit, columns: &entry.columns)
                if batch.done { core.streams.close(number) }
                return (number, batch.rows, batch.done)
            }
        } catch {
            if let current { connection?.streams.close(current) }
            throw error
        }
    }

    /// Releases stream `id` (an iterator left before the end).
    func closeStream(_ id: UInt64) {
        connection?.streams.close(id)
    }

    /// Ends every stream open on this connection (a reader taken back from a paused stream).
    func closeStreams() {
        connection?.streams.closeAll()
    }

    /// How many streams hold a statement (for tests).
    var openStreamCount: Int { connection?.streams.count ?? 0 }
}
