extension Database: ObservationHost, ExternalChangeHost {
    /// The values of `request` as the database changes: the current value first, then one value
    /// after each committed transaction that changed the result.
    ///
    /// ```swift
    /// for try await count in db.values(of: .count(Product.self)) {
    ///     print("\(count) products")
    /// }
    /// ```
    ///
    /// Commits made by this `Database` are seen as they happen. Commits made to the same file by
    /// another connection or another process (a second `Database`, a ``DatabasePool``, the
    /// `sqlcipher` tool, a widget) are seen within about a tenth of a second: while observations
    /// exist, the database checks SQLite's `PRAGMA data_version` ten times a second
    /// (https://sqlite.org/pragma.html#pragma_data_version), and costs nothing when none exists.
    /// See ``LiveValues`` for the sequence's behaviour and <doc:LiveQueries> for how
    /// changes are detected and the limits.
    public nonisolated func values<Value>(of request: LiveRequest<Value>) -> LiveValues<Value> {
        LiveValues(host: self, request: request)
    }

    /// Registers an observation of `request` and fetches its first value.
    func startObserving<Value>(_ request: LiveRequest<Value>, signal: ObservationSignal) throws
        -> (id: UInt64, value: Value) {
        let core = try liveConnection()
        let tracker = core.changeTracker
        let observation = LiveObservation(request: request, signal: signal)
        let id = tracker.register(observation)
        watchExternalChanges(on: core)
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

    /// Starts the watch for other connections' commits unless it runs. The version is read before
    /// the first fetch, so a commit between that fetch and the first check is not missed.
    private func watchExternalChanges(on core: SQLiteConnection) {
        externalWatch.start(host: self, version: externalWatch.isRunning ? nil : try? core.dataVersion())
    }

    /// One reading for the watch, on the database's only connection: its `data_version` moves only
    /// for commits of other connections.
    func readExternalVersion() -> ExternalChangeReading {
        guard let core = connection, core.changeTracker.observationCount > 0 else { return .unobserved }
        // A file removed, or another renamed over its path: its data_version never moves again,
        // and the observers would show the old file's rows for ever. Their fetch now fails with
        // the "replaced or moved" error (MovedFileCheck).
        if core.movedFileCheck.noticeIfMoved() { return .unreadable }
        // A busy file is a check skipped, not an error for the observers; a file that no longer
        // opens with this key (another connection rekeyed it) is a change, which their fetch reports.
        do {
            return .version(try core.dataVersion())
        } catch let SqlCipherError.sqlite(code, _, _, _) where code == SQLiteConnection.sqliteNotADatabase {
            return .unreadable
        } catch {
            return .unavailable
        }
    }

    func externalChangeDidHappen() {
        connection?.changeTracker.markAllDirty()
    }

    /// Removes an observation whose consumer stopped.
    func stopObserving(_ id: UInt64) {
        connection?.changeTracker.removeObservation(id)
    }

    /// How many observations are registered (for tests): after cancellation, none.
    package var liveObservationCount: Int {
        connection?.changeTracker.observationCount ?? 0
    }

    /// Starts counting statement analyses and observation fetches (for tests; off by default, so
    /// that the statement path counts nothing).
    package func recordLiveTracking() {
        guard let tracker = connection?.changeTracker, tracker.probe == nil else { return }
        tracker.probe = ChangeTracker.Probe()
    }

    /// The change tracker's counters (zero unless ``recordLiveTracking()`` was called) and
    /// observations, for tests.
    package var liveTrackingState: LiveTrackingState {
        let tracker = connection?.changeTracker
        return LiveTrackingState(
            analyses: tracker?.probe?.analyses ?? 0, fetches: tracker?.probe?.fetches ?? 0,
            observations: tracker?.observationStates.map { LiveTrackingState.Observation(tables: $0.tables, isDirty: $0.isDirty) } ?? [])
    }
}

/// A snapshot of a database's change tracking, for tests.
package struct LiveTrackingState: Sendable {
    package struct Observation: Sendable {
        package let tables: Set<String>
        package let isDirty: Bool
    }

    /// Statements analysed (compiled a second time with the authorizer recording).
    package let analyses: Int
    /// Observation fetches, first ones included.
    package let fetches: Int
    package let observations: [Observation]
}
