import CSqlCipherBridge
import Synchronization

/// Turns the cancellation of the task that awaits a database call into an interrupt of the
/// statement that call is running, and of nothing else.
///
/// SQLite offers two ways to stop a running statement: `sqlite3_interrupt`, which may be called
/// from any thread but must never reach a connection that is closing and stays armed until the
/// connection's statements all finish (so it can hit the next call's statements, for example
/// while a stream keeps a statement open between batches); and a progress handler, which SQLite
/// calls on the thread that runs the statement (https://sqlite.org/c3ref/progress_handler.html).
/// The gate uses the progress handler: a cancellation handler only stores the number of the call
/// to stop, and the handler, installed once per connection, interrupts while that call is the
/// one running. A late cancellation of a call that already ended matches no running call and
/// stops nothing; the connection's lifetime is never involved.
///
/// The package's own clean-up after an interrupt (`ROLLBACK`, `ROLLBACK TO`, `RELEASE`) runs
/// ``shielded(_:)``, so that a cancelled transaction is always rolled back completely.
final class InterruptGate: Sendable {
    /// The number of the call running now; 0 between calls. Written on the connection's
    /// executor, read by the progress handler on the same thread.
    private let running = Atomic<UInt64>(0)
    /// The number of the last call whose task was cancelled. Written by cancellation handlers,
    /// from any thread.
    private let cancelled = Atomic<UInt64>(0)
    /// Greater than zero while the package runs clean-up that must not be interrupted.
    private let shield = Atomic<Int>(0)
    /// The last call number handed out.
    private let calls = Atomic<UInt64>(0)
    /// The handle while it is open, for the busy-wait cut (``cutBusyWait(_:)``): nil before
    /// ``install(on:)`` and after ``detach()``, so that a cancellation handler running on another
    /// thread never reaches a handle that is closing. `cut` says the running call's wait was cut.
    /// Also taken to change `running`, so that a cut never lands in the next call.
    private let busyWait = Mutex<(handle: OpaquePointer?, cut: Bool)>((nil, false))
    /// The connection's busy timeout in milliseconds, as last set by the package
    /// (``SQLiteConnection/setBusyTimeout(_:)``) or by the caller's `PRAGMA busy_timeout = N` (the
    /// authorizer): what a cut call sets back, and 0 when SQLite has no busy handler to cut.
    let busyTimeout = Atomic<Int32>(0)
    /// Whether a ``watching(cancellable:sample:_:)`` scope is open: the handler's fast path
    /// reads only this.
    private let watchOpen = Atomic<Bool>(false)
    /// The open watch scope.
    private let watch = Mutex<Watch?>(nil)
    /// Set when the handler stopped a watched statement because its task was cancelled.
    private let watchInterrupted = Atomic<Bool>(false)

    /// A package operation that reports progress and may stop with its task.
    private struct Watch {
        let cancellable: Bool
        let sample: (@Sendable () -> Void)?
        let interval: Duration
        var lastSample: ContinuousClock.Instant
        var polls: Int = 0
    }

    /// SQLite calls the handler about every this many virtual-machine instructions: a few
    /// microseconds of work, so a cancelled statement stops within well under a millisecond,
    /// while the handler's cost (three atomic loads) stays far below one percent of a fetch.
    static let instructionsPerCheck: Int32 = 1000

    /// Installs the progress handler on `handle`. The gate must outlive the handle: the
    /// connection keeps it in a stored property and closes the handle first.
    func install(on handle: OpaquePointer) {
        busyWait.withCheckedLock { $0.handle = handle }
        let context = Unmanaged.passUnretained(self).toOpaque()
        scb_progress_handler(handle, Self.instructionsPerCheck, { context in
            guard let context else { return 0 }
            return Unmanaged<InterruptGate>.fromOpaque(context).takeUnretainedValue().shouldInterrupt ? 1 : 0
        }, context)
    }

    /// Whether the running statement must stop now.
    private var shouldInterrupt: Bool {
        if watchOpen.load(ordering: .relaxed) && pollWatch() { return true }
        let call = running.load(ordering: .relaxed)
        return call != 0 && cancelled.load(ordering: .acquiring) == call && shield.load(ordering: .relaxed) == 0
    }

    /// A number for a call about to start, for its cancellation handler.
    func nextCall() -> UInt64 {
        calls.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Starts call `call`. Calls never overlap: the owner runs one at a time.
    func begin(_ call: UInt64) {
        busyWait.withCheckedLock { state in
            running.store(call, ordering: .relaxed)
            // Cancelled between the caller's check and now: its cancellation handler found no
            // running call to cut.
            if cancelled.load(ordering: .acquiring) == call { cutBusyWait(&state) }
        }
    }

    /// Ends the call `call`. Returns whether its busy wait was cut: the connection's busy timeout
    /// is then 1 ms, and the caller, on the connection's thread, sets it back before the next call.
    func end(_ call: UInt64) -> Bool {
        busyWait.withCheckedLock { state in
            running.store(0, ordering: .relaxed)
            defer { state.cut = false }
            return state.cut
        }
    }

    /// Asks for `call` to stop. Safe from any thread, at any time, even after the call ended.
    ///
    /// SQLite's wait for another connection's lock (the busy timeout) runs no instruction, so the
    /// progress handler cannot stop it, and neither can `sqlite3_interrupt`: a call cancelled while
    /// it waited went on waiting for the whole `busyTimeout` (found by the user-program review: 20
    /// seconds with `busyTimeout = .seconds(20)`). The running call's wait is cut instead, the way
    /// the exit handler cuts every wait (exit.c): a busy timeout of 1 ms, which SQLite's default
    /// handler reads at each of its steps, so the statement fails with `SQLITE_BUSY` within one
    /// step (at most 100 ms) and the call throws `CancellationError`.
    func cancel(_ call: UInt64) {
        cancelled.store(call, ordering: .releasing)
        busyWait.withCheckedLock { state in
            if running.load(ordering: .relaxed) == call { cutBusyWait(&state) }
        }
    }

    /// Sets the busy timeout of the open handle to 1 ms. Only the timeout changes (the handler and
    /// its argument stay SQLite's default and the handle), and the package opens connections with
    /// `SQLITE_OPEN_NOMUTEX`, so the call takes no lock and the waiting thread reads a consistent
    /// handler (as in exit.c). Never during the package's clean-up, which must not fail.
    private func cutBusyWait(_ state: inout (handle: OpaquePointer?, cut: Bool)) {
        // With no timeout SQLite has no handler: nothing waits, and setting one from this thread
        // could be read half set (a handler with no argument) by a statement starting to wait.
        guard let handle = state.handle, shield.load(ordering: .relaxed) == 0,
              busyTimeout.load(ordering: .relaxed) > 0 else { return }
        scb_busy_timeout(handle, 1)
        state.cut = true
    }

    /// Forgets the handle, before it closes: a later cancellation cuts nothing.
    func detach() {
        busyWait.withCheckedLock { $0.handle = nil }
    }

    /// Whether `call` was asked to stop.
    func wasCancelled(_ call: UInt64) -> Bool {
        cancelled.load(ordering: .acquiring) == call
    }

    /// Whether the running call was asked to stop (false between calls).
    var isCancellingCurrentCall: Bool {
        let call = running.load(ordering: .relaxed)
        return call != 0 && wasCancelled(call)
    }

    /// The handler's part for an open watch scope: samples progress at most once per interval
    /// (the clock is read only every 16th call) and asks for an interrupt once the task that runs
    /// the statement is cancelled. The handler runs on that task's thread, so `Task.isCancelled`
    /// is that task's own flag.
    private func pollWatch() -> Bool {
        let (cancellable, sample) = watch.withCheckedLock { watch -> (Bool, (@Sendable () -> Void)?) in
            guard var current = watch else { return (false, nil) }
            current.polls &+= 1
            var due: (@Sendable () -> Void)?
            if current.sample != nil && current.polls % 16 == 0 {
                let now = ContinuousClock.now
                if now - current.lastSample >= current.interval {
                    current.lastSample = now
                    due = current.sample
                }
            }
            watch = current
            return (current.cancellable, due)
        }
        if cancellable && shield.load(ordering: .relaxed) == 0 && Task.isCancelled {
            watchInterrupted.store(true, ordering: .relaxed)
            return true
        }
        sample?()
        return false
    }

    /// The check the progress handler makes inside a ``watching(cancellable:interval:sample:_:)``
    /// scope, for work that SQLite runs without calling that handler (a rekey rewrites pages
    /// without running a statement): the work's own callback asks it. False outside a scope.
    func pollWatchedWork() -> Bool {
        watchOpen.load(ordering: .relaxed) && pollWatch()
    }

    /// Runs a long package operation's `body` (SQL on this gate's connection) under watch:
    /// `sample` is called from the progress handler at most every `interval`, and, when
    /// `cancellable`, a statement is interrupted as soon as the current task is cancelled and the
    /// scope then throws `CancellationError` whatever error `body` reported. One progress handler
    /// serves both this and the per-call cancellation of ``begin(_:)``; scopes do not nest.
    func watching<T>(cancellable: Bool, interval: Duration = .milliseconds(50), sample: (@Sendable () -> Void)?,
                     _ body: () throws -> T) throws -> T {
        watchInterrupted.store(false, ordering: .relaxed)
        // The first sample is due at once (the work has started); later ones every `interval`.
        watch.withCheckedLock {
            $0 = Watch(cancellable: cancellable, sample: sample, interval: interval, lastSample: .now - interval)
        }
        watchOpen.store(true, ordering: .relaxed)
        defer {
            watchOpen.store(false, ordering: .relaxed)
            watch.withCheckedLock { $0 = nil }
        }
        do {
            return try body()
        } catch {
            if cancellable && (watchInterrupted.load(ordering: .relaxed) || Task.isCancelled) { throw CancellationError() }
            throw error
        }
    }

    /// Runs `body` with interrupts held back: for the package's own clean-up.
    func shielded<T>(_ body: () throws -> T) rethrows -> T {
        shield.wrappingAdd(1, ordering: .relaxed)
        defer { shield.wrappingSubtract(1, ordering: .relaxed) }
        return try body()
    }
}
