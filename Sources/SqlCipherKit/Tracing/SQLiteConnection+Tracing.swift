import CSqlCipherBridge
import Foundation

// Tracing is done on the package's own statement path, not with `sqlite3_trace_v2`:
// - SQLite's `SQLITE_TRACE_PROFILE` times statements with the VFS's `xCurrentTimeInt64`, which the
//   unix VFS reads with `gettimeofday` to the millisecond: measured on both libraries, a profile
//   reports 0 ns for every statement under a millisecond and whole milliseconds otherwise. Here a
//   statement is timed with a monotonic clock to the nanosecond.
// - The package never calls `sqlite3_exec`: text of several statements is split and each statement
//   runs through `Statement.step` (SQLiteConnection.executeScript), so each gets an event of its own
//   with its own text, as a trace callback would give.
// - The package knows, when a statement starts, whether it runs it for itself and on which
//   connection, and it knows the values it bound as typed values; a trace callback would have to
//   guess the first and read the second from `sqlite3_expanded_sql`, which writes the values into
//   the SQL text, a bound key included.
// - With no tracer, a statement pays one test when it starts (`ExtensionState.needsAttention`) and
//   one when it ends (`Statement.trace`), which the `tracing` benchmark family measures.
// What SQLite runs inside one statement (trigger programs, the statements of `sqlcipher_export`
// and `VACUUM`) belongs to that statement's event.

/// A statement's trace while it runs: who listens, since when, and what the event will say.
///
/// A class, so that the statement's `trace != nil` test, made at every reset, is one pointer
/// comparison: an optional struct holding a `ContinuousClock.Instant` (a type of the standard
/// library whose layout is not fixed) is tested through generic metadata, measured at about 70
/// instructions per statement.
final class ActiveTrace {
    let tracers: [TraceObserver]
    let start: ContinuousClock.Instant
    let isInternal: Bool
    let role: ConnectionRole

    init(tracers: [TraceObserver], start: ContinuousClock.Instant, isInternal: Bool, role: ConnectionRole) {
        self.tracers = tracers
        self.start = start
        self.isInternal = isInternal
        self.role = role
    }

    /// Delivers the event of a statement with `sql` (already redacted) that finished with `outcome`.
    /// `arguments` reach only the tracers that asked for them.
    func finish(sql: String, arguments: [DatabaseValue]?, outcome: TraceEvent.Outcome) {
        let duration = ContinuousClock.now - start
        var plain: TraceEvent?
        var detailed: TraceEvent?
        for tracer in tracers {
            if tracer.options.includeArguments, let arguments {
                let event = detailed ?? TraceEvent(redactedSQL: sql, arguments: arguments, duration: duration,
                                                   connection: role, isInternal: isInternal, outcome: outcome)
                detailed = event
                tracer.receive(event)
            } else {
                let event = plain ?? TraceEvent(redactedSQL: sql, arguments: nil, duration: duration, connection: role,
                                                isInternal: isInternal, outcome: outcome)
                plain = event
                tracer.receive(event)
            }
        }
    }
}

extension SQLiteConnection {
    /// Whether this connection writes or only reads, for ``TraceEvent/connection``. A pool sets
    /// `.reader` on each reader it opens.
    var role: ConnectionRole {
        get { extensionState.role }
        set { extensionState.role = newValue }
    }

    /// Whether the statements run now are the package's own: inside ``asPackage(_:)`` (cipher
    /// settings, conversions, the package's `BEGIN`/`COMMIT`/`SAVEPOINT`) or ``asInternal(_:)``.
    /// A body of the user's (``runBody(readOnly:transactional:_:)``) is the user's again.
    var isRunningInternalSQL: Bool {
        scope.isInternal
    }

    /// Runs `body` with its statements marked as the package's own in trace events, without the
    /// guard exemptions of ``asPackage(_:)``: for bookkeeping SQL that the guards allow anyway
    /// (opening checks, pragmas, the migrations table, checkpoints).
    /// (The `internal` scope of ConnectionScope.swift.)
    func asInternal<T>(_ body: () throws -> T) rethrows -> T {
        try scope.with(.internal, body)
    }

    /// Called when `statement` starts, after the guards let it run, when
    /// ``ExtensionState/needsAttention``: applies registry changes, then starts the statement's
    /// trace when someone listens.
    func extensionsWillRun(_ statement: Statement) {
        syncExtensionsIfChanged()
        guard let tracers = extensionState.tracers else { return }
        statement.trace = ActiveTrace(tracers: tracers, start: .now, isInternal: isRunningInternalSQL, role: role)
    }

    /// A trace for a statement run outside ``Statement`` (``rows(_:columns:_:)``), or nil when
    /// nobody listens. Such statements are always the package's own.
    func startRawTrace() -> ActiveTrace? {
        syncExtensionsIfChanged()
        guard let tracers = extensionState.tracers else { return nil }
        return ActiveTrace(tracers: tracers, start: .now, isInternal: true, role: role)
    }
}

extension Statement {
    /// Ends the running execution's trace with `outcome` and delivers its event.
    func endTrace(_ outcome: TraceEvent.Outcome) {
        guard let active = trace else { return }
        trace = nil
        let arguments = tracedArguments
        tracedArguments = nil
        let text: String
        if let known = tracedSQL {
            text = known
        } else {
            text = SQLRedaction.text(of: sql)
            tracedSQL = text
        }
        // The package's own statements, ATTACH (whose KEY can be bound) and `VACUUM INTO ?` (whose
        // destination can be a `key=` URI; SQLRedaction.hidesArguments) never show values; nor
        // does an execution whose every value was not seen (bound before a tracer asked for them,
        // or bound as raw bytes: keys).
        var shown: [DatabaseValue]?
        if !active.isInternal && guardKind != .attach, let arguments, arguments.count == parameterCount,
           !arguments.contains(where: { $0 == nil }), !SQLRedaction.hidesArguments(of: sql) {
            shown = arguments.compactMap { $0 }
        }
        active.finish(sql: text, arguments: shown, outcome: outcome)
    }

    /// Keeps the value bound at `index` (1-based) for the trace event.
    func captureArgument(_ value: DatabaseValue, at index: Int32) {
        let slot = Int(index) - 1
        guard slot >= 0, slot < parameterCount else { return }
        if tracedArguments == nil { tracedArguments = Array(repeating: nil, count: parameterCount) }
        tracedArguments?[slot] = value
    }
}
