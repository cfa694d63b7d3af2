import CSqlCipherBridge

/// What the package adds to SQLite's own message where that message names neither the cause nor
/// what to do ("database is locked", "file is not a database", `near "?": syntax error`, FTS5's
/// and JSON's bare complaints).
///
/// One home for every such text, so that the connection's error function
/// (`SQLiteConnection.error(_:sql:)`) decides only when a connection's state calls for one (a
/// busy lock, a key proven at opening that stopped working, a file moved) and knows no feature,
/// and so that the SQL redaction can keep the advice when it masks what SQLite echoed of a
/// statement that may hold a key (``suffixes``).
enum SQLiteMessageAdvice {
    /// The advice that follows SQLite's `message` for result code `code` (the primary code) from
    /// `sql`, whatever the connection's state, or nil.
    static func advice(code: Int32, message: String, sql: String?) -> String? {
        switch code {
        case 1:
            if message == "too many SQL variables" { return tooManyVariables }
            if message == "not authorized" || message == "unsafe use of load_extension()" { return extensionLoading }
            // `sqlcipher_export()` reports the error of the copy it writes as SQLITE_ERROR with
            // that error's text: a full disk or an opening without a descriptor keeps its advice.
            if message == "database or disk is full" { return ResourceExhaustion.diskFull }
            if message == "unable to open database file" { return ResourceExhaustion.cannotOpenAdvice }
            // attach.c's only "database %s is locked", and SQLCipher 3's older refusal.
            if message == "cannot DETACH database within transaction"
                || (message.hasPrefix("database ") && message.hasSuffix(" is locked")) {
                return detachInTransaction
            }
            if message == "cannot ATTACH database within transaction" { return attachInTransaction }
            return searchAdvice(for: message, sql: sql)
        case 25 where sql?.contains("snippet(") == true:
            return snippetColumn
        case 13:
            return ResourceExhaustion.diskFull
        case 14:
            return ResourceExhaustion.cannotOpenAdvice
        default:
            return nil
        }
    }

    /// Whether SQLite's message is its bare `near "?": syntax error`, for which
    /// ``misplacedParameter`` is appended after the redaction rather than before it.
    static func isMisplacedParameter(code: Int32, message: String) -> Bool {
        code == 1 && message == "near \"?\": syntax error"
    }

    /// What follows SQLite's "database plain is locked" (SQLCipher 3: "cannot DETACH database within
    /// transaction"), which reads as a busy file: a `DETACH` while a transaction is open on the
    /// connection, the usual place being the body of ``DatabaseAccess/importPlaintext(from:as:_:)``,
    /// which detaches its schema itself.
    static let detachInTransaction = ": SQLite cannot detach a database while this connection has a transaction "
        + "open (or a backup reads that database); no other connection is involved. Inside transaction { }, a "
        + "savepoint or importPlaintext's body (which detaches its file itself when the body returns), leave the "
        + "DETACH out, or run it on the database once the transaction has ended. Nothing was detached"

    /// What follows SQLCipher 3's "cannot ATTACH database within transaction": its SQLite (before
    /// 3.21) attaches only outside a transaction; later releases attach inside one too.
    static let attachInTransaction = ": the SQLite inside this SQLCipher release (3.x) attaches a database only "
        + "outside a transaction. Run the ATTACH on the database before transaction { } begins (or use "
        + "importPlaintext(from:as:_:) for a plaintext file, which attaches and detaches around its body). Nothing "
        + "was attached"

    /// What follows SQLite's bare "attempt to write a readonly database" when the file moved: the
    /// usual cause is an in-place conversion or a rename while this connection stayed open.
    static let databaseMoved = ": the database file was replaced or moved since this connection opened it "
        + "(by encryptInPlace, upgradeFromSqlCipher3, a restore, a rename over its path or its removal), so nothing "
        + "was written to it. Close this connection and open the file at the path again, with the key it has now"

    /// What follows SQLite's bare "database is locked", which names neither the cause nor the
    /// remedy: the busy handler waited for the whole busy timeout and the lock stayed.
    static let busy = ": another connection, in this process or another, kept a lock on the file for longer "
        + "than this connection's busy timeout (DatabaseConfiguration.busyTimeout, 5 seconds unless set): it is "
        + "writing, inside a long transaction, or keeps the file in exclusive locking mode. This statement did not "
        + "take effect. Retry once that connection is done, keep transactions short, or raise busyTimeout"

    /// ``busy`` said of an opening: what waited was the opening's first read (where the key is
    /// checked) or its set-up, none of the caller's statements.
    static let busyOpening = ": another connection, in this process or another, kept a lock on the file for longer "
        + "than the opening's busy timeout (DatabaseConfiguration.busyTimeout, 5 seconds unless set): it is writing, "
        + "inside a long transaction, or keeps the file in exclusive locking mode. The database was not opened and "
        + "nothing was changed. Open it again once that connection is done, or raise busyTimeout"

    /// `SQLITE_BUSY` for `PRAGMA journal_mode` set to anything but `WAL` on a file in WAL mode.
    /// SQLite takes a file out of WAL mode only while no other connection has it open (each keeps
    /// a shared lock on the file for as long as it is open, idle or not), and fails at once
    /// otherwise, without calling the busy handler: ``busy``'s "raise busyTimeout" changed
    /// nothing, and a connection that is merely open, another process's `DatabasePool` for one, is
    /// what stands in the way.
    static let busyLeavingWAL = ": the file is in WAL mode, and SQLite takes a file out of it only while no other "
        + "connection, in this process or another, has it open (each keeps a lock on the file for as long as it is "
        + "open, idle or not, a DatabasePool's too); it refuses at once otherwise, whatever the busy timeout. The "
        + "journal mode was not changed. Close every other connection to the file, then run the statement again"

    /// Whether `sql` is `PRAGMA [main.]journal_mode = <mode>` (or `(<mode>)`) with a mode other
    /// than `WAL`: the statement ``busyLeavingWAL`` explains.
    static func leavesWAL(_ sql: String?) -> Bool {
        guard let sql, let all = SQLTokenizer.tokenize(sql) else { return false }
        let tokens = Array(all.drop(while: { $0.isSymbol(";") }))
        guard tokens.count >= 4, tokens[0].isKeyword("PRAGMA") else { return false }
        var name = 1
        if tokens[2].isSymbol(".") {
            guard tokens[1].names("main") else { return false }
            name = 3
        }
        guard tokens.count > name + 2, tokens[name].names("journal_mode"),
              tokens[name + 1].isSymbol("=") || tokens[name + 1].isSymbol("(") else { return false }
        let value = tokens[name + 2].identifier ?? tokens[name + 2].text
        return value.lowercased() != "wal"
    }

    /// `SQLITE_BUSY` for a write inside a transaction that began without the write lock (a
    /// deferred one: a hand-written `BEGIN` or `SAVEPOINT`). Once such a transaction has read, SQLite does not wait for the write lock at all,
    /// whatever the busy timeout (waiting could deadlock two connections that both read), and
    /// fails at once, or with `SQLITE_BUSY_SNAPSHOT` when another connection committed since the
    /// transaction's first read: raising the busy timeout, as ``busy`` advises, changes nothing.
    static let busyInDeferredTransaction = ": another connection, in this process or another, was writing or had "
        + "committed since this transaction began, and this transaction began without the write lock (BEGIN "
        + "or SAVEPOINT by hand) and has read: SQLite then fails at once instead of "
        + "waiting for the lock, whatever the busy timeout, because waiting could deadlock. This statement did not "
        + "take effect. Let the transaction roll back and run it again as a whole, or use transaction { }, which "
        + "begins with BEGIN IMMEDIATE and waits up to the busy timeout for the write lock before the body runs"

    /// The advice that `SQLiteConnection.error(_:sql:)` appends to SQLite's message before the
    /// redaction: text of the package's own,
    /// which ``SQLRedaction/message(_:of:)`` keeps when it masks what SQLite echoed of a statement
    /// that may hold a key.
    static var suffixes: [String] {
        [busy, busyInDeferredTransaction, busyLeavingWAL, keyChanged, databaseMoved, tooManyVariables, pageOneDecryptsYetNotADatabase,
         ResourceExhaustion.diskFull, ": " + ResourceExhaustion.outOfDescriptors, codecErrorSticks, extensionLoading,
         detachInTransaction, attachInTransaction]
    }

    /// What follows SQLite's "out of memory" on an encrypted connection of SQLCipher 4.7 or later.
    /// From 4.7 on, SQLCipher puts a connection's codec in an error state for good once a page
    /// fails to decrypt on it (`sqlite3Codec` keeps `ctx->error`, checked before every page), and
    /// SQLite reports every later page access as `SQLITE_NOMEM`. A page fails to decrypt after
    /// another connection's rekey, on a damaged page, and also after a read that failed with an I/O
    /// error, since SQLite's pager decrypts the buffer even then. 4.6.1 and 3.4.1 let the next
    /// statement read again. Real memory exhaustion gives the same code, so the text names both.
    static let codecErrorSticks = ": on SQLCipher 4.7 and later this is usually not a lack of memory. SQLCipher keeps "
        + "a connection in error for good once a page of the file failed to read or decrypt on it, and every later "
        + "statement on that connection then fails this way. Most likely another connection changed the key (rekey) "
        + "since this one opened the file, or a read failed (an I/O error) or found a damaged page. Nothing more is "
        + "read or written through this connection: close this Database or DatabasePool and open the file again (with "
        + "the key it has now); if that fails too, run verifyIntegrity() or sqlcipher-doctor verify on the file"

    /// What follows SQLite's bare "file is not a database" on an encrypted connection that opened
    /// the file with a key that worked: the usual cause is a rekey by another connection, in this
    /// process or another, which SQLCipher's page-1 check reports in those words.
    static let keyChanged = ": the file's first page no longer decrypts with the key this connection opened it "
        + "with. Most likely another connection (in this process or another) changed the key (rekey) since; nothing "
        + "was written. Close this connection and open the file again with the key it has now. If no key was changed, "
        + "the file was replaced or damaged: run sqlcipher-doctor verify on it"

    /// What follows SQLite's bare "file is not a database" at an opening whose proof found page 1
    /// decrypting with the key (``DatabaseOpener/FirstReadContradicted``), on every try.
    static let pageOneDecryptsYetNotADatabase = ": the key decrypts the file's first page, yet SQLite refuses "
        + "the file on every try. Either another connection (in this process or another) kept changing the key "
        + "(rekey) while this opening read it: open the file with the key it has now. Or the file's header is "
        + "damaged where no HMAC checks it (the plaintext bytes of a plaintext header, such as its page size): "
        + "run sqlcipher-doctor verify on it, and restore it from a backup if it is damaged"

    /// What follows "the key opens the database file, but not the newest pages in its -wal": the
    /// causes, and what to do for each. A rekey by another connection writes every page, under the
    /// new key, into the `-wal` and copies them into the file only at its checkpoint; between the
    /// two (or after a crash there) the file decrypts with the old key and its newest pages with
    /// the new one, which is also what a damaged or foreign `-wal` looks like from here.
    static func walPagesNotDecrypting(wal: String, shm: String) -> String {
        "either the key was changed by another connection (a rekey whose pages are still in \(wal), not yet "
            + "copied into the file): open the file with its new key. Or \(wal) is damaged, or it belongs to another "
            + "database (a file copied or restored without its own -wal). Nothing was changed. If it is another "
            + "file's, move \(wal) and \(shm) away and open again: the database then opens as of its last "
            + "checkpoint. If it is this file's own and no key was changed, restore the database from a backup, or "
            + "move them away to keep what the database file holds"
    }

    /// SQLite's message for `SQLITE_CORRUPT` when it says no more than that.
    static let bareDamage = "database disk image is malformed"

    /// What follows SQLite's bare "database disk image is malformed" on a file whose key was
    /// proven: a page decrypted yet failed SQLite's checks, or did not decrypt (SQLCipher reports
    /// a page whose HMAC fails the same way), or lies past the file's end. `finding` is what the
    /// file's size says (``truncation(fileSize:pageSize:pageCount:walHoldsPages:)``), if anything.
    /// `encrypted` false for a plaintext file, whose pages have no HMAC to fail.
    static func damaged(finding: String?, encrypted: Bool = true) -> String {
        let checks = encrypted ? "its HMAC, or SQLite's own" : "SQLite's own"
        return ": " + (finding.map { $0 + ". " } ?? "the file is damaged: a page failed its checks (\(checks)). ")
            + "The usual causes are a copy that stopped early or was taken while a writer was inside a "
            + "transaction (without its -wal or -journal), a full disk, or bytes overwritten by another program. This "
            + "statement did not take effect. Run verifyIntegrity() or sqlcipher-doctor verify to list the damaged "
            + "pages; tables on other pages still read, so export what reads, and restore the file from a backup"
    }

    /// What the size of a damaged file says, or nil: a size that is not a whole number of pages,
    /// or fewer pages than the header counts (`pageCount`; nil when the header is encrypted and
    /// SQLite only said that the file is shorter than its count). The header's count is the file's
    /// size only when no `-wal` holds pages (`walHoldsPages`): a `-wal` may hold pages past the
    /// main file's end until its checkpoint.
    static func truncation(fileSize: Int, pageSize: Int, pageCount: Int?, walHoldsPages: Bool) -> String? {
        guard pageSize >= 512, fileSize >= 0 else { return nil }
        let cut = "the file was cut short: it holds \(fileSize) bytes"
        if fileSize % pageSize != 0 { return cut + ", which is not a whole number of its \(pageSize)-byte pages" }
        guard !walHoldsPages else { return nil }
        let held = cut + " (\(fileSize / pageSize) pages of \(pageSize) bytes)"
        guard let pageCount else { return held + ", fewer than its header counts" }
        let expected = pageCount.multipliedReportingOverflow(by: pageSize)
        guard !expected.overflow, fileSize < expected.partialValue else { return nil }
        return held + ", and its header counts \(pageCount) pages (\(expected.partialValue) bytes)"
    }

    /// What follows SQLite's bare "too many SQL variables", which says neither the limit nor what to
    /// do: a query builder `in([...])` of a few thousand values, or a long `?` list, meets it on
    /// SQLite 3.15.2 (SQLCipher 3.4.1) from 1,000 values on.
    static var tooManyVariables: String {
        ": the statement has more parameters than SQLite accepts in one statement (999 before SQLite 3.32, "
            + "32,766 from it, unless the library was built with another limit; the loaded SQLite is "
            + loadedSQLiteVersion + "), and every ?, every value of the query builder and every "
            + "value interpolated into an SQL literal is one. Bind fewer: split a long IN list into several queries, "
            + "or pass the values as one JSON array and read them with json_each(?) where SQLite has JSON"
    }

    /// What follows SQLite's bare "not authorized" with `SQLITE_ERROR`: the message of SQL's
    /// `load_extension()` while extension loading is off, which it always is on the package's
    /// connections (a loaded library runs native code inside the process that holds the key).
    /// The authorizer's own refusals are `SQLITE_AUTH` and typed errors, so this text is the
    /// extension's. From a view or trigger, SQLite 3.31 and later refuse the call earlier with
    /// "unsafe use of load_extension()", which gets the same advice (found by the fuzzing pass).
    static let extensionLoading = ": load_extension() is refused because SqlCipherKit never enables extension "
        + "loading: a loaded library runs native code in the process that holds the key, out of reach of the "
        + "checks on raw SQL. Add what the extension provides as Swift functions or collations "
        + "(add(function:), add(collation:)); full-text search (FTS5) and JSON are built in"

    /// The loaded SQLite's version, or "not loaded yet": ``suffixes`` is read by the redaction of
    /// any text, also before a library is loaded, where `scb_sqlite_version()` is NULL and reading
    /// it trapped (a test of the redaction alone crashed the test process when it ran first).
    private static var loadedSQLiteVersion: String {
        guard let version = scb_sqlite_version() as UnsafePointer<CChar>? else { return "not loaded yet" }
        return String(cString: version)
    }

    /// What follows SQLite's bare `near "?": syntax error`: a bound value where SQLite takes none,
    /// most often a value interpolated into an ``SQL`` literal where a name or a PRAGMA's value
    /// goes (`"PRAGMA user_version = \(v)"`, `"CREATE TABLE \(name)(…)"`). Written without a
    /// question mark, which the redaction of a key statement's message would replace.
    static let misplacedParameter = ": SQLite takes a bound value only where an expression goes, so a value "
        + "interpolated into an SQL literal, or a parameter, cannot stand for a PRAGMA's value, a table, column or "
        + "schema name, or an alias. Interpolate a name with \\(identifier:), write a PRAGMA's value into the text, "
        + "and change a key with rekey, never with a PRAGMA"

    /// What follows SQLite's bare "column index out of range" (`SQLITE_RANGE`) from FTS5's
    /// `snippet` given a column past the table's last: the package binds only the parameters a
    /// statement has, so in a statement calling `snippet` this is the column argument.
    static let snippetColumn = ": snippet(column:) names a column past the FTS5 table's last. Columns count "
        + "from 0 in the order the table was created with; give an index below their count, or column: nil for "
        + "the column that matched best"

    /// What follows SQLite's bare messages for a bad JSON path, a text that is not JSON, and a
    /// `MATCH` over a table that has no full-text index: the usual hostile inputs to the JSON
    /// builder expressions (`jsonExtract(atPath:)`, `->`, `->>`, ``JSONEach``) and to `match`,
    /// none of which says what to do.
    private static func searchAdvice(for message: String, sql: String?) -> String? {
        if message.hasPrefix("bad JSON path") {
            return ": a JSON path starts with $, then .name (or .\"odd name\") for a member and [n] or [#-n] for "
                + "an array element, e.g. $.tags[0]; the -> and ->> operators also take a bare member name or "
                + "index. Fix the path; a member name from user input goes in as .\"name\" with any \" escaped"
        }
        if message == "malformed JSON" || message.hasPrefix("malformed JSON") {
            return ": a value read as JSON is not JSON text. Store only valid JSON (check json_valid(x) first), or "
                + "leave out the rows that are not with WHERE json_valid(column)"
        }
        // `notes.match(…)`, `bm25`, `snippet` and `highlight` name the hidden column an FTS5 table
        // has of its own name ("notes"."notes"); a table without it is no FTS5 table.
        if message.hasPrefix("no such column: "), let sql,
           ["MATCH", "bm25(", "snippet(", "highlight("].contains(where: { sql.contains($0) }) {
            let name = message.dropFirst("no such column: ".count)
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 2, parts[0] == parts[1] {
                return ": match, bm25, snippet and highlight search the hidden column an FTS5 table has of its own "
                    + "name, and \(parts[0]) is not an FTS5 table. Create the index with CreateFTS5Table and search "
                    + "it, joining it to the table by rowid"
            }
        }
        // FTS5 reads an external content table as `… FROM 'main'.'notes' AS T`: a column that table
        // lacks (its rowid column, or one named like an FTS5 column) is "no such column: T.x". A
        // statement that names a T itself is left alone: the missing column may be its own.
        if message.hasPrefix("no such column: T."), sql?.contains("T.") == false, sql?.contains("T\".") == false {
            return ": an FTS5 table with external content reads that column from its content table, which has no "
                + "such column. Give externalContent(_:rowid:) the content table's INTEGER PRIMARY KEY (or rowid, "
                + "which a WITHOUT ROWID table lacks), and name each FTS5 column after a column of the content table"
        }
        // A virtual table whose module the loaded SQLite lacks: FTS5 on SQLCipher 3.4.1 (a file
        // made with SQLCipher 4), or a module of another program's build. SQLite names only the
        // module.
        if message.hasPrefix("no such module: ") {
            let loaded = SqlCipherLibrary.loadedForAdvice
            return ": \(loaded) was built without this virtual-table module, so a table that uses it can be neither "
                + "created nor read here; the database's other tables read as usual. Open the file with a SQLCipher "
                + "build that has the module (Debian's SQLCipher 4, libsqlcipher.so.1, has fts5: point "
                + "\(SqlCipherLibrary.environmentVariable) at it), and check library.capabilities before creating such a table"
        }
        if message.hasPrefix("unable to use function MATCH") {
            return ": MATCH searches a full-text (FTS5) table, and the table or column searched is not one. "
                + "Create the index with CreateFTS5Table and search it (index.match(pattern)), joining it to "
                + "the table by rowid"
        }
        return nil
    }
}
