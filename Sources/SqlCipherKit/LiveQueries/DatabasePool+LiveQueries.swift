import Synchronization

extension DatabasePool: ObservationHost, ExternalChangeHost {
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
        // No version yet: it is read on the writer, which may be busy, and an observation must
        // never wait for the writer (the watch's first reading then counts as a change).
        observations.watch.start(host: self, version: nil)
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

    /// One reading for the watch, on the writer: its `data_version` moves only for commits not
    /// its own (the writer's own commits reach observations through the relay).
    func readExternalVersion() async -> ExternalChangeReading {
        guard !isClosed, relay.count > 0 else { return .unobserved }
        do {
            // A file gone from its path (Database.readExternalVersion says why): the fetches, on
            // readers that still have the old file, fail from now on with the "replaced or moved" error.
            let version = try await writer._withConnection(.write) { conn -> Int? in
                conn.core.movedFileCheck.noticeIfMoved() ? nil : try conn.core.dataVersion()
            }
            guard let version else {
                fileLeftPath.store(true, ordering: .releasing)
                return .unreadable
            }
            return .version(version)
        } catch let SqlCipherError.sqlite(code, _, _, _) where code == SQLiteConnection.sqliteNotADatabase {
            return .unreadable
        } catch {
            return .unavailable
        }
    }

    func externalChangeDidHappen() {
        relay.externalChange()
    }
}

/// One observation of a pool: its ``LiveObservation`` (the last result, to tell an unchanged
/// fetch), used by one fetch at a time on whichever reader runs it.
final class PoolObservation<Value: Sendable>: @unchecked Sendable {
    // Used by one fetch at a time, and no lock is held while a fetch's SQL runs: the fetches of
    // one observation come from its consumer one after the other (each awaited before the next
    // starts), on different readers (threads), and the awaits between them order their memory
    // accesses. `inUse` turns a broken sequence (one iterator's copies used by two tasks at once)
    // into a typed error rather than a data race. It is not a lock: nobody ever waits for it, a
    // second user throws at once.
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
    /// `PoolObservation<Value>` of each observation's own value type. Held only to find or change
    /// an entry: never while a fetch runs, and no other lock is taken under it.
    private let entries = Mutex<[UInt64: AnyObject & Sendable]>([:])
    let watch = ExternalChangeWatch()

    subscript(id: UInt64) -> (AnyObject & Sendable)? { entries.withCheckedLock { $0[id] } }

    func insert(_ observation: AnyObject & Sendable, id: UInt64) {
        entries.withCheckedLock { $0[id] = observation }
    }

    func remove(_ id: UInt64) {
        entries.withCheckedLock { $0[id] = nil }
    }

    /// Ends the watch for good (the pool closed).
    func stopWatching() {
        watch.stop()
    }
}
