/// The values of a ``LiveRequest`` over time: the current value, then one value after each
/// committed transaction that changed it. Made by ``Database/values(of:)``.
///
/// ```swift
/// for try await products in db.values(of: .fetch(Product.self, orderBy: col("name").ascending)) {
///     try await socket.send(JSONEncoder().encode(products))
/// }
/// ```
///
/// - Pull-based: a commit only marks the observation as changed (and wakes a waiting loop); the
///   query runs on the database actor when the loop asks for the next value, and only the result
///   crosses to the loop. A slow consumer gets the current state, never a backlog.
/// - At most one value per transaction, and none when the result is the same as the last one
///   yielded (a write to a row outside the request's `where`, a rollback, a savepoint rollback).
/// - Ends (`nil`) when the consuming task is cancelled, and removes the observation at once.
///   Breaking out of the loop also ends it; the observation is then dropped at the next commit.
/// - Throws when a fetch fails (for example ``SqlCipherError/sqlite(code:extendedCode:message:sql:)``
///   when a table is missing, or ``SqlCipherError/databaseClosed`` after ``Database/close()``),
///   and ends.
///
/// Each iterator is one observation; the sequence itself can be iterated any number of times.
public struct LiveValues<Value: Sendable>: AsyncSequence, Sendable {
    /// The request's result type.
    public typealias Element = Value

    let host: any ObservationHost
    let request: LiveRequest<Value>

    /// A new iterator: a new observation, started by its first ``Iterator/next()``.
    public func makeAsyncIterator() -> Iterator {
        Iterator(host: host, request: request)
    }

    /// Iterates a ``LiveValues``. Its first call to ``next()`` starts the observation.
    public struct Iterator: AsyncIteratorProtocol {
        /// The request's result type.
        public typealias Element = Value

        private enum State {
            case idle
            case observing(id: UInt64, signal: ObservationSignal)
            case finished
        }

        let host: any ObservationHost
        let request: LiveRequest<Value>
        private var state = State.idle

        init(host: any ObservationHost, request: LiveRequest<Value>) {
            self.host = host
            self.request = request
        }

        /// The current value on the first call; afterwards, waits for a change that alters the
        /// result. `nil` once the task is cancelled.
        public mutating func next() async throws -> Value? {
            try await next(isolation: nil)
        }

        /// As ``next()``, running on `actor` (the caller's isolation, SE-0421), so that a
        /// `for try await` loop on the main actor does not hop off it and back for each value.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Value? {
            switch state {
            case .finished:
                return nil
            case .idle:
                if Task.isCancelled {
                    state = .finished
                    return nil
                }
                let signal = ObservationSignal()
                do {
                    let (id, value) = try await host.startObserving(request, signal: signal)
                    state = .observing(id: id, signal: signal)
                    return value
                } catch {
                    state = .finished
                    throw error
                }
            case let .observing(id, signal):
                while true {
                    guard await signal.waitForChange(), !Task.isCancelled else {
                        state = .finished
                        await host.stopObserving(id)
                        return nil
                    }
                    let outcome: ObservedFetch<Value>
                    do {
                        outcome = try await host.fetchObserved(id, as: Value.self)
                    } catch {
                        state = .finished
                        throw error
                    }
                    switch outcome {
                    case .changed(let value):
                        return value
                    case .unchanged:
                        continue
                    case .ended:
                        state = .finished
                        return nil
                    }
                }
            }
        }
    }
}

/// What keeps observations for ``LiveValues``: a ``Database`` (fetches on its connection) or a
/// ``DatabasePool`` (fetches on its readers).
protocol ObservationHost: Sendable {
    /// Registers an observation of `request` and fetches its first value.
    func startObserving<Value>(_ request: LiveRequest<Value>, signal: ObservationSignal) async throws
        -> (id: UInt64, value: Value)
    /// Fetches a dirty observation again; an unchanged result is reported as such, not decoded.
    func fetchObserved<Value>(_ id: UInt64, as type: Value.Type) async throws -> ObservedFetch<Value>
    /// Removes an observation whose consumer stopped.
    func stopObserving(_ id: UInt64) async
}

/// The outcome of fetching a dirty observation.
enum ObservedFetch<Value: Sendable>: Sendable {
    case changed(Value)
    /// The result equals the last one yielded.
    case unchanged
    /// The observation is no longer registered.
    case ended
}
