import Synchronization

extension DatabasePool: ObservationHost {
    /// The values of `request` as the database changes, fetched on the pool's readers: the
    /// current value first, then one value after each committed transaction that changed it.
    ///
    /// ```swift
    /// for try await count in pool.values(of: .count(Product.self)) {
    ///     print("\(count) products")
    /// }
    /// ```
    ///
    /// The writer's commits are seen as they happen: the writer records which tables each
    /// transaction changed, and an observation that read one of them fetches again on a reader
    /// once the commit is visible there, so an observer never holds the writer. Commits of other
    /// connections and processes are seen within about a tenth of a second (see
    /// ``Database/values(of:)``). The sequence behaves as described at ``LiveValues``.
    public func values<Value>(of request: LiveRequest<Value>) -> LiveValues<Value> {
        LiveValues(host: self, request: request)
    }

    func startObserving<Value>(_ request: LiveRequest<Value>, signal: ObservationSignal) async throws
        -> (id: UInt64, value: Value) {
        guard !isClosed else { throw SqlCipherError.databaseClosed }
        let id = relay.register(signal)
        let observation = PoolObservation(LiveObservation(request: request, signal: signal))
        observations.insert(observation, id: id)
        observations.startWatching(self)
        do {
            let value = try await fetch(id: id) { core in
                try observation.withLive { live in (try live.fetchValue(on: core), live.region) }
            }
            return (id, value)
        } catch {
            await stopObserving(id)
            throw error
        }
    }

    func fetchObserved<Value>(_ id: UInt64, as type: Value.Type) async throws -> ObservedFetch<Value> {
        guard let observation = observations[id] as? PoolObservation<Value> else { return .ended }
        // Lowered before the fetch: a commit after it raises the flag again.
        observation.signal?.clearDirty()
        do {
            let value = try await fetch(id: id) { core in
                try observation.withLive { live in (try live.fetchIfChanged(on: core), live.region) }
            }
            return value.map(ObservedFetch.changed) ?? .unchanged
        } catch {
            await stopObserving(id)
            throw error
        }
    }

    func stopObserving(_ id: UInt64) async {
        relay.remove(id)
        observations.remove(id)
    }

    /// Fetches on a reader, in one read transaction, telling the relay when the snapshot may be
    /// taken and which tables the fetch read (`body` returns them with its value).
    private func fetch<T: Sendable>(id: UInt64,
                                    _ body: @Sendable (SQLiteConnection) throws -> (T, TableRegion)) async throws -> T {
        relay.fetchWillStart(id)
        do {
            let (value, region) = try await _withConnection(.snapshot) { conn in
                let core = conn.core
                return try core.inSavepoint(readOnly: true) { try body(core) }
            }
            relay.fetchDidEnd(id, region: region)
            return value
        } catch {
            relay.fetchDidEnd(id, region: nil)
            throw error
        }
    }

    /// One check of the pool's watch for other connections' commits: runs on the writer (whose
    /// `data_version` changes only for commits not its own). Returns false once nothing is observed.
    func checkExternalChanges() async -> Bool {
        guard !isClosed, relay.count > 0 else { return false }
        let version = try? await writer._withConnection(.write) { conn in try conn.core.dataVersion() }
        if let version, observations.noteDataVersion(version) { relay.externalChange() }
        return true
    }
}

/// One observation of a pool: its ``LiveObservation`` (the last result, to tell an unchanged
/// fetch), used by one fetch at a time on whichever reader runs it.
final class PoolObservation<Value: Sendable>: @unchecked Sendable {
    // Used by one fetch at a time, and no lock is held while a fetch's SQL runs: the fetches of
    // one observation come from its consumer one after the other (each awaited before the next
    // starts), on different readers (threads), and the awaits between them order their memory
    // accesses. `inUse` turns a broken sequence (one iterator's copies used by two tasks at once)
    // into a typed error rather than a data race.
    private let inUse = Atomic<Bool>(false)
    private let live: LiveObservation<Value>
    /// The consumer's signal (held weakly, as the tracker of a ``Database`` holds it); set once.
    private(set) weak var signal: ObservationSignal?

    init(_ live: LiveObservation<Value>) {
        self.live = live
        self.signal = live.signal
    }

    func withLive<T>(_ body: (LiveObservation<Value>) throws -> T) throws -> T {
        guard inUse.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            throw SqlCipherError.invalidQuery(
                reason: "one live query was fetched by two tasks at once (copies of one LiveValues iterator used "
                    + "concurrently); give each task an iterator of its own")
        }
        defer { inUse.store(false, ordering: .releasing) }
        return try body(live)
    }
}

/// The observations of a pool, and its watch for other connections' commits.
final class PoolObservations: Sendable {
    private struct State {
        /// `PoolObservation<Value>` of each observation's own value type.
        var entries: [UInt64: AnyObject & Sendable] = [:]
        var watch: ExternalChangeWatch?
        var dataVersion: Int?
    }

    private let state = Mutex(State())

    subscript(id: UInt64) -> (AnyObject & Sendable)? { state.withLock { $0.entries[id] } }

    func insert(_ observation: AnyObject & Sendable, id: UInt64) {
        state.withLock { $0.entries[id] = observation }
    }

    func remove(_ id: UInt64) {
        state.withLock { $0.entries[id] = nil }
    }

    /// Starts the watch unless it runs. It reads its first version on the writer, which may be
    /// busy, so not here: an observation must never wait for the writer. Until that first version
    /// is known, a commit of another process may go unseen, so the first check counts as a change
    /// (one more fetch, which finds the result unchanged if nothing happened).
    func startWatching(_ pool: DatabasePool) {
        guard state.withLock({ $0.watch == nil }) else { return }
        let watch = ExternalChangeWatch.start { [weak pool] in
            guard let pool else { return false }
            if await pool.checkExternalChanges() { return true }
            // Nothing was observed at the check; an observation that registered since found this
            // watch still set and started none, so the watch goes on for it.
            return !pool.observations.endWatch(unlessObservedIn: pool)
        }
        let started = state.withLock { state -> Bool in
            guard state.watch == nil else { return false }
            state.watch = watch
            state.dataVersion = nil
            return true
        }
        if !started { watch.stop() }
    }

    /// Records `version`; true when it differs from the last one (another connection committed),
    /// or when it is the first one (see ``startWatching(_:)``).
    func noteDataVersion(_ version: Int) -> Bool {
        state.withLock { state in
            defer { state.dataVersion = version }
            return state.dataVersion.map { $0 != version } ?? true
        }
    }

    /// Forgets the watch, which is ending, unless an observation registered since its last check
    /// (then it must go on: that observation's ``startWatching(_:)`` saw it running and started
    /// none). True when the watch may end. Decided under the lock that ``startWatching(_:)`` takes,
    /// so an observation either finds no watch and starts one, or is seen here.
    fileprivate func endWatch(unlessObservedIn pool: DatabasePool) -> Bool {
        state.withLock { state in
            guard pool.isClosed || pool.relay.count == 0 else { return false }
            state.watch = nil
            state.dataVersion = nil
            return true
        }
    }

    func stopWatching() {
        let watch = state.withLock { state -> ExternalChangeWatch? in
            defer { state.watch = nil }
            return state.watch
        }
        watch?.stop()
    }
}
