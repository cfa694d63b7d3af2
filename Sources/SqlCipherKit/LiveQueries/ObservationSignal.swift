import Synchronization

/// The one piece of an observation shared between the database actor and the consumer's task:
/// a "something changed" flag and the consumer parked on it.
///
/// The commit hook raises the flag (on the actor, inside `sqlite3_step`) and wakes the consumer;
/// the consumer then asks the actor to fetch, and the fetch lowers the flag. Because the flag is
/// one bit rather than a queue, any number of commits before the consumer asks again cost one
/// fetch: a slow consumer never sees a backlog.
final class ObservationSignal: Sendable {
    private struct State {
        var isDirty = false
        var isCancelled = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let state = Mutex(State())

    /// Raises the flag and wakes a parked consumer. Never calls into SQLite, so it is safe from the
    /// commit hook (https://sqlite.org/c3ref/commit_hook.html).
    func markDirty() {
        let waiter = state.withCheckedLock { state -> CheckedContinuation<Bool, Never>? in
            state.isDirty = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Lowers the flag just before a fetch, so that any commit after the fetch raises it again.
    func clearDirty() {
        state.withCheckedLock { $0.isDirty = false }
    }

    /// Whether a change is waiting to be fetched.
    var isDirty: Bool { state.withCheckedLock { $0.isDirty } }

    /// Waits until the flag is raised (true) or the calling task is cancelled (false).
    func waitForChange() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answer = state.withCheckedLock { state -> Bool? in
                    if state.isCancelled { return false }
                    if state.isDirty { return true }
                    state.waiter = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter = state.withCheckedLock { state -> CheckedContinuation<Bool, Never>? in
                state.isCancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: false)
        }
    }
}
