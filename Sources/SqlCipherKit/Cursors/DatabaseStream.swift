import Synchronization

/// The rows (or decoded values) of one query, read in batches as the loop asks for them.
/// Made by the `stream` methods of ``Database``.
///
/// ```swift
/// for try await row in db.stream("SELECT id, body FROM notes ORDER BY id") {
///     try await export.write(row.get("body", as: String.self) ?? "")
/// }
///
/// for try await product in db.stream(Product.self, sql: "SELECT * FROM products") {
///     print(product.name)
/// }
/// ```
///
/// - Bounded memory: the query runs on the database actor one batch at a time (`batchSize` rows,
///   256 by default), and only the current batch is held. Other calls to the database run
///   between batches, so a long export does not stall the rest of the program.
/// - One statement stays open from the first batch to the last. It reads the database as it is at
///   each batch: rows that this `Database` writes meanwhile to the table being read may or may not
///   appear (https://sqlite.org/isolation.html). For one consistent snapshot, read inside
///   ``Database/read(_:)`` with a ``Cursor`` instead (the database is then held for the whole read).
///   While the statement is open, a rollback of a transaction of this `Database` ends the stream
///   with SQLite's `SQLITE_ABORT` (4), and `DROP TABLE` of the table being read fails with
///   `SQLITE_LOCKED` (6).
/// - Ends when the result does; cancelling the consuming task makes the pending ``Iterator/next()``
///   throw `CancellationError`. Leaving the loop early releases the statement before the database
///   runs its next call when Swift destroys the iterator; when it does not (a `break` inside an
///   `if`, `do` or `switch` of top-level code), a stream paused between batches still gives its
///   statement, or its pool reader, to the next call that needs it, and throws
///   ``SqlCipherError/streamPreempted(reason:)`` if it is resumed after that (``preemptionDelay``).
/// - Each iterator runs the query anew; the sequence can be iterated any number of times.
public struct DatabaseStream<Element: Sendable>: AsyncSequence, Sendable {
    let source: StreamSource
    let query: Result<QuerySource, any Error>
    let batchSize: Int
    /// Turns one batch of rows into elements, on the consuming task (not on the actor).
    let transform: @Sendable ([Row]) throws -> [Element]

    /// A new iterator, which starts the query at its first ``Iterator/next()``.
    public func makeAsyncIterator() -> Iterator {
        Iterator(stream: self)
    }

    /// How long a stream of a ``DatabasePool`` may stay paused between batches (its consumer not
    /// asking for the next element) while another read, a rekey or a close waits for its reader,
    /// before it gives the reader up (``SqlCipherError/streamPreempted(reason:)``). One second: a
    /// consumer that handles a batch in less never notices; a stream abandoned without being
    /// destroyed (a `break` in top-level code) holds a reader no longer than this.
    public static var preemptionDelay: Duration { .seconds(1) }

    /// Iterates a ``DatabaseStream``.
    ///
    /// The iterator implements both ``next()`` and ``next(isolation:)`` (SE-0421): a `for try await`
    /// loop calls the latter, so the loop body and the iterator run on the caller's own actor (the
    /// main actor in top-level code or a `@MainActor` model), and only a new batch crosses to the
    /// database's executor, once per `batchSize` rows, instead of two hops for every element.
    public struct Iterator: AsyncIteratorProtocol {
        private let stream: DatabaseStream
        private var buffer: [Element] = []
        private var index = 0
        private var handle: StreamHandle?
        /// The connection the stream reads from, taken at the first batch and kept to the end.
        private var lease: StreamSource.Lease?
        /// What the stream holds between batches, and whether another call took it (StreamHold.swift).
        private let hold = StreamHold()
        private var finished = false

        init(stream: DatabaseStream) {
            self.stream = stream
        }

        /// The next element; fetches the next batch when the current one is used up.
        /// - Throws: SQLite's errors, decoding errors, ``SqlCipherError/databaseClosed``,
        ///   ``SqlCipherError/streamPreempted(reason:)`` when the stream, paused, gave its
        ///   statement up to another call, `CancellationError`. The stream ends after an error.
        public mutating func next() async throws -> Element? {
            try await next(isolation: nil)
        }

        /// The next element, running on `actor` (the caller's isolation): elements of the current
        /// batch are returned without leaving it.
        /// - Throws: As ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Element? {
            if index < buffer.count {
                defer { index += 1 }
                return buffer[index]
            }
            return try await nextBatch(isolation: actor)
        }

        /// Fetches the next batch and returns its first element, or nil at the end.
        private mutating func nextBatch(isolation actor: isolated (any Actor)?) async throws -> Element? {
            if Task.isCancelled && !finished {
                finish()
                throw CancellationError()
            }
            while index == buffer.count {
                guard !finished else { return nil }
                do {
                    let query = try stream.query.get()
                    let current: StreamSource.Lease
                    if let lease {
                        current = lease
                    } else {
                        current = try await stream.source.lease(hold)
                        lease = current
                    }
                    // A pool closed since the last batch: its reader must not go on reading.
                    if current.isRevoked() { throw SqlCipherError.databaseClosed }
                    try hold.resume()
                    let database = current.database
                    let batch = try await database.streamBatch(handle?.id, query: query, limit: stream.batchSize,
                                                               hold: hold)
                    if handle == nil {
                        handle = StreamHandle(database: database, id: batch.id, hold: hold,
                                              release: current.release)
                    }
                    if batch.done {
                        finished = true
                        handle?.finished()
                    } else {
                        hold.pause()
                    }
                    buffer = try stream.transform(batch.rows)
                    index = 0
                } catch {
                    finish()
                    throw error
                }
            }
            defer { index += 1 }
            return buffer[index]
        }

        /// Ends the stream and releases its statement, unless another call took it already.
        private mutating func finish() {
            finished = true
            buffer = []
            index = 0
            if let handle {
                handle.close()
            } else if hold.end() {
                lease?.release()
            }
            handle = nil
            lease = nil
        }
    }
}
extension DatabaseAccess {
    /// The rows of a raw SQL query, read in batches of `batchSize` as the loop asks for them.
    ///
    /// ```swift
    /// for try await row in db.stream("SELECT * FROM events WHERE day = ?", day) {
    ///     try handle(row)
    /// }
    /// ```
    ///
    /// Memory stays bounded by one batch whatever the size of the result. See ``DatabaseStream``
    /// for what the stream sees while others write. A `batchSize` below 1 is taken as 1.
    public func stream(_ sql: String, _ arguments: (any DatabaseValueConvertible)?...,
                                   batchSize: Int = 256) -> DatabaseStream<Row> {
        stream(sql, arguments: StatementArguments(arguments), batchSize: batchSize)
    }

    /// The rows of a raw SQL query with its values given as one ``StatementArguments``
    /// (positional or named), read in batches.
    public func stream(_ sql: String, arguments: StatementArguments,
                                   batchSize: Int = 256) -> DatabaseStream<Row> {
        makeStream(.success(.sql(sql, arguments)), batchSize: batchSize) { $0 }
    }

    /// The rows of a ``Select`` template, read in batches.
    public func stream(_ select: Select, _ bindings: ParameterBinding...,
                                   batchSize: Int = 256) -> DatabaseStream<Row> {
        makeStream(Result { try .select(select, bindings) }, batchSize: batchSize) { $0 }
    }

    /// The rows of a raw SQL query decoded as `T` (an ``Entity`` or any `Decodable` type), read
    /// in batches. Decoding runs on the consuming task, not on the database actor.
    ///
    /// ```swift
    /// for try await product in db.stream(Product.self, sql: "SELECT * FROM products ORDER BY id") {
    ///     print(product.name)
    /// }
    /// ```
    public func stream<T: Decodable & Sendable>(
        _ type: T.Type, sql: String, _ arguments: (any DatabaseValueConvertible)?..., batchSize: Int = 256
    ) -> DatabaseStream<T> {
        makeStream(.success(.sql(sql, StatementArguments(arguments))), batchSize: batchSize) { try RowDecoder.decode(type, rows: $0) }
    }

    /// The rows of a ``Select`` template decoded as `T`, read in batches.
    public func stream<T: Decodable & Sendable>(
        _ type: T.Type, _ select: Select, _ bindings: ParameterBinding..., batchSize: Int = 256
    ) -> DatabaseStream<T> {
        makeStream(Result { try .select(select, bindings) }, batchSize: batchSize) {
            try RowDecoder.decode(type, rows: $0)
        }
    }

    private func makeStream<T>(_ query: Result<QuerySource, any Error>, batchSize: Int,
                               transform: @escaping @Sendable ([Row]) throws -> [T]) -> DatabaseStream<T> {
        DatabaseStream(source: StreamSource(self), query: query, batchSize: max(1, batchSize), transform: transform)
    }
}
