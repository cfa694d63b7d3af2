import Dispatch

/// The serial executor of one ``Database``: a dispatch queue of its own.
///
/// SQLite's calls block the thread that makes them, for as long as a statement runs. On Swift's
/// default executor an actor's work runs on the cooperative thread pool, which has one thread per
/// core: two long queries on a two-core machine would hold every thread, and no other task of the
/// program (a timer, a cancellation, the `SELECT 1` of another database) could run until they
/// end. Each database's calls run on its own queue instead, so a blocked connection blocks only
/// itself; the pool stays free for the rest of the program.
final class DatabaseExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless the caller runs on this executor's queue: what `assumeIsolated` and
    /// `preconditionIsolated` ask of a custom executor (SE-0424), and what
    /// ``SQLiteConnection/assertIsolated()`` checks in debug builds at the connection's entry
    /// points.
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
