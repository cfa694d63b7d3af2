import Foundation
import Synchronization

/// One statement that SqlCipherKit ran, as a tracer sees it once the statement finished.
///
/// ```swift
/// let tracing = try await db.trace { event in
///     if !event.isInternal { print(event) }   // [writer] 0.084 ms  SELECT * FROM notes WHERE id = ?
/// }
/// ```
///
/// An event is delivered when the statement finishes: when SQLite reports its last row or its
/// end, when it fails, or when it is reset before its end (``TraceEvent/Outcome/stoppedEarly``).
/// Statements that the package refuses before they run (see <doc:RawSQLGuards>) produce no
/// event.
public struct TraceEvent: Sendable, CustomStringConvertible {
    /// How a statement finished.
    public enum Outcome: Sendable, Hashable {
        /// SQLite reported the statement's end.
        case completed
        /// The statement was reset before its end: a cursor or stream left early, a fetch of the
        /// first row only.
        case stoppedEarly
        /// The statement failed with this primary result code (https://sqlite.org/rescode.html).
        /// 23 (`SQLITE_AUTH`) also stands for an effect that the package undid after the statement
        /// ran: an `ATTACH` of a database whose encryption differs, detached again.
        case failed(code: Int32)
    }

    /// The statement's SQL text as it was given to SQLite, with values as `?` placeholders where
    /// the caller bound them. Text that may hold key material is redacted: the file and key of an
    /// `ATTACH`, the value of `PRAGMA key` and its relatives, and any string literal that carries a
    /// `key=` parameter (a `file:` URI) are shown as `'***'`.
    public let sql: String
    /// The values bound to the statement's parameters, in order, when the tracer asked for them
    /// (``TraceOptions/includeArguments``); nil otherwise. Always nil for the package's own
    /// statements (``isInternal``) and for `ATTACH`, which can bind a key.
    public let arguments: [DatabaseValue]?
    /// The wall-clock time from the statement's first step until it finished, on a monotonic
    /// clock. For a cursor or a stream this includes the time the caller spent between rows.
    public let duration: Duration
    /// Which connection ran the statement: the writer, or one of a pool's readers.
    public let connection: ConnectionRole
    /// Whether the package ran the statement for itself rather than for the caller's request: key
    /// and schema checks, pragmas, `BEGIN`/`COMMIT`/`SAVEPOINT`, the bookkeeping of migrations,
    /// live queries and conversions.
    public let isInternal: Bool
    /// How the statement finished.
    public let outcome: Outcome

    /// Creates an event; tracers receive events from the package, this is for tests of code that
    /// consumes them. `sql` is redacted as the package's own events are, and `arguments` are left
    /// out where they would be (an `ATTACH`, a `VACUUM`, a key pragma): an event made here from a
    /// statement that names a key printed the key (found by the attack review).
    public init(sql: String, arguments: [DatabaseValue]?, duration: Duration, connection: ConnectionRole,
                isInternal: Bool, outcome: Outcome) {
        self.init(redactedSQL: SQLRedaction.text(of: sql),
                  arguments: SQLRedaction.hidesArguments(of: sql) ? nil : arguments, duration: duration,
                  connection: connection, isInternal: isInternal, outcome: outcome)
    }

    /// An event of the package's own, whose SQL is already redacted and whose arguments are
    /// already those a tracer may see.
    init(redactedSQL sql: String, arguments: [DatabaseValue]?, duration: Duration, connection: ConnectionRole,
         isInternal: Bool, outcome: Outcome) {
        self.sql = sql
        self.arguments = arguments
        self.duration = duration
        self.connection = connection
        self.isInternal = isInternal
        self.outcome = outcome
    }

    /// One line: the connection, the duration in milliseconds, the SQL, the arguments when
    /// present, and marks for internal statements and for statements that did not complete.
    public var description: String {
        let nanoseconds = Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
        var line = "[\(connection)\(isInternal ? ", internal" : "")] "
            + String(format: "%.3f ms", nanoseconds / 1e6) + "  " + sql
        if let arguments { line += "  " + arguments.description }
        switch outcome {
        case .completed: break
        case .stoppedEarly: line += "  (stopped early)"
        case let .failed(code): line += "  (failed: SQLite error \(code))"
        }
        return line
    }
}

/// Which connection of a database ran a statement.
public enum ConnectionRole: String, Sendable, Hashable, CustomStringConvertible {
    /// The connection that writes: a ``Database``'s only connection, or a pool's writer.
    case writer
    /// One of a pool's read-only connections.
    case reader

    /// `writer` or `reader`.
    public var description: String { rawValue }
}

/// What a tracer receives.
public struct TraceOptions: Sendable, Hashable {
    /// Whether events carry the values bound to the statement (``TraceEvent/arguments``). Off by
    /// default: arguments are often the very data that the encryption protects (passwords,
    /// personal data), and a trace typically ends up in a log. The package's own statements and
    /// `ATTACH` never carry them.
    public var includeArguments: Bool

    /// Options for a tracer; by default events carry no arguments.
    public init(includeArguments: Bool = false) {
        self.includeArguments = includeArguments
    }
}

/// A running tracer, returned by ``Database/trace(options:_:)``: ``cancel()`` stops it.
///
/// Dropping the token does not stop the tracer; ``Database/stopTracing()`` stops every tracer.
public final class TraceToken: Sendable {
    private struct WeakRegistry {
        weak var registry: ConnectionExtensions?
    }

    private let observer: TraceObserver
    /// Weak: a token kept by a sequence's termination handler must not keep the registry (and so
    /// the sequence) alive after the database is gone.
    private let registry: Mutex<WeakRegistry>

    init(observer: TraceObserver, registry: ConnectionExtensions) {
        self.observer = observer
        self.registry = Mutex(WeakRegistry(registry: registry))
    }

    /// Stops the tracer: no event is delivered to it once this returns, except one that another
    /// thread was delivering at that moment. Cancelling twice is harmless.
    public func cancel() {
        observer.stop()
        registry.withCheckedLock { $0.registry }?.removeTracer(ObjectIdentifier(observer))
    }

    /// Whether the tracer still receives events.
    public var isActive: Bool { observer.isActive }
}

/// One tracer: its options, its closure, and whether it still listens.
final class TraceObserver: Sendable {
    let options: TraceOptions
    private let deliver: @Sendable (TraceEvent) -> Void
    private let onStop: (@Sendable () -> Void)?
    private let active = Atomic<Bool>(true)

    init(options: TraceOptions, deliver: @escaping @Sendable (TraceEvent) -> Void, onStop: (@Sendable () -> Void)? = nil) {
        self.options = options
        self.deliver = deliver
        self.onStop = onStop
    }

    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Delivers `event` unless the tracer was stopped.
    func receive(_ event: TraceEvent) {
        if active.load(ordering: .acquiring) { deliver(event) }
    }

    /// Stops delivery; runs the stop action once.
    func stop() {
        if active.exchange(false, ordering: .acquiringAndReleasing) { onStop?() }
    }
}
