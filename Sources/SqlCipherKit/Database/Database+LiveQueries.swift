extension Database {
    /// The values of `request` as the database changes: the current value first, then one value
    /// after each committed transaction that changed the result.
    ///
    /// ```swift
    /// for try await count in db.values(of: .count(Product.self)) {
    ///     print("\(count) products")
    /// }
    /// ```
    ///
    /// Only this `Database`'s own writes are seen: another connection to the same file, or another
    /// process, changes nothing here. See ``LiveValues`` for the sequence's behaviour and
    /// `docs/guide.md` (live queries) for how changes are detected and the limits.
    public nonisolated func values<Value>(of request: LiveRequest<Value>) -> LiveValues<Value> {
        LiveValues(database: self, request: request)
    }

    /// Registers an observation of `request` and fetches its first value.
    func startObserving<Value>(_ request: LiveRequest<Value>, signal: ObservationSignal) throws
        -> (id: UInt64, value: Value) {
        let core = try liveConnection()
        let tracker = core.changeTracker
        let observation = LiveObservation(request: request, signal: signal)
        let id = tracker.register(observation)
        do {
            let value = try observation.fetchValue(on: core)
            tracker.noteFetch(observation, isInTransaction: core.isInTransaction)
            return (id, value)
        } catch {
            tracker.removeObservation(id)
            throw error
        }
    }

    /// Fetches a dirty observation again; an unchanged result is reported as such, not decoded.
    func fetchObserved<Value>(_ id: UInt64, as type: Value.Type) throws -> ObservedFetch<Value> {
        let core = try liveConnection()
        let tracker = core.changeTracker
        guard let observation = tracker.observation(id) as? LiveObservation<Value> else { return .ended }
        // Lowered before the fetch: a commit after it raises the flag again.
        observation.signal?.clearDirty()
        do {
            let value = try observation.fetchIfChanged(on: core)
            tracker.noteFetch(observation, isInTransaction: core.isInTransaction)
            return value.map(ObservedFetch.changed) ?? .unchanged
        } catch {
            tracker.removeObservation(id)
            throw error
        }
    }

    /// Removes an observation whose consumer stopped.
    func stopObserving(_ id: UInt64) {
        connection?.changeTracker.removeObservation(id)
    }

    /// How many observations are registered (for tests): after cancellation, none.
    var liveObservationCount: Int {
        connection?.changeTracker.observationCount ?? 0
    }

    /// The change tracker's counters and observations, for tests.
    var liveTrackingState: LiveTrackingState {
        let tracker = connection?.changeTracker
        return LiveTrackingState(
            analyses: tracker?.analysisCount ?? 0, fetches: tracker?.fetchCount ?? 0,
            observations: tracker?.observationStates.map { LiveTrackingState.Observation(tables: $0.tables, isDirty: $0.isDirty) } ?? [])
    }
}

/// A snapshot of a database's change tracking, for tests.
struct LiveTrackingState: Sendable {
    struct Observation: Sendable {
        let tables: Set<String>
        let isDirty: Bool
    }

    /// Statements analysed (compiled a second time with the authorizer recording).
    let analyses: Int
    /// Observation fetches, first ones included.
    let fetches: Int
    let observations: [Observation]
}
