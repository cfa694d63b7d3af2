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
        running.store(call, ordering: .relaxed)
    }

    /// Ends the call `call`.
    func end(_ call: UInt64) {
        running.store(0, ordering: .relaxed)
    }

    /// Asks for `call` to stop. Safe from any thread, at any time, even after the call ended.
    func cancel(_ call: UInt64) {
        cancelled.store(call, ordering: .releasing)
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
