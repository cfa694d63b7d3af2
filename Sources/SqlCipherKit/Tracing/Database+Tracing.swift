extension DatabaseAccess {
    /// Calls `observer` with an event for each statement this database runs from now on, until
    /// the returned token is cancelled or ``stopTracing()`` is called.
    ///
    /// ```swift
    /// let tracing = try await db.trace { event in
    ///     guard !event.isInternal else { return }
    ///     logger.debug("\(event.sql) took \(event.duration)")
    /// }
    /// defer { tracing.cancel() }
    /// ```
    ///
    /// - Events carry the SQL text and no values unless `options` asks for them
    ///   (``TraceOptions/includeArguments``); key material is never in an event (``TraceEvent/sql``).
    /// - `observer` is called on the database's executor, right after each statement finishes and
    ///   before the call that ran it returns: keep it short, and hand slow work (writing a file)
    ///   to another task. It cannot run SQL on this database: an `await` on it from the observer's
    ///   task would wait for the call in progress.
    /// - With no tracer, tracing costs a statement one test when it starts and one when it ends
    ///   (docs/performance.md).
    /// - Throws: ``SqlCipherError/databaseClosed``.
    @discardableResult
    public func trace(options: TraceOptions = TraceOptions(),
                      _ observer: @escaping @Sendable (TraceEvent) -> Void) async throws -> TraceToken {
        try await _withConnection(.write) { try $0.core.startTracing(TraceObserver(options: options, deliver: observer)) }
    }

    /// The events of the statements this database runs from now on, as an asynchronous sequence.
    ///
    /// ```swift
    /// let events = try await db.traceEvents()
    /// Task {
    ///     for await event in events where !event.isInternal { print(event) }
    /// }
    /// ```
    ///
    /// Tracing starts when this returns, so no statement between the call and the first iteration
    /// is missed. The sequence ends when the iteration is cancelled or abandoned, when
    /// ``stopTracing()`` is called, or when the database (or the pool) is closed.
    /// Events wait in the sequence until they are read: with the default `.unbounded` policy, a
    /// consumer that falls behind a fast writer holds every event in memory;
    /// `.bufferingNewest(n)` keeps only the last `n`.
    /// - Throws: ``SqlCipherError/databaseClosed``.
    public func traceEvents(options: TraceOptions = TraceOptions(),
                            bufferingPolicy: AsyncStream<TraceEvent>.Continuation.BufferingPolicy = .unbounded)
        async throws -> AsyncStream<TraceEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: TraceEvent.self, bufferingPolicy: bufferingPolicy)
        let observer = TraceObserver(options: options, deliver: { continuation.yield($0) },
                                     onStop: { continuation.finish() })
        let token = try await _withConnection(.write) { try $0.core.startTracing(observer) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    /// Stops every tracer of this database, those of ``trace(options:_:)`` and of
    /// ``traceEvents(options:bufferingPolicy:)`` alike (their sequences end).
    /// - Throws: ``SqlCipherError/databaseClosed``.
    public func stopTracing() async throws {
        try await _withConnection(.write) { try $0.core.stopTracing() }
    }
}
