import Synchronization

/// What a database tells its ``ExternalChangeWatch`` at one check.
enum ExternalChangeReading: Sendable {
    /// Nothing is observed any more: the watch may end.
    case unobserved
    /// The version could not be read (a busy or closing file): the check is skipped.
    case unavailable
    /// `PRAGMA data_version` on a connection whose version moves only for commits of others.
    case version(Int)
    /// The file no longer opens with the connection's key (`SQLITE_NOTADB`: most likely another
    /// connection changed the key). Counted as a change, so that each observer fetches again and
    /// ends with the typed error of that fetch, rather than waiting for ever for a version no
    /// check could read any more.
    case unreadable
}

/// The side of a database that its ``ExternalChangeWatch`` calls: ``Database`` reads the version
/// on its only connection, ``DatabasePool`` on its writer (whose version ignores the pool's own
/// commits, which the writer's hooks already report).
protocol ExternalChangeHost: AnyObject, Sendable {
    /// One reading, or why there is none. Runs one `PRAGMA data_version`; no lock of the watch is
    /// held while it runs.
    func readExternalVersion() async -> ExternalChangeReading
    /// Another connection or process committed: every observation fetches again.
    func externalChangeDidHappen() async
}

/// The one watch, for ``Database`` and ``DatabasePool`` alike, for commits made to the file by
/// other connections and processes: the part of live queries that SQLite's hooks cannot report
/// (they fire only for the connection's own commits).
///
/// While something is observed, the watch asks its host ten times a second for
/// `PRAGMA data_version` (https://sqlite.org/pragma.html#pragma_data_version): a read of a counter
/// in the shared WAL index or the file header, with no lock held afterwards. A version that
/// differs from the last one is a commit by someone else. The watch ends when the host reports
/// nothing observed, so an unobserved database pays nothing, and starts again with the next
/// observation.
///
/// The lock guards only the watch's own fields; it is never held while the host runs SQL, and no
/// other lock is taken while it is held (see the lock table in <doc:Architecture>).
final class ExternalChangeWatch: Sendable {
    /// How long between two checks: a change is seen within this time plus one fetch.
    static let interval: Duration = .milliseconds(100)

    private struct State {
        var task: Task<Void, Never>?
        /// The last version read; nil until the first reading after a start.
        var version: Int?
        /// Bumped by each ``start(host:version:)``: a check that found nothing observed ends the
        /// watch only if no observation asked for it since the check began.
        var demand: UInt64 = 0
        /// Set by ``stop()``: the database closed, and the watch never starts again.
        var isStopped = false
    }

    private let state = Mutex(State())

    /// Called after each new observation registered with the host. Starts the watch unless it
    /// runs; `version` is the host's current version when it could read it without waiting (nil:
    /// the first reading then counts as a change, one more fetch that finds the result unchanged
    /// if nothing happened, since a commit of another process before it could otherwise go unseen).
    func start(host: some ExternalChangeHost, version: Int?) {
        state.withCheckedLock { state in
            state.demand &+= 1
            guard state.task == nil, !state.isStopped else { return }
            state.version = version
            state.task = Task.detached { [weak self, weak host] in
                while !Task.isCancelled {
                    // Not Task.sleep: see ThreadSleeper (a first timer at the descriptor limit traps).
                    await ThreadSleeper.shared.sleep(for: Self.interval)
                    guard !Task.isCancelled, let watch = self, let host, await watch.check(host) else { return }
                }
            }
        }
    }

    /// One check; false when the watch ended.
    private func check(_ host: some ExternalChangeHost) async -> Bool {
        // Read before the host is asked: an observation that registers after the host answered
        // "unobserved" bumps it, and keeps the watch going (see `endUnlessDemanded`).
        let demand = state.withCheckedLock { $0.demand }
        switch await host.readExternalVersion() {
        case .unobserved:
            return !endUnlessDemanded(since: demand)
        case .unavailable:
            return true
        case .unreadable:
            await host.externalChangeDidHappen()
            return true
        case .version(let version):
            if note(version) { await host.externalChangeDidHappen() }
            return true
        }
    }

    /// Records `version`; true when it differs from the last one, or is the first one.
    private func note(_ version: Int) -> Bool {
        state.withCheckedLock { state in
            defer { state.version = version }
            return state.version.map { $0 != version } ?? true
        }
    }

    /// Forgets the running watch unless an observation asked for it since `demand` was read (that
    /// observation saw this watch running and started none). True when the watch ends.
    private func endUnlessDemanded(since demand: UInt64) -> Bool {
        state.withCheckedLock { state in
            guard state.demand == demand || state.isStopped else { return false }
            state.task = nil
            state.version = nil
            return true
        }
    }

    /// Ends the watch for good (the database closed).
    func stop() {
        let task = state.withCheckedLock { state -> Task<Void, Never>? in
            state.isStopped = true
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
    }

    /// Whether the watch runs (for tests).
    var isRunning: Bool { state.withCheckedLock { $0.task != nil } }
}
