/// What one connection knows about the changes it makes, for live queries.
///
/// - When a statement first runs while someone observes, it is compiled a second time with the
///   authorizer recording (``StatementAccess``), and the result is kept with the statement until
///   something invalidates it (``generation``).
/// - The tables a running statement can write join ``pending``, the transaction's changed tables.
/// - The commit hook marks the observations that read any of them as dirty; the rollback hook
///   discards them. A savepoint rollback (`ROLLBACK TO`) keeps them: the tables stay "possibly
///   changed", and the fetch that follows finds the result unchanged and yields nothing.
///
/// With no observation registered, a statement's run costs one flag test and nothing else.
/// Used only on its connection's isolation domain (the database actor); the hooks run there too,
/// inside `sqlite3_step`.
final class ChangeTracker {
    /// Bumped whenever statement analyses may have gone stale; an analysis from an older
    /// generation is redone before use.
    private(set) var generation: UInt64 = 1

    /// Where the authorizer records while a statement is being analysed; nil the rest of the time,
    /// so that ordinary compiles (and SQLite's own re-preparations) cost a nil test.
    var compiling: StatementAccess?

    /// The tables read by the statements of the fetch in progress, if one is.
    private var readRecorder: TableRegion?

    /// Whether a fetch is in progress, whose statements' reads are recorded.
    var isRecordingReads: Bool { readRecorder != nil }

    /// Whether the loaded SQLite reports `SQLITE_READ` for tables from which no column is read;
    /// found once per connection (see ``StatementAccess/readsComplete``).
    var reportsReadsWithoutColumns: Bool?

    /// Tables the open transaction may have written. Emptied only through ``clearPending()``.
    private var pending = TableRegion()

    /// Counts the times ``pending`` was emptied, so that a statement whose writes were merged
    /// since can be recognised (``isSettled(_:)``).
    private var pendingEpoch: UInt64 = 0

    /// The last statement accounted for inside a transaction, with the ``generation`` and
    /// ``pendingEpoch`` of then: while none of the three changed, running it again adds nothing.
    /// Keyed by ``Statement/serial``, which no other statement of the connection ever has.
    private var settled: (serial: UInt64, generation: UInt64, epoch: UInt64)?

    /// Tables the statement running now (the last one accounted for) can write. Counted again at
    /// commit because SQLite can roll back and retry inside one `sqlite3_step`: a statement that
    /// finds the schema changed (for example by a new trigger) aborts its first attempt, which
    /// runs the rollback hook, then is prepared again and commits.
    private var runningWrites = TableRegion()

    private var observations: [UInt64: any ObservationEntry] = [:]
    private var nextObservationID: UInt64 = 1

    /// Whether statements must be analysed as they run: some observation exists, or one is
    /// fetching, here or on the readers of the pool this connection writes for.
    var isActive: Bool { isLocallyActive || relay?.isObserving == true }

    /// Whether an observation of this connection exists or one is fetching.
    private var isLocallyActive = false

    /// On the writer of a ``DatabasePool``: where its commits go for the pool's observations.
    var relay: CommitRelay?

    /// Whether an observation anywhere depends on this connection's writes.
    private var hasObservers: Bool { !observations.isEmpty || relay?.isObserving == true }

    /// How many statement analyses and observation fetches ran, for tests that must tell "nothing
    /// happened" from "it happened and found nothing" without timing. Nil, and nothing counted,
    /// until a test asks for it (`Database.recordLiveTracking()`).
    var probe: Probe?

    struct Probe {
        var analyses = 0
        var fetches = 0
    }

    deinit {
        // The connection is closing: wake every consumer so that its next fetch reports the
        // closed database instead of waiting forever.
        for entry in observations.values { entry.signal?.markDirty() }
    }

    // MARK: Observations

    /// Adds an observation and returns its identifier.
    func register(_ entry: any ObservationEntry) -> UInt64 {
        if observations.isEmpty {
            // Nothing was analysed while nobody observed: schema changes may have gone unseen.
            generation &+= 1
        }
        let id = nextObservationID
        nextObservationID &+= 1
        observations[id] = entry
        updateActive()
        return id
    }

    func observation(_ id: UInt64) -> (any ObservationEntry)? {
        observations[id]
    }

    func removeObservation(_ id: UInt64) {
        observations[id] = nil
        updateActive()
    }

    /// The number of live observations, after dropping those whose consumer went away.
    var observationCount: Int {
        pruneAbandoned()
        return observations.count
    }

    private func pruneAbandoned() {
        let abandoned = observations.filter { $0.value.signal == nil }.keys
        guard !abandoned.isEmpty else { return }
        for id in abandoned { observations[id] = nil }
        updateActive()
    }

    private func updateActive() {
        isLocallyActive = !observations.isEmpty || readRecorder != nil
        if !hasObservers {
            // Nothing is accounted for while nobody observes; forget what was.
            clearPending()
            runningWrites = TableRegion()
        }
    }

    private func clearPending() {
        pending = TableRegion()
        pendingEpoch &+= 1
    }

    /// Whether running the statement numbered `serial` again, inside the same transaction, would
    /// change nothing: it was the last one accounted for, its writes already joined ``pending``,
    /// and no analysis went stale since. A loop of inserts then pays one comparison per row
    /// instead of a set union.
    func isSettled(_ serial: UInt64) -> Bool {
        guard let settled, readRecorder == nil else { return false }
        return settled.serial == serial && settled.generation == generation && settled.epoch == pendingEpoch
    }

    // MARK: Reads

    /// Runs `body` (a fetch) and returns the tables its statements read.
    func recordingReads<T>(_ body: () throws -> T) throws -> (value: T, region: TableRegion) {
        let outer = readRecorder
        readRecorder = TableRegion()
        updateActive()
        defer {
            readRecorder = outer
            updateActive()
        }
        let value = try body()
        return (value, readRecorder ?? TableRegion())
    }

    // MARK: Statements

    /// Accounts for one execution of a statement, before its first step.
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` when a fetch runs a statement that writes.
    func statementWillRun(_ access: StatementAccess, serial: UInt64, isReadOnly: Bool, sql: String,
                          isInTransaction: () -> Bool) throws {
        settled = nil
        if access.invalidatesAnalysis { generation &+= 1 }
        if readRecorder != nil {
            guard isReadOnly else {
                // Quoted as every description quotes SQL, redacted: a `key=` literal of the text
                // showed as written (found by the attack review).
                throw SqlCipherError.invalidQuery(
                    reason: "a live request must only read, but it ran a statement that writes: "
                        + "\(SqlCipherError.quoted(sql)). Make the change with Database.execute or transaction, outside "
                        + "the request")
            }
            readRecorder?.formUnion(access.reads)
        }
        guard hasObservers else { return }
        runningWrites = access.writes
        if !access.writes.isEmpty {
            // Outside a transaction, whatever is pending belongs to one that ended without a
            // commit or rollback hook (it wrote nothing): start afresh.
            if !pending.isEmpty && !isInTransaction() { clearPending() }
            pending.formUnion(access.writes)
        }
        if readRecorder == nil && isInTransaction() {
            settled = (serial, generation, pendingEpoch)
        }
    }

    // MARK: Transaction hooks

    /// From the commit hook: the observations of the changed tables are marked dirty. Must not
    /// call into SQLite (https://sqlite.org/c3ref/commit_hook.html).
    ///
    /// Should the commit still fail afterwards (`SQLITE_BUSY`), a consumer may fetch inside the
    /// still-open transaction; such a fetch asks for another one when the transaction ends
    /// (``noteFetch(_:isInTransaction:)``), so nothing is lost.
    func transactionWillCommit() {
        var changed = pending
        changed.formUnion(runningWrites)
        clearPending()
        relay?.transactionWillCommit(changed: changed)
        guard !observations.isEmpty else { return }
        for (id, entry) in observations {
            guard let signal = entry.signal else {
                observations[id] = nil
                continue
            }
            if entry.refetchWhenTransactionEnds || entry.region.intersects(changed) {
                entry.refetchWhenTransactionEnds = false
                signal.markDirty()
            }
        }
        updateActive()
    }

    /// Another connection changed the database: every observation fetches again (which tables it
    /// changed is not known).
    func markAllDirty() {
        // It may have changed the schema too (a new trigger), which this connection's analyses
        // would not know about.
        generation &+= 1
        for entry in observations.values { entry.signal?.markDirty() }
    }

    /// From the rollback hook: nothing pending happened. Observations that fetched inside the
    /// transaction (and may show its uncommitted rows) fetch again.
    func transactionDidRollBack() {
        clearPending()
        // The rollback may have undone a schema change that analyses already saw.
        generation &+= 1
        for entry in observations.values where entry.refetchWhenTransactionEnds {
            entry.refetchWhenTransactionEnds = false
            entry.signal?.markDirty()
        }
    }

    /// Records that `entry` just fetched; inside a transaction that was opened by hand, the fetch
    /// can see uncommitted rows, so it is repeated when the transaction ends.
    func noteFetch(_ entry: any ObservationEntry, isInTransaction: Bool) {
        probe?.fetches += 1
        entry.refetchWhenTransactionEnds = isInTransaction
    }

    /// The live observations and whether each waits for a fetch, for tests.
    var observationStates: [(tables: Set<String>, isDirty: Bool)] {
        pruneAbandoned()
        return observations.values.map { ($0.region.tables, $0.signal?.isDirty ?? false) }
    }
}

/// The tracker's view of one observation.
protocol ObservationEntry: AnyObject {
    /// The consumer's side; nil once the consumer has gone away.
    var signal: ObservationSignal? { get }
    /// The tables the last fetch read.
    var region: TableRegion { get }
    /// Whether the last fetch ran inside an open transaction.
    var refetchWhenTransactionEnds: Bool { get set }
}

extension ChangeTracker: AuthorizerListener {
    /// Records an allowed action into the analysis in progress (``compiling``).
    func authorizerAllowed(action: Int32, first: UnsafePointer<CChar>?, second: UnsafePointer<CChar>?) {
        compiling?.record(action: action, first: first, second: second)
    }
}
