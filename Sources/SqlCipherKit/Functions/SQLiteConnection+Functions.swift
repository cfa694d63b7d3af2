import CSqlCipherBridge
import Foundation

/// Applying the registry's tracers, functions and collations to this connection
/// (ConnectionExtensions.swift), and adding or removing definitions through it.
extension SQLiteConnection {
    /// `SQLITE_DETERMINISTIC`, `SQLITE_DIRECTONLY`, `SQLITE_INNOCUOUS`
    /// (https://sqlite.org/c3ref/c_deterministic.html). SQLite before 3.30 (3.31 for the last)
    /// ignores the flags it does not know.
    static let deterministicFlag: Int32 = 0x800
    static let directOnlyFlag: Int32 = 0x80000
    static let innocuousFlag: Int32 = 0x200000

    /// The longest function or collation name SQLite accepts, in bytes.
    static let maximumNameLength = 255
    /// The largest fixed argument count (`SQLITE_MAX_FUNCTION_ARG` of Debian's builds).
    static let maximumArgumentCount = 127

    /// Applies what changed in the registry since the last time, if anything did; a failure is
    /// retried at the next statement (a function that another statement is running cannot be
    /// replaced until that statement ends).
    @inline(__always)
    func syncExtensionsIfChanged() {
        let state = extensionState
        if state.registry.generation.load(ordering: .relaxed) != state.appliedGeneration {
            try? syncExtensions()
        }
    }

    /// Makes this connection's tracers, functions and collations the registry's. Throws the first
    /// registration SQLite refused, after trying every other.
    func syncExtensions() throws {
        let state = extensionState
        let snapshot = state.registry.snapshot()
        var firstError: (any Error)?
        for key in state.appliedFunctions.keys where snapshot.functions[key] == nil {
            do {
                try unregisterFunction(key)
                state.appliedFunctions[key] = nil
            } catch {
                firstError = firstError ?? error
            }
        }
        for (key, registration) in snapshot.functions where state.appliedFunctions[key] != registration.serial {
            do {
                try registerFunction(registration.definition)
                state.appliedFunctions[key] = registration.serial
            } catch {
                firstError = firstError ?? error
            }
        }
        for key in state.appliedCollations.keys where snapshot.collations[key] == nil {
            do {
                try registerCollation(named: key, nil)
                state.appliedCollations[key] = nil
            } catch {
                firstError = firstError ?? error
            }
        }
        for (key, registration) in snapshot.collations where state.appliedCollations[key] != registration.serial {
            do {
                try registerCollation(named: registration.definition.name, registration.definition)
                state.appliedCollations[key] = registration.serial
            } catch {
                firstError = firstError ?? error
            }
        }
        state.tracers = snapshot.tracers.isEmpty ? nil : snapshot.tracers
        state.capturesArguments = snapshot.tracers.contains { $0.options.includeArguments }
        refreshFunctionState(snapshot)
        if let firstError { throw firstError }
        state.appliedGeneration = snapshot.generation
    }

    /// Updates what the guards and statements need to know about the functions that the schema
    /// may not call.
    private func refreshFunctionState(_ snapshot: ConnectionExtensions.Snapshot) {
        let names = Set(snapshot.functions.values.filter { !$0.definition.isAllowedInSchema }.map(\.definition.key.name))
        let calls = extensionState.calls
        calls.directOnlyNames = names
        calls.enforcesDirectOnly = scb_sqlite_version_number() < 3_030_000
        // The authorizer's check (a call from inside a trigger or view) only where SQLite does not
        // refuse such calls itself (SQLITE_DIRECTONLY, 3.30 and later): the authorizer reports a
        // common table expression as such a context too, and would refuse a function called in
        // the statement's own WITH clause, which SQLite rightly allows.
        statementGate.directOnlyFunctions = calls.enforcesDirectOnly ? names : []
        extensionState.tracksRunningStatement = calls.enforcesDirectOnly && !names.isEmpty
    }

    // MARK: Tracing

    /// Adds `tracer` to the registry and applies it here at once; returns its token.
    func startTracing(_ tracer: TraceObserver) throws -> TraceToken {
        let registry = extensionState.registry
        registry.add(tracer: tracer)
        try syncExtensions()
        return TraceToken(observer: tracer, registry: registry)
    }

    /// Removes every tracer of the registry.
    func stopTracing() throws {
        extensionState.registry.removeAllTracers()
        try syncExtensions()
    }

    // MARK: Adding and removing

    /// Checks `function`, registers it on this connection, then records it in the registry for
    /// the other connections.
    /// - Throws: ``SqlCipherError/registrationFailed(name:reason:)``.
    func add(function: DatabaseFunction) throws {
        try syncExtensions()
        try checkName(function.name)
        if let count = function.argumentCount, !(0...Self.maximumArgumentCount).contains(count) {
            throw SqlCipherError.registrationFailed(
                name: function.name,
                reason: "argumentCount is \(count); give 0 to \(Self.maximumArgumentCount), or nil for any number")
        }
        let registry = extensionState.registry
        let folded = FunctionKey.fold(function.name)
        if !registry.hasFunction(named: folded) && sqliteDefinesFunction(function.name) {
            throw SqlCipherError.registrationFailed(
                name: function.name,
                reason: "SQLite already defines a function of that name, and statements, indexes and views of this "
                    + "database (and SqlCipherKit's own checks) may count on it; choose another name, such as "
                    + "app_\(function.name)")
        }
        let serial = registry.nextSerial()
        try registerFunction(function)
        extensionState.appliedFunctions[function.key] = serial
        registry.store(function: function, serial: serial)
        refreshFunctionState(registry.snapshot())
    }

    /// Removes the function with `function`'s name and argument count; nothing happens when there
    /// is none.
    func remove(function: DatabaseFunction) throws {
        try syncExtensions()
        let key = function.key
        guard extensionState.registry.snapshot().functions[key] != nil else { return }
        try unregisterFunction(key)
        extensionState.appliedFunctions[key] = nil
        extensionState.registry.removeFunction(key)
        refreshFunctionState(extensionState.registry.snapshot())
    }

    /// Checks `collation`, registers it on this connection, then records it in the registry.
    /// - Throws: ``SqlCipherError/registrationFailed(name:reason:)``.
    func add(collation: DatabaseCollation) throws {
        try syncExtensions()
        try checkName(collation.name)
        let registry = extensionState.registry
        if registry.snapshot().collations[collation.key] == nil && sqliteDefinesCollation(collation.name) {
            throw SqlCipherError.registrationFailed(
                name: collation.name,
                reason: "SQLite already defines a collation of that name, and indexes of this database may be sorted "
                    + "by it; choose another name")
        }
        let serial = registry.nextSerial()
        try registerCollation(named: collation.name, collation)
        extensionState.appliedCollations[collation.key] = serial
        registry.store(collation: collation, serial: serial)
    }

    /// Removes the collation named as `collation`; nothing happens when there is none.
    func remove(collation: DatabaseCollation) throws {
        try syncExtensions()
        let key = collation.key
        guard extensionState.registry.snapshot().collations[key] != nil else { return }
        try registerCollation(named: collation.name, nil)
        extensionState.appliedCollations[key] = nil
        extensionState.registry.removeCollation(key)
    }

    // MARK: SQLite

    /// Refuses names SQLite cannot take and SQLCipher's own.
    private func checkName(_ name: String) throws {
        let length = name.utf8.count
        let reason: String?
        if length == 0 {
            reason = "the name is empty"
        } else if length > Self.maximumNameLength {
            reason = "the name is \(length) bytes long; SQLite takes at most \(Self.maximumNameLength)"
        } else if name.utf8.contains(0) {
            reason = "the name contains a NUL character"
        } else if FunctionKey.fold(name).hasPrefix("sqlcipher") {
            reason = "names that start with sqlcipher are SQLCipher's own (sqlcipher_export copies the whole database, "
                + "and SqlCipherKit's conversions call it)"
        } else {
            reason = nil
        }
        if let reason { throw SqlCipherError.registrationFailed(name: name, reason: reason) }
    }

    /// Whether SQLite knows a function named `name`, with any number of arguments: compiling a
    /// call without arguments fails with "no such function" only when it knows none (a built-in
    /// taking arguments fails with "wrong number of arguments" instead).
    private func sqliteDefinesFunction(_ name: String) -> Bool {
        compiles("SELECT \(SQLRenderer.quotedName(name))()", unlessItSays: "no such function")
    }

    /// Whether SQLite has a collation named `name` that compares: `PRAGMA collation_list` lists
    /// it, and a comparison with it compiles. SQLite 3.15.2 (SQLCipher 3.4.1) also lists a name
    /// that the schema merely mentions (a table or index of a file made by a program that
    /// registers it), with no comparison behind it; taking that for a built-in refused the one
    /// registration that makes such a file usable. A comparison compiles only with a collation
    /// that SQLite can call ("no such collation sequence" otherwise).
    private func sqliteDefinesCollation(_ name: String) -> Bool {
        let folded = FunctionKey.fold(name)
        var found = false
        _ = rows("PRAGMA collation_list", columns: [1]) { values in
            if case .text(let listed) = values[0], FunctionKey.fold(listed) == folded { found = true }
        }
        guard found else { return false }
        return compiles("SELECT 'a' < 'b' COLLATE \(SQLRenderer.quotedName(name))", unlessItSays: "no such collation sequence")
    }

    /// Whether a probe statement compiles, or fails for a reason other than `missing` (SQLite's
    /// message when it knows no such name); the probe is never run.
    private func compiles(_ probeSQL: String, unlessItSays missing: String) -> Bool {
        var probe: OpaquePointer?
        let rc = compile(probeSQL, statement: &probe).rc
        if let probe { scb_finalize(probe) }
        guard rc != 0 else { return true }
        return !String(cString: scb_errmsg(handle)).hasPrefix(missing)
    }

    /// Registers `function` with SQLite on this connection.
    private func registerFunction(_ function: DatabaseFunction) throws {
        var flags: Int32 = function.isDeterministic ? Self.deterministicFlag : 0
        flags |= function.isAllowedInSchema ? Self.innocuousFlag : Self.directOnlyFlag
        let app = Unmanaged.passRetained(FunctionBox(function, calls: extensionState.calls)).toOpaque()
        // SQLite owns the box from here, also when the registration fails (it calls the destroy
        // callback then).
        let rc: Int32 = function.name.withCString { name in
            switch function.body {
            case .scalar:
                return scb_create_function(handle, name, function.key.argumentCount, flags, app, sqlFunctionCall, nil, nil,
                                           sqlFunctionRelease)
            case .aggregate:
                return scb_create_function(handle, name, function.key.argumentCount, flags, app, nil, sqlAggregateStep,
                                           sqlAggregateFinal, sqlFunctionRelease)
            }
        }
        guard rc == 0 else { throw registrationError(function.name, rc) }
    }

    /// Deletes the function with `key` from this connection.
    private func unregisterFunction(_ key: FunctionKey) throws {
        let rc = key.name.withCString { name in
            scb_create_function(handle, name, key.argumentCount, 0, nil, nil, nil, nil, nil)
        }
        guard rc == 0 else { throw registrationError(key.name, rc) }
    }

    /// Registers `collation` under `name`, or deletes the collation `name` when it is nil.
    private func registerCollation(named name: String, _ collation: DatabaseCollation?) throws {
        let rc: Int32 = name.withCString { cName in
            guard let collation else { return scb_create_collation(handle, cName, nil, nil, nil) }
            let app = Unmanaged.passRetained(CollationBox(collation)).toOpaque()
            // The bridge releases the box when the registration fails.
            return scb_create_collation(handle, cName, app, sqlCollationCompare, sqlCollationRelease)
        }
        guard rc == 0 else { throw registrationError(name, rc) }
    }

    private func registrationError(_ name: String, _ rc: Int32) -> SqlCipherError {
        let message = String(cString: scb_errmsg(handle))
        let advice = rc & 0xFF == 5 ? " (finish the cursors and streams that are open, then try again)" : ""
        return .registrationFailed(name: name, reason: "SQLite refused it with error \(rc & 0xFF): \(message)\(advice)")
    }

    // MARK: Errors

    /// The typed error of a statement that failed because a function written in Swift failed:
    /// the failure the function recorded, when SQLite's message is the one it set; or SQLite's own
    /// refusal of a function that the schema may not call ("unsafe use of name()").
    func functionFailure(sql: String?) -> SqlCipherError? {
        let calls = extensionState.calls
        let message = String(cString: scb_errmsg(handle))
        if let failure = calls.failure {
            calls.failure = nil
            if failure.message == message {
                switch failure.error {
                case let .functionFailed(name, message, _):
                    return .functionFailed(name: name, message: message, sql: sql ?? "").redactingSQL()
                case let .functionNotAllowedInSchema(name, _):
                    return .functionNotAllowedInSchema(name: name, sql: sql ?? "").redactingSQL()
                default:
                    return failure.error
                }
            }
        }
        let prefix = "unsafe use of "
        if !calls.directOnlyNames.isEmpty, message.hasPrefix(prefix), message.hasSuffix("()") {
            let name = String(message.dropFirst(prefix.count).dropLast(2))
            if calls.directOnlyNames.contains(FunctionKey.fold(name)) {
                return .functionNotAllowedInSchema(name: name, sql: sql ?? "").redactingSQL()
            }
        }
        return nil
    }
}
