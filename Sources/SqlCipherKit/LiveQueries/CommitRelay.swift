import Synchronization

/// Carries the commits of a pool's writer to observations that fetch on the pool's readers.
///
/// A ``Database`` marks an observation dirty from inside the commit hook and fetches it again on
/// the same connection once the committing call is over, so the fetch always sees the commit. An
/// observation of a ``DatabasePool`` fetches on a reader, which sees a commit only once SQLite has
/// finished it, after the hook: waking the consumer from the hook could let its fetch take a
/// snapshot from before the commit, find the result unchanged, and miss the change for good. So
/// the relay only stages observations in the hook, and the pool publishes them (wakes their
/// consumers) after the writer's call has returned.
///
/// Three cases would otherwise lose a change, and each is covered by fetching once more:
/// - a commit hooked before an observation registered, but not yet visible to its first fetch:
///   an observation that registers or starts a fetch while a hooked commit is unpublished is
///   staged at the next publication;
/// - a commit during a fetch, whose tables are not known until the fetch ends: while it fetches,
///   an observation depends on every table;
/// - a transaction that began before the first observation made the writer account for its
///   statements: the first commit after an activation stages every observation.
///
/// Shared by the writer's executor (the hooks) and every reader: all state is behind one lock.
final class CommitRelay: Sendable {
    /// Holds the consumer's signal weakly, like the tracker of a ``Database``: a consumer that
    /// left its loop without cancelling is dropped at the next commit.
    final class Entry: @unchecked Sendable {
        // Written once, in init; a weak reference is read atomically by the runtime.
        private(set) weak var signal: ObservationSignal?
        init(signal: ObservationSignal) { self.signal = signal }
    }

    private struct Observed {
        let entry: Entry
        /// The tables the last complete fetch read; everything while a fetch runs.
        var region = TableRegion.everything
    }

    private struct State {
        var observed: [UInt64: Observed] = [:]
        var nextID: UInt64 = 1
        /// Commits hooked since the last publication.
        var unpublishedCommits = 0
        /// Observations woken at the next publication.
        var staged: Set<UInt64> = []
        /// Set when observation starts; the next commit then changes every table.
        var activatedSinceCommit = false
    }

    private let state = Mutex(State())
    /// Read on every statement the writer runs: an atomic rather than the lock.
    private let observing = Atomic<Bool>(false)

    /// Whether any observation is registered: the writer accounts for its statements only then.
    var isObserving: Bool { observing.load(ordering: .acquiring) }

    /// Registers an observation; its region is every table until its first fetch ends.
    func register(_ signal: ObservationSignal) -> UInt64 {
        state.withCheckedLock { state in
            let id = state.nextID
            state.nextID &+= 1
            state.observed[id] = Observed(entry: Entry(signal: signal))
            if state.unpublishedCommits > 0 { state.staged.insert(id) }
            if state.observed.count == 1 {
                state.activatedSinceCommit = true
                observing.store(true, ordering: .releasing)
            }
            return id
        }
    }

    func remove(_ id: UInt64) {
        state.withCheckedLock { state in
            state.observed[id] = nil
            state.staged.remove(id)
            if state.observed.isEmpty { observing.store(false, ordering: .releasing) }
        }
    }

    var count: Int { state.withCheckedLock { $0.observed.count } }

    /// Called before a fetch of observation `id` takes its snapshot.
    func fetchWillStart(_ id: UInt64) {
        state.withCheckedLock { state in
            guard state.observed[id] != nil else { return }
            state.observed[id]?.region = .everything
            if state.unpublishedCommits > 0 { state.staged.insert(id) }
        }
    }

    /// Called when a fetch of observation `id` ended, with the tables it read (nil when it failed).
    func fetchDidEnd(_ id: UInt64, region: TableRegion?) {
        state.withCheckedLock { state in
            guard state.observed[id] != nil else { return }
            state.observed[id]?.region = region ?? .everything
        }
    }

    /// From the writer's commit hook, with the tables the transaction may have changed. Never calls
    /// into SQLite and wakes nobody.
    func transactionWillCommit(changed: TableRegion) {
        state.withCheckedLock { state in
            guard !state.observed.isEmpty else { return }
            state.unpublishedCommits += 1
            let all = state.activatedSinceCommit
            state.activatedSinceCommit = false
            for (id, observed) in state.observed {
                if observed.entry.signal == nil {
                    state.observed[id] = nil
                } else if all || observed.region.intersects(changed) {
                    state.staged.insert(id)
                }
            }
            if state.observed.isEmpty { observing.store(false, ordering: .releasing) }
        }
    }

    /// A change made by another connection or process, already visible to every reader: every
    /// observation fetches again at once. Leaves the writer's staged commits alone, since one may
    /// be hooked and not yet visible.
    func externalChange() {
        let all = state.withCheckedLock { state in state.observed.values.map(\.entry) }
        for entry in all { entry.signal?.markDirty() }
    }

    /// Wakes the staged observations. Called after each call of the writer, when its commits are
    /// visible to every reader.
    func publish() {
        let woken: [Entry] = state.withCheckedLock { state in
            state.unpublishedCommits = 0
            guard !state.staged.isEmpty else { return [] }
            defer { state.staged.removeAll() }
            return state.staged.compactMap { state.observed[$0]?.entry }
        }
        for entry in woken { entry.signal?.markDirty() }
    }
}
