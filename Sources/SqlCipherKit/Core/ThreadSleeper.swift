import Foundation
import Synchronization

/// The package's timed waits (the live queries' watch for other connections' commits, a pool's
/// look at its paused streams), kept off libdispatch's timers.
///
/// `Task.sleep` arms a libdispatch timer, and libdispatch creates the `timerfd` behind a clock the
/// first time any timer of that clock is armed in the process. When that creation fails, because
/// the process has run out of file descriptors, libdispatch traps (SIGILL): a service whose first
/// live query or pool wait came at its descriptor limit ended there, although every opening at the
/// limit fails with a typed error. These waits instead run on one thread of the package's own,
/// which waits on a condition variable with a deadline (`pthread_cond_timedwait`): no descriptor,
/// ever. The thread starts with the first wait and stays, idle, for the process's life.
///
/// A wait ends at its deadline, or early when its task is cancelled; it never throws, like the
/// `try? await Task.sleep` it replaces.
package final class ThreadSleeper: Sendable {
    /// The one sleeper of the process.
    package static let shared = ThreadSleeper()

    private struct Sleeper {
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var sleepers: [UInt64: Sleeper] = [:]
        /// Waits whose task was cancelled before they were registered: they end at once.
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var threadStarted = false
    }

    /// Guards `state`; the thread waits on it.
    private let condition = NSCondition()
    /// Only touched with `condition` locked.
    nonisolated(unsafe) private var state = State()

    private init() {}

    /// Waits for `duration` (at least), or until the calling task is cancelled.
    package func sleep(for duration: Duration) async {
        await sleep(until: .now + duration)
    }

    /// Waits until `deadline`, or until the calling task is cancelled.
    package func sleep(until deadline: ContinuousClock.Instant) async {
        let id = locked { state in
            state.nextID &+= 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                register(id, deadline: deadline, continuation: continuation)
            }
        } onCancel: {
            let sleeper = locked { state in
                let sleeper = state.sleepers.removeValue(forKey: id)
                if sleeper == nil { state.cancelled.insert(id) }
                return sleeper
            }
            sleeper?.continuation.resume()
        }
        // A cancellation that came after the wait ended leaves its mark behind: clear it.
        locked { state in _ = state.cancelled.remove(id) }
    }

    /// Hands the wait to the thread (starting it the first time), or ends it at once when its
    /// task was cancelled already or its deadline passed.
    private func register(_ id: UInt64, deadline: ContinuousClock.Instant, continuation: CheckedContinuation<Void, Never>) {
        condition.lock()
        if state.cancelled.remove(id) != nil || deadline <= .now {
            condition.unlock()
            continuation.resume()
            return
        }
        state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
        if !state.threadStarted {
            state.threadStarted = true
            let thread = Thread { [self] in run() }
            thread.name = "SqlCipherKit.ThreadSleeper"
            thread.start()
        }
        condition.signal()
        condition.unlock()
    }

    /// `body` with the lock held.
    private func locked<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    /// The thread: resumes each wait whose deadline passed, then waits for the next deadline or
    /// for a new wait. Continuations are resumed with the lock released.
    private func run() {
        condition.lock()
        while true {
            let now = ContinuousClock.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            if !due.isEmpty {
                for id in due.keys { state.sleepers.removeValue(forKey: id) }
                condition.unlock()
                for sleeper in due.values { sleeper.continuation.resume() }
                condition.lock()
                continue
            }
            if let next = state.sleepers.values.map(\.deadline).min() {
                let (seconds, attoseconds) = (next - now).components
                let interval = Double(seconds) + Double(attoseconds) / 1e18
                _ = condition.wait(until: Date(timeIntervalSinceNow: max(interval, 0.000_1)))
            } else {
                condition.wait()
            }
        }
    }
}
