import Dispatch
import Synchronization

/// The readers of a ``DatabasePool``: opened when concurrent reads need them, never more than the
/// maximum, reused most recently used first, and handed to waiting reads in arrival order.
///
/// Each reader is a ``Database`` (one connection, one executor of its own), checked out for one
/// call at a time, so a reader never runs two calls at once and never sees another call's
/// snapshot. The set is shared by every task that reads through the pool: its state is behind one
/// lock, and no lock is held while SQLite runs.
final class ReaderSet: Sendable {
    /// What a waiting checkout is given: a reader, or the right to open one.
    private enum Grant {
        case reader(Database)
        case open
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Grant, any Error>
    }

    private struct State {
        /// Idle readers, the most recently used last.
        var idle: [Database] = []
        /// Readers open or being opened, idle or not.
        var count = 0
        /// Readers checked out now.
        var busy = 0
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
        var isClosed = false
        /// While set (a rekey), no reader is handed out.
        var isExclusive = false
        /// The exclusive section waiting for busy readers to come back.
        var drain: ExclusiveWaiter?
        /// Exclusive sections waiting for the current one to end.
        var exclusiveQueue: [ExclusiveWaiter] = []
        var nextExclusive: UInt64 = 0
        /// Readers checked out for streams, by reader: a stream paused between batches gives its
        /// reader back to a waiting call (StreamHold.swift).
        var streamHolders: [ObjectIdentifier: StreamHolder] = [:]
        /// Whether a task watches paused streams for waiting calls.
        var isWatching = false
        /// The readers the process could open, when an opening ran out of file descriptors while
        /// others were open: no more are opened (reads wait for those) until no read waits.
        var openLimit: Int?
    }

    /// A reader checked out for a stream, and the stream's hold on it.
    private struct StreamHolder {
        let reader: Database
        let hold: StreamHold
    }

    /// An exclusive section (a rekey) waiting, until its task is cancelled.
    private struct ExclusiveWaiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// The most readers open at once.
    let maximum: Int
    private let state = Mutex(State())

    /// How many calls wait for a reader, and whether an exclusive section (a rekey) waits for busy
    /// readers to come back: what a test sequences on instead of sleeping until a call has
    /// reached its wait. Read under the lock, so a count seen is a wait that happened.
    var pendingWaits: (calls: Int, exclusive: Bool) {
        state.withCheckedLock { ($0.waiters.count, $0.drain != nil) }
    }
    /// Opens a new reader; blocking, so it runs on a dispatch queue, never on Swift's pool.
    private let open: @Sendable () throws -> Database

    init(maximum: Int, open: @escaping @Sendable () throws -> Database) {
        self.maximum = maximum
        self.open = open
    }

    /// Runs `body` on a reader checked out for it, and checks the reader back in.
    func withReader<T>(_ body: (Database) async throws -> T) async throws -> T {
        let reader = try await checkout()
        do {
            let value = try await body(reader)
            checkin(reader)
            return value
        } catch {
            checkin(reader, keep: !Self.leavesReaderUnusable(error, reader))
            throw error
        }
    }

    /// Whether `error`, thrown by a call on `reader`, leaves that connection unusable while a new
    /// one would serve: SQLCipher 4.7 and later keep a connection's codec in error for good once a
    /// page failed to read or decrypt on it (an I/O error, a damaged page), and answer every later
    /// statement with `SQLITE_NOMEM` (``SQLiteMessageAdvice/codecErrorSticks``). Such a reader is
    /// closed instead of kept, and the next read opens another: a pool recovers from a passing
    /// I/O error by itself, where a ``Database`` can only say to open the file again (it keeps no
    /// key). Memory that really ran out is only freed sooner by the close.
    private static func leavesReaderUnusable(_ error: any Error, _ reader: Database) -> Bool {
        guard case .sqlite(let code, _, _, _)? = error as? SqlCipherError, code == 7 || code == 10,
              reader.isEncrypted else { return false }
        return reader.library.cipherVersionIsAtLeast(4, 7)
    }

    /// How many readers are open (for tests and the benchmark).
    var openCount: Int { state.withCheckedLock { $0.count } }

    /// A reader for a stream, which keeps it across batches: while the stream is paused for
    /// ``DatabaseStream/preemptionDelay`` and another call waits, the reader is taken back.
    func checkout(holding hold: StreamHold) async throws -> Database {
        let reader = try await checkout()
        let watch = state.withCheckedLock { state -> Bool in
            state.streamHolders[ObjectIdentifier(reader)] = StreamHolder(reader: reader, hold: hold)
            return Self.startWatching(&state)
        }
        if watch { watchPausedStreams() }
        return reader
    }

    /// A reader for one call: an idle one (the most recently used), a new one while fewer than
    /// ``maximum`` are open, or else the next one checked in.
    ///
    /// An opening that fails because the process is out of file descriptors, while other readers
    /// are open, does not fail the read: it waits for one of those, and no more readers are
    /// opened until no read waits (a service at its descriptor limit serves its reads on the
    /// readers it has). With no other reader open, the read throws the opening's error.
    func checkout() async throws -> Database {
        while true {
            try Task.checkCancellation()
            let immediate: Grant? = try state.withCheckedLock { state in
                if state.isClosed { throw SqlCipherError.databaseClosed }
                return Self.grant(&state, maximum: maximum)
            }
            let grant: Grant
            if let immediate {
                grant = immediate
            } else {
                grant = try await wait()
            }
            switch grant {
            case .reader(let reader):
                return reader
            case .open:
                do {
                    return try await openReader()
                } catch {
                    let outOfDescriptors = ResourceExhaustion.isOutOfDescriptors(error)
                    // The slot was reserved for this reader: give it to a waiting checkout, or to
                    // a rekey that waits for this opening as for any busy reader.
                    let (waitInstead, resumes) = state.withCheckedLock { state -> (Bool, Resumes) in
                        state.count -= 1
                        let waitInstead = outOfDescriptors && state.count > 0 && !state.isClosed
                        if waitInstead { state.openLimit = state.count }
                        var resumes = Self.dispatch(&state, maximum: maximum)
                        Self.endBusy(&state, into: &resumes)
                        return (waitInstead, resumes)
                    }
                    resumes.run()
                    if !waitInstead { throw error }
                }
            }
        }
    }

    /// Returns a reader after its call. Hands it to the first waiting checkout, or keeps it idle;
    /// closes it when the pool was closed meanwhile, or when `keep` is false (a connection left
    /// unusable), which frees its place for a reader opened anew.
    func checkin(_ reader: Database, keep: Bool = true) {
        let (closeIt, resumes) = state.withCheckedLock { state -> (Bool, Resumes) in
            state.streamHolders[ObjectIdentifier(reader)] = nil
            var resumes = Resumes()
            let closeIt = state.isClosed || !keep
            if closeIt {
                state.count -= 1
            } else {
                state.idle.append(reader)
            }
            Self.endBusy(&state, into: &resumes)
            if !state.isClosed { resumes.grants = Self.dispatch(&state, maximum: maximum).grants }
            // The demand that met the descriptor limit has ended: the next one may open readers.
            if state.waiters.isEmpty { state.openLimit = nil }
            return (closeIt, resumes)
        }
        resumes.run()
        if closeIt { Task { await reader.close() } }
    }

    /// Runs `body` while no reader is checked out and none is open: waits for the running reads
    /// to end, closes the idle readers, and keeps new reads waiting until `body` returns. For a
    /// rekey, after which no reader may use the old key.
    func exclusively<T>(_ body: () async throws -> T) async throws -> T {
        try await enterExclusive()
        defer { leaveExclusive() }
        let (closed, isClosed) = state.withCheckedLock { state in
            let idle = state.idle
            state.idle = []
            state.count -= idle.count
            state.openLimit = nil
            return (idle, state.isClosed)
        }
        for reader in closed { await reader.close() }
        // Closed while this section waited: the body (a rekey) must not run.
        if isClosed { throw SqlCipherError.databaseClosed }
        return try await body()
    }

    /// Adds a reader opened outside ``checkout()`` (by a rekey, to prove the new key) as the most
    /// recently used idle one; closes it when the set is closed.
    func adopt(_ reader: Database) async {
        let accepted = state.withCheckedLock { state -> Bool in
            guard !state.isClosed, state.count < maximum else { return false }
            state.count += 1
            state.idle.append(reader)
            return true
        }
        if !accepted { await reader.close() }
    }

    /// Closes the set: idle readers now, busy ones when they come back; waiting and later
    /// checkouts throw ``SqlCipherError/databaseClosed``.
    func close() async {
        let (idle, waiters, holders) = state.withCheckedLock { state in
            state.isClosed = true
            let idle = state.idle
            state.idle = []
            state.count -= idle.count
            let waiters = state.waiters
            state.waiters = []
            return (idle, waiters, Array(state.streamHolders))
        }
        // Paused streams give their readers back now (a stream whose loop was left without its
        // iterator being destroyed would otherwise keep its reader open for good).
        let taken = takePausedStreams(holders, reason: "the pool was closed", pausedFor: .zero, limit: .max)
        for waiter in waiters { waiter.continuation.resume(throwing: SqlCipherError.databaseClosed) }
        for reader in idle { await reader.close() }
        for reader in taken { await giveBack(reader) }
    }

    // MARK: Internals

    /// Continuations to resume once the lock is released.
    private struct Resumes {
        var grants: [(Waiter, Grant)] = []
        var drain: CheckedContinuation<Void, any Error>?

        func run() {
            for (waiter, grant) in grants { waiter.continuation.resume(returning: grant) }
            drain?.resume()
        }
    }

    /// What a checkout may take now: nil when it must wait.
    private static func grant(_ state: inout State, maximum: Int) -> Grant? {
        guard !state.isExclusive else { return nil }
        if let reader = state.idle.popLast() {
            state.busy += 1
            return .reader(reader)
        }
        if state.count < min(maximum, state.openLimit ?? maximum) {
            state.count += 1
            state.busy += 1
            return .open
        }
        return nil
    }

    /// Ends one busy checkout (a reader checked in, or an opening that failed): the one place
    /// `busy` goes down. A rekey waiting for the last busy reader is woken, also after a close
    /// (it then finds the pool closed): a decrement elsewhere that did not wake it left the rekey,
    /// and every read queued behind it, waiting for ever (an opening that failed, for example for
    /// want of file descriptors, while a rekey waited).
    private static func endBusy(_ state: inout State, into resumes: inout Resumes) {
        state.busy -= 1
        if state.isExclusive, state.busy == 0, let drain = state.drain {
            state.drain = nil
            resumes.drain = drain.continuation
        }
    }

    /// Gives idle readers, or the right to open one, to waiting checkouts in arrival order.
    private static func dispatch(_ state: inout State, maximum: Int) -> Resumes {
        var resumes = Resumes()
        while !state.waiters.isEmpty, let grant = grant(&state, maximum: maximum) {
            resumes.grants.append((state.waiters.removeFirst(), grant))
        }
        return resumes
    }

    /// Takes up to `limit` readers from streams among `holders` paused for at least `pausedFor`,
    /// the longest paused first. Each taken stream throws ``SqlCipherError/streamPreempted(reason:)``
    /// if resumed; the caller ends its statement and checks the reader in (``giveBack(_:)``).
    ///
    /// Called without the set's lock, with a copy of its stream holders: each hold's own lock is
    /// taken alone, so the two locks never nest. A hold that was preempted is one its stream will
    /// never release (``StreamHold/end()`` then returns false), so its entry is still in the set
    /// when it is removed here; a stream that ended or resumed meanwhile is simply not taken.
    private func takePausedStreams(_ holders: [(key: ObjectIdentifier, value: StreamHolder)], reason: String,
                                   pausedFor: Duration, limit: Int) -> [Database] {
        let paused = holders.compactMap { key, holder in
            holder.hold.pausedSince.map { (key, holder, $0) }
        }.sorted { $0.2 < $1.2 }
        var taken: [(key: ObjectIdentifier, reader: Database)] = []
        for (key, holder, _) in paused where taken.count < limit {
            guard holder.hold.preempt(reason: reason, pausedFor: pausedFor) else { continue }
            taken.append((key, holder.reader))
        }
        guard !taken.isEmpty else { return [] }
        state.withCheckedLock { state in
            for (key, _) in taken { state.streamHolders[key] = nil }
        }
        return taken.map(\.reader)
    }

    /// Ends the stream statement a taken reader holds, then checks it in like any reader.
    private func giveBack(_ reader: Database) async {
        await reader.closeStreams()
        checkin(reader)
    }

    /// Whether calls wait that a reader held by a paused stream could serve.
    private static func hasWaiting(_ state: State) -> Bool {
        !state.waiters.isEmpty || state.drain != nil
    }

    /// Marks the watch as started when it is needed and not running; true when the caller must start it.
    private static func startWatching(_ state: inout State) -> Bool {
        guard !state.isWatching, hasWaiting(state), !state.streamHolders.isEmpty else { return false }
        state.isWatching = true
        return true
    }

    /// While calls wait and streams hold readers, takes the reader of each stream paused for
    /// ``DatabaseStream/preemptionDelay``, one per waiting call, the longest paused first.
    /// It sleeps until the next paused stream reaches the delay, and stops when nothing waits.
    private func watchPausedStreams() {
        let delay = DatabaseStream<Row>.preemptionDelay
        Task.detached { [self] in
            while true {
                let round = state.withCheckedLock { state -> (holders: [(key: ObjectIdentifier, value: StreamHolder)], wanted: Int, reason: String)? in
                    guard Self.hasWaiting(state), !state.streamHolders.isEmpty, !state.isClosed else {
                        state.isWatching = false
                        return nil
                    }
                    let wanted = state.drain != nil ? state.streamHolders.count : state.waiters.count
                    let reason = state.drain != nil
                        ? "a rekey of the pool waited for its reader while it was paused"
                        : "another read of the pool waited for its reader while it was paused"
                    return (Array(state.streamHolders), wanted, reason)
                }
                guard let round else { return }
                let taken = takePausedStreams(round.holders, reason: round.reason, pausedFor: delay, limit: round.wanted)
                // Taken streams are preempted, so no longer paused.
                let oldest = round.holders.compactMap { $0.value.hold.pausedSince }.min()
                // A stream reading a batch now pauses within one batch: look again after the delay.
                let wake = (oldest ?? .now) + delay
                for reader in taken { await giveBack(reader) }
                await ThreadSleeper.shared.sleep(until: max(wake, .now + .milliseconds(10)))
            }
        }
    }

    private func wait() async throws -> Grant {
        let id = state.withCheckedLock { state -> UInt64 in
            state.nextWaiter &+= 1
            return state.nextWaiter
        }
        return try await suspend({ state, continuation in
            if state.isClosed { return .failure(SqlCipherError.databaseClosed) }
            if Task.isCancelled { return .failure(CancellationError()) }
            if state.waiters.isEmpty, let grant = Self.grant(&state, maximum: maximum) { return .success(grant) }
            state.waiters.append(Waiter(id: id, continuation: continuation))
            // Spawning the watch takes no lock, so it may start from under this one.
            if Self.startWatching(&state) { watchPausedStreams() }
            return nil
        }, unpark: { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        })
    }

    /// Suspends the calling task, the one way every wait of the set is written: `park`, under the
    /// lock, either decides at once (a result) or stores the continuation (nil) for whoever
    /// resumes it later; a cancellation takes it back out with `unpark`, under the same lock, so
    /// that exactly one side resumes it, and throws `CancellationError`.
    private func suspend<T>(_ park: (inout State, CheckedContinuation<T, any Error>) -> Result<T, any Error>?,
                            unpark: @escaping @Sendable (inout State) -> CheckedContinuation<T, any Error>?)
        async throws -> T {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                if let now = state.withCheckedLock({ park(&$0, continuation) }) { continuation.resume(with: now) }
            }
        } onCancel: {
            state.withCheckedLock { unpark(&$0) }?.resume(throwing: CancellationError())
        }
    }

    /// Opens a reader off the caller's thread, on a queue of its own. An opening blocks (file
    /// reads, a busy file, a key derivation, a conversion's lock). It ran on the global concurrent
    /// queue before, whose threads are capped near the core count and, on Linux, are the threads
    /// of Swift's cooperative pool too: each opening held one of the few threads every task of the
    /// program runs on. A serial queue of its own gets a thread of its own.
    private func openReader() async throws -> Database {
        let open = self.open
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "SqlCipherKit.DatabasePool.openReader", qos: .userInitiated).async {
                continuation.resume(with: Result { try open() })
            }
        }
    }

    /// Waits for the current exclusive section to end, then for every busy reader to come back,
    /// while new checkouts wait. A cancelled task stops waiting at either step (a rekey waiting
    /// for a long stream must not hold every read of the pool back): it leaves its place in the
    /// queue, or gives the section up, and throws `CancellationError`.
    private func enterExclusive() async throws {
        let id = state.withCheckedLock { state -> UInt64 in
            state.nextExclusive &+= 1
            return state.nextExclusive
        }
        let _: Void = try await suspend({ state, continuation in
            if Task.isCancelled { return .failure(CancellationError()) }
            if state.isExclusive {
                state.exclusiveQueue.append(ExclusiveWaiter(id: id, continuation: continuation))
                return nil
            }
            state.isExclusive = true
            return .success(())
        }, unpark: { state in
            guard let index = state.exclusiveQueue.firstIndex(where: { $0.id == id }) else { return nil }
            return state.exclusiveQueue.remove(at: index).continuation
        })
        // The section is this call's now: a failure below must hand it on.
        do {
            let _: Void = try await suspend({ state, continuation in
                if state.busy == 0 { return .success(()) }
                if Task.isCancelled { return .failure(CancellationError()) }
                state.drain = ExclusiveWaiter(id: id, continuation: continuation)
                if Self.startWatching(&state) { watchPausedStreams() }
                return nil
            }, unpark: { state in
                guard let drain = state.drain, drain.id == id else { return nil }
                state.drain = nil
                return drain.continuation
            })
        } catch {
            leaveExclusive()
            throw error
        }
    }

    private func leaveExclusive() {
        let resumes = state.withCheckedLock { state -> Resumes in
            if !state.exclusiveQueue.isEmpty {
                // The next exclusive section starts at once; readers stay held back.
                var resumes = Resumes()
                resumes.drain = state.exclusiveQueue.removeFirst().continuation
                return resumes
            }
            state.isExclusive = false
            return Self.dispatch(&state, maximum: maximum)
        }
        resumes.run()
    }
}
