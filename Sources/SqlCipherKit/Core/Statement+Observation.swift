/// What the change tracker keeps with one prepared statement (see ``ChangeTracker``).
struct StatementObservation {
    /// The statement's analysis, once one was needed.
    var access: StatementAccess?
    /// The tracker generation ``access`` belongs to.
    var generation: UInt64 = 0
    /// Whether the current execution was already accounted for; cleared by `reset()`.
    var started = false
}
