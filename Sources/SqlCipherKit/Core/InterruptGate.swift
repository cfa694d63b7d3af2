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

    /// Runs `body` with interrupts held back: for the package's own clean-up.
    func shielded<T>(_ body: () throws -> T) rethrows -> T {
        shield.wrappingAdd(1, ordering: .relaxed)
        defer { shield.wrappingSubtract(1, ordering: .relaxed) }
        return try body()
    }
}
