import Synchronization

/// The tracers, SQL functions and collations that a set of connections share: a ``Database``'s
/// one connection, or the writer and every reader of a pool.
///
/// The registry only stores definitions; each connection applies them itself, on its own
/// isolation domain, with ``apply(to:)``. A connection that uses the registry also checks its
/// ``generation`` when a statement starts and when SQL is compiled, and applies what changed
/// since (SQLiteConnection+Functions.swift), so a tracer or function added through one connection
/// reaches the others at their next statement without anyone hopping onto their executors. That
/// check is one relaxed atomic load: the cost of the registry when nothing changes.
final class ConnectionExtensions: Sendable {
    /// One registered function, aggregate or collation, with a number no other registration has:
    /// a connection remembers the numbers it applied, so a replaced definition is told from the
    /// one it replaced.
    struct Registration<Definition: Sendable>: Sendable {
        let definition: Definition
        let serial: UInt64
    }

    /// What the connections apply.
    struct Snapshot: Sendable {
        var generation: UInt64 = 0
        var tracers: [TraceObserver] = []
        var functions: [FunctionKey: Registration<DatabaseFunction>] = [:]
        var collations: [String: Registration<DatabaseCollation>] = [:]
    }

    private let state = Mutex(Snapshot())
    private let serials = Atomic<UInt64>(0)
    /// Bumped by every change, after the change is visible in ``snapshot()``.
    let generation = Atomic<UInt64>(0)

    deinit {
        // The last connection went away: sequences of trace events end.
        for tracer in state.withCheckedLock({ $0.tracers }) { tracer.stop() }
    }

    /// The current definitions.
    func snapshot() -> Snapshot {
        state.withCheckedLock { $0 }
    }

    /// A number for a new registration.
    func nextSerial() -> UInt64 {
        serials.wrappingAdd(1, ordering: .relaxed).newValue
    }

    private func change(_ body: (inout Snapshot) -> Void) {
        state.withCheckedLock { snapshot in
            body(&snapshot)
            snapshot.generation &+= 1
            generation.store(snapshot.generation, ordering: .releasing)
        }
    }

    // MARK: Tracers

    /// Adds `tracer`; every connection delivers to it from its next statement on.
    func add(tracer: TraceObserver) {
        change { $0.tracers.append(tracer) }
    }

    /// Removes the tracer `id` and stops it. Removing an unknown tracer does nothing.
    func removeTracer(_ id: ObjectIdentifier) {
        var removed: [TraceObserver] = []
        change { snapshot in
            removed = snapshot.tracers.filter { ObjectIdentifier($0) == id }
            snapshot.tracers.removeAll { ObjectIdentifier($0) == id }
        }
        for tracer in removed { tracer.stop() }
    }

    /// Removes and stops every tracer.
    func removeAllTracers() {
        var removed: [TraceObserver] = []
        change { snapshot in
            removed = snapshot.tracers
            snapshot.tracers = []
        }
        for tracer in removed { tracer.stop() }
    }

    // MARK: Functions and collations

    /// Records `function` under `serial` (see ``nextSerial()``), replacing one with the same name
    /// and argument count.
    func store(function: DatabaseFunction, serial: UInt64) {
        change { $0.functions[function.key] = Registration(definition: function, serial: serial) }
    }

    /// Removes the function with `key`; returns whether there was one.
    @discardableResult
    func removeFunction(_ key: FunctionKey) -> Bool {
        var found = false
        change { found = $0.functions.removeValue(forKey: key) != nil }
        return found
    }

    /// Records `collation` under `serial`, replacing one with the same name.
    func store(collation: DatabaseCollation, serial: UInt64) {
        change { $0.collations[collation.key] = Registration(definition: collation, serial: serial) }
    }

    /// Removes the collation with `key`; returns whether there was one.
    @discardableResult
    func removeCollation(_ key: String) -> Bool {
        var found = false
        change { found = $0.collations.removeValue(forKey: key) != nil }
        return found
    }

    /// Whether a function of this name (any argument count; `name` folded with
    /// ``FunctionKey/fold(_:)``) is registered here.
    func hasFunction(named name: String) -> Bool {
        state.withCheckedLock { $0.functions.keys.contains { $0.name == name } }
    }

    // MARK: Applying

    /// Makes `connection` use this registry and applies every definition to it now: its tracers,
    /// functions and collations become exactly the registry's. Called on the connection's own
    /// isolation domain (the pool calls it for each reader it opens, before the reader's first
    /// statement). Throws the first registration SQLite refused; what could be applied is applied
    /// either way, and a later statement tries the rest again.
    func apply(to connection: SQLiteConnection) throws {
        if connection.extensionState.registry !== self {
            connection.extensionState.registry = self
            connection.extensionState.appliedGeneration = .max
        }
        try connection.syncExtensions()
    }
}

/// A function's identity in SQLite: its name, compared without regard to ASCII case, and its
/// argument count (-1 for any number).
struct FunctionKey: Hashable, Sendable {
    let name: String
    let argumentCount: Int32

    init(name: String, argumentCount: Int32) {
        self.name = Self.fold(name)
        self.argumentCount = argumentCount
    }

    /// `name` with ASCII letters lower-cased, as SQLite compares function and collation names.
    static func fold(_ name: String) -> String {
        String(decoding: name.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }
}

/// What one connection knows about the registry it uses: what of it is applied, and the state
/// that statements and SQL function calls read on the connection's isolation domain.
///
/// A class shared by the connection and each of its statements, so that a statement tests
/// ``tracers`` and ``capturesArguments`` with a plain load, without going through its unowned
/// connection.
///
/// The properties that every statement reads are `@exclusivity(unchecked)`: they are read and
/// written only on the connection's isolation domain, never across an `inout` access, and the
/// dynamic exclusivity check of a class property (measured with callgrind: about 60 instructions
/// per insert for these) would be most of the cost of tracing when nothing listens.
final class ExtensionState {
    /// The registry this connection applies; its own one until a pool hands it a shared one.
    @exclusivity(unchecked) var registry = ConnectionExtensions()
    /// The registry ``ConnectionExtensions/generation`` last applied in full.
    @exclusivity(unchecked) var appliedGeneration: UInt64 = 0
    /// The tracers to deliver to; nil when there is none, the only test a statement pays then.
    @exclusivity(unchecked) var tracers: [TraceObserver]?
    /// Whether some tracer asked for the arguments: statements then keep what they bind.
    @exclusivity(unchecked) var capturesArguments = false
    /// Whether this is the connection that writes or one that only reads (``TraceEvent/connection``).
    var role = ConnectionRole.writer
    /// The registration serials applied to this connection.
    var appliedFunctions: [FunctionKey: UInt64] = [:]
    var appliedCollations: [String: UInt64] = [:]
    /// What the SQL functions of this connection share with the statement running them.
    let calls = FunctionCallState()
    /// Whether statements must record themselves as running while they step
    /// (``FunctionCallState/running``): only on SQLite before 3.30 with a function that the
    /// schema may not call.
    @exclusivity(unchecked) var tracksRunningStatement = false

    /// Whether a statement that starts must look further: a tracer listens, or the registry
    /// changed since it was last applied.
    @inline(__always)
    var needsAttention: Bool {
        tracers != nil || registry.generation.load(ordering: .relaxed) != appliedGeneration
    }
}

/// The state the C callbacks of one connection's SQL functions reach through their context box.
final class FunctionCallState {
    /// The last error a function of this connection threw, with the message SQLite got, so that
    /// the statement's failure becomes ``SqlCipherError/functionFailed(name:message:sql:)``.
    var failure: (error: SqlCipherError, message: String)?
    /// Whether the library ignores `SQLITE_DIRECTONLY` (SQLite before 3.30.0), so that the
    /// package refuses calls of functions that are not allowed in the schema itself.
    var enforcesDirectOnly = false
    /// The statement being stepped now, while ``enforcesDirectOnly`` and such a function exists.
    var running: Statement?
    /// Lower-cased names of the functions registered without `allowedInSchema`.
    var directOnlyNames: Set<String> = []
}
