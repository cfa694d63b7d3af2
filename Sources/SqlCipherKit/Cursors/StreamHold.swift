import Synchronization

/// What a ``DatabaseStream`` holds between two batches, and who may take it away.
///
/// A stream keeps one statement open on one connection from its first batch to its last. Swift
/// does not promise to destroy an iterator whose loop was left (a `break` inside an `if`, `do` or
/// `switch` block of top-level code leaves it alive until the program ends), so the package never
/// waits for an iterator to say it is done. Instead, a stream that is *paused* (its consumer is not
/// inside ``DatabaseStream/Iterator/next()``) gives its statement up to any call that needs it:
///
/// - on a ``Database``, a statement that fails because the paused stream's statement is open
///   (`DROP TABLE` of the table being read, `VACUUM`, a journal-mode change) ends the paused
///   streams and runs once more;
/// - on a ``DatabasePool``, a read, rekey or close that waits for a reader held by a stream paused
///   for at least ``DatabaseStream/preemptionDelay`` takes that reader (close does not wait).
///
/// The stream then throws ``SqlCipherError/streamPreempted(reason:)`` if it is ever resumed. Both
/// sides change the phase under one lock, so a stream either resumes or is preempted, never both.
final class StreamHold: Sendable {
    enum Phase: Sendable {
        /// The consumer is waiting for a batch: the statement is in use.
        case fetching
        /// Between batches since `since`: the statement may be taken.
        case paused(since: ContinuousClock.Instant)
        /// Taken by another call, for the reason given.
        case preempted(reason: String)
        /// The stream ended (its last batch, an error, or its iterator went away).
        case ended
    }

    private let phase = Mutex(Phase.fetching)

    /// Marks the stream as reading a batch. Throws when another call took the statement first.
    func resume() throws {
        try phase.withCheckedLock { phase in
            switch phase {
            case .preempted(let reason):
                throw SqlCipherError.streamPreempted(reason: reason)
            case .ended:
                throw SqlCipherError.connectionNotUsable
            case .fetching, .paused:
                phase = .fetching
            }
        }
    }

    /// Marks the stream as between batches.
    func pause() {
        phase.withCheckedLock { phase in
            if case .fetching = phase { phase = .paused(since: .now) }
        }
    }

    /// Marks the stream as ended; a later ``preempt(reason:pausedFor:)`` does nothing. Returns
    /// false when another call had preempted it: that call releases the statement and the
    /// connection, and the stream must not release them again.
    @discardableResult
    func end() -> Bool {
        phase.withCheckedLock { phase in
            if case .preempted = phase { return false }
            phase = .ended
            return true
        }
    }

    /// Whether the stream ended (its iterator went away or finished).
    var isEnded: Bool {
        phase.withCheckedLock { phase in
            if case .ended = phase { return true }
            return false
        }
    }

    /// Takes the statement from a stream paused for at least `minimum`: true when it was taken
    /// (the caller then releases the statement and the connection, exactly once).
    func preempt(reason: String, pausedFor minimum: Duration = .zero) -> Bool {
        phase.withCheckedLock { phase in
            guard case .paused(let since) = phase, ContinuousClock.now - since >= minimum else { return false }
            phase = .preempted(reason: reason)
            return true
        }
    }

    /// When the stream paused, or nil while it reads or after it ended.
    var pausedSince: ContinuousClock.Instant? {
        phase.withCheckedLock { phase in
            if case .paused(let since) = phase { return since }
            return nil
        }
    }
}
