import CSqlCipherBridge

extension SQLiteConnection {
    /// Installs the commit hook and rollback hook that feed ``changeTracker`` (the authorizer is
    /// the statement gate's: StatementGate.swift; live queries listen to it only while they
    /// analyse a statement, ``record(_:)``).
    ///
    /// Called once, right after opening. The tracker and the commit hook's ``MovedFileCheck`` are
    /// stored properties of the connection, so they outlive the handle and the unretained context
    /// pointers stay valid for as long as SQLite can call back.
    ///
    /// The commit hook first refuses a commit to a file that is no longer at the connection's
    /// path (``MovedFileCheck``); only a commit that goes ahead marks observations dirty.
    func installChangeTracking() {
        movedFileCheck.handle = handle
        movedFileCheck.tracker = changeTracker
        _ = scb_commit_hook(handle, { context in
            guard let context else { return 0 }
            let check = Unmanaged<MovedFileCheck>.fromOpaque(context).takeUnretainedValue()
            // Non-zero turns the commit into a rollback (the rollback hook then runs).
            if check.refusesCommit() { return 1 }
            check.tracker?.transactionWillCommit()
            return 0  // zero lets the commit proceed
        }, Unmanaged.passUnretained(movedFileCheck).toOpaque())
        let context = Unmanaged.passUnretained(changeTracker).toOpaque()
        _ = scb_rollback_hook(handle, { context in
            if let context {
                Unmanaged<ChangeTracker>.fromOpaque(context).takeUnretainedValue().transactionDidRollBack()
            }
        }, context)
    }

    /// One execution of `statement`, before its first step: the statement gate decides whether
    /// it may run (StatementGate.swift), then live queries account for it.
    func statementWillRun(_ statement: Statement) throws {
        assertIsolated()
        // Once the file is known to have left its path, nothing new begins on it (a transaction
        // already open still ends: its commit is refused, its rollback goes through). A
        // rollback-mode connection asks first (MovedFileCheck.checksBeforeEachStatement says why).
        if !isInTransaction
            && (movedFileCheck.fileLeftPath || (movedFileCheck.checksBeforeEachStatement && movedFileCheck.noticeIfMoved())) {
            throw Self.fileMovedError(sql: statement.sql)
        }
        try statementMayRun(statement)
        statement.observation.started = true
        try observationWillRun(statement)
    }

    /// Accounts for one execution of `statement` that the gate let run: analyses it when nobody
    /// has yet (or the analysis is stale) and tells the tracker what it reads and writes.
    private func observationWillRun(_ statement: Statement) throws {
        let tracker = changeTracker
        guard tracker.isActive else { return }
        if statement.observation.generation == tracker.generation, tracker.isSettled(statement.serial), isInTransaction {
            return
        }
        var access: StatementAccess
        if let known = statement.observation.access, statement.observation.generation == tracker.generation {
            access = known
        } else {
            access = analyse(statement)
            statement.observation.access = access
            statement.observation.generation = tracker.generation
        }
        if tracker.isRecordingReads && !access.readsComplete {
            if let opened = tablesOpenedForReading(statement) {
                access.reads.formUnion(opened)
            } else {
                access.reads = .everything
            }
            access.readsComplete = true
            statement.observation.access = access
        }
        try tracker.statementWillRun(
            access, serial: statement.serial, isReadOnly: statement.isReadOnly, sql: statement.sql,
            isInTransaction: { self.isInTransaction })
    }

    /// Compiles the statement's SQL once more with the authorizer recording, and throws the copy
    /// away. A separate compile (rather than recording during the statement's own preparation)
    /// keeps SQLite's silent re-preparations inside `sqlite3_step` from mixing into the record,
    /// and costs nothing while nobody observes.
    private func analyse(_ statement: Statement) -> StatementAccess {
        let tracker = changeTracker
        tracker.probe?.analyses += 1
        guard var access = record(scb_sql(statement.handle)) else {
            // The statement compiled before but not now (its table is gone, say): running it will
            // fail too, but assume the worst rather than trust nothing.
            return .unknown(readOnly: statement.isReadOnly)
        }
        if statement.isReadOnly && !reportsReadsWithoutColumns() {
            access.readsComplete = false
        }
        return access
    }

    /// What compiling `sql` reports to the authorizer, or nil when it does not compile.
    private func record(_ sql: UnsafePointer<CChar>?) -> StatementAccess? {
        let tracker = changeTracker
        tracker.compiling = StatementAccess()
        statementGate.listener = tracker
        defer {
            statementGate.listener = nil
            tracker.compiling = nil
        }
        var probe: OpaquePointer?
        // What the gate refuses here is no error of anyone's: the copy is thrown away.
        let rc = compile(sql, statement: &probe).rc
        if let probe { scb_finalize(probe) }
        guard rc == 0, probe != nil else { return nil }
        return tracker.compiling
    }

    /// Whether this SQLite reports reads of tables from which no column is read, found once by
    /// compiling `SELECT count(*) FROM sqlite_master`.
    private func reportsReadsWithoutColumns() -> Bool {
        if let known = changeTracker.reportsReadsWithoutColumns { return known }
        let reports = record("SELECT count(*) FROM sqlite_master")?.reads.intersects(Self.schemaTableRegion) ?? false
        changeTracker.reportsReadsWithoutColumns = reports
        return reports
    }

    private static let schemaTableRegion: TableRegion = {
        var region = TableRegion()
        region.insert("sqlite_master")
        return region
    }()

    /// The tables whose b-trees the statement's bytecode opens for reading (`OpenRead`), named from
    /// each schema's `sqlite_master` (https://sqlite.org/opcode.html#OpenRead). Nil when the
    /// bytecode or the schema cannot be read. Runs its SQL directly, outside ``Statement``, so it
    /// is neither tracked nor analysed itself.
    private func tablesOpenedForReading(_ statement: Statement) -> TableRegion? {
        guard let sql = scb_sql(statement.handle) else { return nil }
        var rootPages: [Int64: Set<Int64>] = [:]  // schema index -> root pages
        let explained = rows("EXPLAIN " + String(cString: sql), columns: [1, 3, 4]) { values in
            if case .text("OpenRead") = values[0], case .integer(let page) = values[1],
               case .integer(let schema) = values[2] {
                rootPages[schema, default: []].insert(page)
            }
        }
        guard explained else { return nil }
        var region = TableRegion()
        guard !rootPages.isEmpty else { return region }
        var schemaNames: [Int64: String] = [:]
        guard rows("PRAGMA database_list", columns: [0, 1], { values in
            if case .integer(let index) = values[0], case .text(let name) = values[1] { schemaNames[index] = name }
        }) else { return nil }
        for (schema, pages) in rootPages {
            guard let name = schemaNames[schema] else { return nil }
            let quoted = SQLRenderer.quotedName(name)
            guard rows("SELECT tbl_name, rootpage FROM \(quoted).sqlite_master", columns: [0, 1], { values in
                if case .text(let table) = values[0], case .integer(let page) = values[1], pages.contains(page) {
                    region.insert(table)
                }
            }) else { return nil }
        }
        return region
    }
}
