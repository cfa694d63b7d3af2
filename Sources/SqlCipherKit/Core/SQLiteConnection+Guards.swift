import CSqlCipherBridge
import Foundation

/// The checks every SQL text passes before SQLite compiles it, and the statements the authorizer
/// refuses. Both run when a statement is prepared, never when a cached statement is reused: the
/// cache holds only statements whose text passed, and the authorizer also runs when SQLite
/// re-prepares a statement by itself.
extension SQLiteConnection {
    /// Throws ``SqlCipherError/nulCharacterInSQL(sql:offset:)`` when `sql` contains U+0000.
    ///
    /// SQLite reads SQL text only up to the first NUL, whatever length it is given, and reports no
    /// error for the rest: `DELETE FROM t\0 WHERE id = 1` would run `DELETE FROM t`. Called by every
    /// path that hands package-supplied text to `scb_prepare`.
    static func refuseNUL(in sql: String) throws {
        // Native strings are contiguous UTF-8: one memchr, the cost of a cache miss only.
        let offset: Int? = sql.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            guard let base = bytes.baseAddress, !bytes.isEmpty, let hit = memchr(base, 0, bytes.count) else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
        } ?? sql.utf8.firstIndex(of: 0).map { sql.utf8.distance(from: sql.utf8.startIndex, to: $0) }
        if let offset { throw SqlCipherError.nulCharacterInSQL(sql: sql, offset: offset).redactingSQL() }
    }

    /// `SQLITE_AUTH` (https://sqlite.org/rescode.html#auth).
    static let sqliteAuth: Int32 = 23
    /// `SQLITE_PRAGMA`, the authorizer's action code for a pragma (https://sqlite.org/c3ref/c_alter_table.html).
    static let pragmaAction: Int32 = 19
    /// `SQLITE_DENY` (https://sqlite.org/c3ref/c_deny.html).
    static let deny: Int32 = 1

    /// Whether the authorizer must refuse `PRAGMA <name> = <value>` (`value` nil when the pragma is
    /// only read). SQLCipher encrypts the database, its journals and WAL, but not SQLite's temporary
    /// files (sorter spills, temporary tables and indices, materializations), which `temp_store =
    /// FILE` puts on disk, as `DEFAULT` does on builds with SQLite's default `SQLITE_TEMP_STORE=1`
    /// (Debian's report `TEMP_STORE=2`): the package sets `temp_store = MEMORY` and refuses every
    /// statement that would undo it. Reading either pragma stays allowed.
    ///
    /// `writable_schema` may be read and turned off, never on: with it, `UPDATE sqlite_master` can
    /// leave one malformed schema entry, after which no key opens the file again (all its rows are
    /// lost; https://sqlite.org/pragma.html#pragma_writable_schema).
    ///
    /// `hard_heap_limit` and `soft_heap_limit` may be read, never set (``isProcessWideLimitPragma(_:)``).
    ///
    /// Called from the C authorizer on every pragma: it compares bytes in place and allocates nothing.
    static func refusesPragma(_ name: UnsafePointer<CChar>, value: UnsafePointer<CChar>?) -> Bool {
        guard let value else { return false }
        if strcasecmp(name, "writable_schema") == 0 {
            return strcmp(value, "0") != 0 && strcasecmp(value, "off") != 0 && strcasecmp(value, "no") != 0
                && strcasecmp(value, "false") != 0
        }
        if strcasecmp(name, "temp_store_directory") == 0 { return true }
        if isProcessWideLimitPragma(name) { return true }
        guard strcasecmp(name, "temp_store") == 0 else { return false }
        // SQLite's own reading of the value (getTempStore in pragma.c): a leading digit 0-2 is
        // taken as the number, "file" and "memory" by name, anything else as DEFAULT (0).
        let first = UInt8(bitPattern: value.pointee)
        if first >= UInt8(ascii: "0") && first <= UInt8(ascii: "2") { return first != UInt8(ascii: "2") }
        return strcasecmp(value, "memory") != 0
    }
}

extension SQLiteConnection {
    /// The pragmas whose setting lives in one connection, not in the file
    /// (https://sqlite.org/pragma.html): set as raw SQL on a ``DatabasePool``, each would reach
    /// whichever connection ran the call. `temp_store` is not here: it is refused everywhere.
    /// `defer_foreign_keys` is not either: it lasts one transaction, which runs on one connection.
    static let perConnectionPragmas: [StaticString] = [
        "analysis_limit", "automatic_index", "busy_timeout", "cache_size", "cache_spill", "case_sensitive_like",
        "cell_size_check", "checkpoint_fullfsync", "count_changes", "empty_result_callbacks", "foreign_keys",
        "full_column_names", "fullfsync", "ignore_check_constraints", "journal_size_limit", "legacy_alter_table",
        "locking_mode", "mmap_size", "query_only", "read_uncommitted", "recursive_triggers",
        "reverse_unordered_selects", "secure_delete", "short_column_names", "synchronous", "threads",
        "trusted_schema", "wal_autocheckpoint",
    ]

    /// Whether `name` is one of ``perConnectionPragmas`` (compared in place, as SQLite compares
    /// pragma names: without regard to ASCII case).
    static func isPerConnectionPragma(_ name: UnsafePointer<CChar>) -> Bool {
        perConnectionPragmas.contains { known in
            known.withUTF8Buffer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { strcasecmp(name, $0.baseAddress!) == 0 }
            }
        }
    }
}

// MARK: - Refusals judged on the text, and the ATTACH check

extension SQLiteConnection {
    /// The refusals that the authorizer cannot make, judged on the text of the statement just
    /// compiled:
    /// - ``SqlCipherError/unsafeVacuumInto(sql:)`` for `VACUUM ... INTO` where this database does
    ///   not allow it (`VACUUM` reports nothing to the authorizer);
    /// - ``SqlCipherError/unsafeFunction(name:sql:)`` for a `CREATE TABLE` or `ALTER TABLE` whose text calls a
    ///   `sqlcipher*` function: SQLite compiles a column `DEFAULT` (and a generated column) without
    ///   telling the authorizer about its functions, so `DEFAULT (sqlcipher_export('b'))` would copy
    ///   the database at the next `INSERT`;
    /// - ``SqlCipherError/invalidQuery(reason:)`` for a `CREATE VIRTUAL TABLE … USING fts5` whose
    ///   tokenizer chain is deep enough to overflow the stack (``refuseDeepTokenizerChain(_:sql:)``).
    /// Only statements that start with `VACUUM`, `CREATE`, `ALTER` or a comment are tokenized.
    /// The text `sqlite3_sql` returns starts where the compile started, so it includes the empty
    /// statements SQLite skipped before this one: `;VACUUM INTO …` and `SELECT 1; ;VACUUM INTO …`
    /// compile to a `VACUUM` whose text starts with `;` (found by the hostile-input review: the
    /// check read `;` as the head and let the plaintext copy run). Whitespace, `;`, comments and
    /// UTF-8 byte-order marks before the head are all skipped: SQLite 3.46 reads a byte-order mark
    /// as whitespace, and `\u{FEFF}VACUUM INTO 'file:…?key='` wrote a plaintext copy while the
    /// check saw no `VACUUM` (found by the adversarial review).
    ///
    /// Returns whether the statement is a `VACUUM … INTO` whose target is a parameter, which
    /// ``vacuumIntoWillRun(_:)`` checks once its value is bound.
    @discardableResult
    func refuseByText(_ handle: OpaquePointer, sql: String) throws -> Bool {
        guard let text = scb_sql(handle) else { return false }
        var cursor = text
        while true {
            let byte = UInt8(bitPattern: cursor.pointee)
            if byte == 32 || byte == 59 || (byte >= 9 && byte <= 13) {
                cursor += 1
            } else if byte == 0xEF, UInt8(bitPattern: cursor[1]) == 0xBB, UInt8(bitPattern: cursor[2]) == 0xBF {
                // The text ends with a NUL, so cursor[2] is read only after cursor[1] proved no end.
                cursor += 3
            } else {
                break
            }
        }
        let first = cursor.pointee
        let vacuum = strncasecmp(cursor, "vacuum", 6) == 0
        let schema = strncasecmp(cursor, "create", 6) == 0 || strncasecmp(cursor, "alter", 5) == 0
        guard vacuum || schema || first == 45 || first == 47 else { return false }
        guard let all = SQLTokenizer.tokenize(String(cString: text)) else { return false }
        let tokens = Array(all.drop(while: { $0.isSymbol(";") }))
        guard let head = tokens.first else { return false }
        if head.isKeyword("VACUUM") {
            if !statementGate.allowsVacuumInto && tokens.contains(where: { $0.isKeyword("INTO") }) {
                throw SqlCipherError.unsafeVacuumInto(sql: sql).redactingSQL()
            }
            if let into = tokens.firstIndex(where: { $0.isKeyword("INTO") }), into + 1 < tokens.count {
                if tokens[into + 1].kind == .variable { return true }
                try Self.refuseTextkeyTarget(tokens[into + 1])
            }
        } else if head.isKeyword("CREATE") || head.isKeyword("ALTER"), !scope.isPackage,
                  tokens.prefix(3).contains(where: { $0.isKeyword("TABLE") }) {
            try Self.refuseDeepTokenizerChain(tokens, sql: sql)
            // Tables only: views and triggers are resolved, so the authorizer refuses their calls
            // when they are used (SqlCipherKit.docc/RawSQLGuards.md).
            // Every `sqlcipher…(` is taken for a call unless it stands where a table definition puts a
            // NAME before `(`: the table's own (after TABLE, EXISTS or `schema .`), a foreign key's
            // parent (REFERENCES), a virtual table's module (USING), a column's type (after the
            // column's name, a word that is no keyword). Listing the keywords that start an
            // expression instead missed IS, LIKE, GLOB, BETWEEN, CASE, ESCAPE and FROM: a DEFAULT
            // (1 IS sqlcipher_export('b')) ran the export at the next INSERT, and on 3.4.1 a DEFAULT
            // (CASE sqlcipher_export('b') …) crashed the process (found by the hostile-input review).
            let namePositions = ["TABLE", "EXISTS", "REFERENCES", "USING"]
            func isCall(_ index: Int) -> Bool {
                let previous = tokens[index - 1]
                switch previous.kind {
                case .word:
                    let word = previous.text.uppercased()
                    return SQLTokenizer.keywords.contains(word) && !namePositions.contains(word)
                case .quotedIdentifier:
                    return false
                case .symbol where previous.isSymbol(".") && index >= 3:
                    return !namePositions.contains(where: tokens[index - 3].isKeyword)
                default:
                    return true
                }
            }
            for index in tokens.indices.dropFirst().dropLast() {
                let token = tokens[index]
                guard token.kind == .word || token.kind == .quotedIdentifier,
                      token.identifier?.lowercased().hasPrefix("sqlcipher") == true, tokens[index + 1].isSymbol("("),
                      isCall(index) else { continue }
                throw SqlCipherError.unsafeFunction(name: token.identifier ?? token.text, sql: sql).redactingSQL()
            }
        }
        return false
    }

    /// The most words an FTS5 `tokenize` option may hold. The built-in tokenizers take a handful
    /// (`porter unicode61 remove_diacritics 2 tokenchars '-_' separators '.'` is 9).
    static let maximumTokenizerWords = 64

    /// Refuses `CREATE VIRTUAL TABLE … USING fts5(…)` whose `tokenize` option holds more than
    /// ``maximumTokenizerWords`` words, with ``SqlCipherError/invalidQuery(reason:)``. FTS5 builds a
    /// `porter` tokenizer around the tokenizer the rest of the words name, recursively, when the
    /// table is created and each time a connection opens it: `tokenize='porter porter … unicode61'`
    /// with 200,000 words ended the process with a stack overflow in SQLite (SQLCipher 4.6.1, found
    /// by the adversarial review). The words are counted as FTS5 splits them: runs of non-space
    /// bytes, a `'…'` literal being one word.
    static func refuseDeepTokenizerChain(_ tokens: [SQLTokenizer.Token], sql: String) throws {
        if let words = tokenizerWords(tokens), words > maximumTokenizerWords {
            throw SqlCipherError.invalidQuery(
                reason: "the FTS5 tokenize option holds \(words) words, more than the \(maximumTokenizerWords) the package "
                    + "allows: FTS5 nests one tokenizer in another for each porter word, and a chain that long can exhaust "
                    + "the thread's stack and end the process. Name each tokenizer once, e.g. tokenize='porter unicode61' "
                    + "(CreateFTS5Table's tokenizer(_:) writes it)")
        }
    }

    /// The most words a `tokenize` option of a `CREATE VIRTUAL TABLE … USING fts5(…)` holds, or nil
    /// for any other statement: the one reading of such a definition, whether it is about to run
    /// or was found in a file's schema (``tablesWithDeepTokenizerChains(schema:)``).
    static func tokenizerWords(_ tokens: [SQLTokenizer.Token]) -> Int? {
        guard tokens.count > 4, tokens[1].isKeyword("VIRTUAL"),
              let using = tokens.firstIndex(where: { $0.isKeyword("USING") }), using + 1 < tokens.count,
              tokens[using + 1].identifier.map({ FunctionKey.fold($0) }) == "fts5" else { return nil }
        var most = 0
        for index in tokens.indices.dropFirst(using + 2) where index + 2 < tokens.count {
            guard tokens[index].kind == .word || tokens[index].kind == .quotedIdentifier,
                  tokens[index].identifier.map({ FunctionKey.fold($0) }) == "tokenize", tokens[index + 1].isSymbol("="),
                  let value = tokens[index + 2].identifier else { continue }
            most = max(most, tokenizerWordCount(Array(value.utf8)))
        }
        return most
    }

    /// The FTS5 tables of `schema` whose stored definition has a tokenizer chain deeper than
    /// ``maximumTokenizerWords``: a file written by another program (a plaintext file to import or
    /// encrypt, a database with its key, an attached one) can hold one that the statement guard
    /// would have refused, and FTS5 builds the chain, overflowing the stack, as soon as any
    /// statement names the table, before the authorizer hears of it. Virtual tables are the
    /// `sqlite_master` rows of type `table` without a root page; the query reads only those.
    func tablesWithDeepTokenizerChains(schema: String = "main") -> [String] {
        var found: [String] = []
        _ = rows("SELECT name, sql FROM \(SQLRenderer.quotedName(schema)).sqlite_master "
                    + "WHERE type = 'table' AND rootpage = 0 AND sql IS NOT NULL", columns: [0, 1]) { values in
            guard case .text(let name) = values[0], case .text(let sql) = values[1],
                  let tokens = SQLTokenizer.tokenize(sql), let words = Self.tokenizerWords(tokens),
                  words > Self.maximumTokenizerWords else { return }
            found.append(name)
        }
        return found
    }

    /// Why a file whose schema holds ``tablesWithDeepTokenizerChains(schema:)`` is not opened.
    static func deepTokenizerChainsReason(_ tables: [String]) -> String {
        "its schema holds the FTS5 table\(tables.count == 1 ? "" : "s") "
            + tables.prefix(5).map { "\"\($0)\"" }.joined(separator: ", ")
            + " whose tokenize option nests more than \(maximumTokenizerWords) tokenizers: FTS5 builds that chain as soon as "
            + "a statement names the table, and a chain that deep can exhaust the thread's stack and end the process. The "
            + "file was not written by SqlCipherKit (which refuses such a table); remove the table with the program that "
            + "made it, or do not open the file"
    }

    /// The words of an FTS5 tokenizer specification: runs of non-whitespace bytes, where a `'…'`
    /// literal (`''` inside it is one quote) is one word whatever it holds.
    private static func tokenizerWordCount(_ bytes: [UInt8]) -> Int {
        func isSpace(_ byte: UInt8) -> Bool { byte == 32 || (byte >= 9 && byte <= 13) }
        var count = 0
        var index = 0
        while index < bytes.count {
            if isSpace(bytes[index]) {
                index += 1
                continue
            }
            count += 1
            if bytes[index] == UInt8(ascii: "'") {
                index += 1
                while index < bytes.count {
                    if bytes[index] == UInt8(ascii: "'") {
                        if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "'") { index += 2; continue }
                        index += 1
                        break
                    }
                    index += 1
                }
            } else {
                while index < bytes.count, !isSpace(bytes[index]) { index += 1 }
            }
        }
        return count
    }

    /// Before a user's `ATTACH` runs: refuses a file whose `-journal`, `-wal` or `-shm` is a
    /// symbolic link or not a regular file (``DatabaseOpener/refuseSpecialCompanions(of:)``), and
    /// a file whose live `-journal` (a write that was interrupted, or is under way elsewhere)
    /// holds pages smaller than the encryption of the attached database uses (the loaded
    /// library's default cipher page size). SQLite rolls a hot
    /// journal back while it attaches, before the key is checked, and SQLCipher 3.4.1 then crashes
    /// the process (SIGSEGV, measured: a plaintext file of 512-byte pages attached with a `KEY`);
    /// the opener refuses the same file for `Database(path:key:)` (DatabaseOpener). Then notes when
    /// the statement starts (see ``StatementGate/attachStarted``).
    ///
    /// The file is read from the statement's text with its bound values written in, so a file
    /// bound as a parameter is checked as one written in the text. A file named by an expression
    /// (`'a' || '.db'`, a function) cannot be checked, so an `ATTACH` of one is refused: the name
    /// is computed in Swift and bound instead. An `ATTACH` without encryption (`KEY ''`, or no
    /// `KEY` on a plaintext database) rolls a journal of smaller pages back as SQLite does.
    ///
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)``; ``SqlCipherError/invalidQuery(reason:)``
    ///   for an `ATTACH` whose file is named by an expression.
    func attachWillRun(_ statement: Statement) throws {
        statementGate.attachFiles = []
        if !scope.isPackage, let text = scb_expanded_sql(statement.handle) {
            defer { scb_free_expanded_sql(text) }
            let operands = text.withMemoryRebound(to: UInt8.self, capacity: 1) {
                AttachOperands(UnsafeBufferPointer(start: $0, count: strlen(text)))
            }
            // The companions every opening checks: SQLite's hot-journal check of the attached
            // file opens a named pipe -journal for reading and waits forever (SQLCipher 4.6.1:
            // the ATTACH never returned), and writes through a linked one and removes the link;
            // it deletes a file it did not write there (a database named like the companion).
            // Beside the name as written and beside the file a link leads to: SQLite names the
            // companions after one or the other, by release.
            for file in operands.file.map(Self.attachedFilePaths) ?? [] {
                try DatabaseOpener.refuseSpecialCompanions(of: file)
                try DatabaseOpener.refuseForeignCompanions(of: file)
                try DatabaseOpener.refuseOtherNames(file, attaching: true)
                try DatabaseOpener.refuseLinkedCompanions(of: file, attaching: true)
                if let resolved = try? DatabasePath.resolve(file), resolved != file {
                    try DatabaseOpener.refuseSpecialCompanions(of: resolved)
                    try DatabaseOpener.refuseForeignCompanions(of: resolved)
                    try DatabaseOpener.refuseLinkedCompanions(of: resolved, attaching: true)
                }
            }
            // SQLCipher hands a `file:` URI's `textkey=` to sqlite3_key_v2 with the length -1: 4.6.1
            // fails with "out of memory", and 4.7 and later copy that length into their private heap
            // and crash the process (SIGSEGV, measured with 4.9.0 and 4.7.0). Refused before SQLite
            // sees it, on every release.
            if let file = operands.file, file.hasPrefix("file:"), Self.uriHasParameter("textkey", file) {
                throw SqlCipherError.invalidQuery(
                    reason: "this ATTACH gives its key as a textkey= parameter of a file: URI, which SQLCipher passes on "
                        + "with a length of -1: SQLCipher 4.6.1 fails with \"out of memory\" and 4.7 and later crash the "
                        + "process. Give the key in the ATTACH's KEY clause instead: execute(\"ATTACH DATABASE ? AS name "
                        + "KEY ?\", path, key). Nothing was attached")
            }
            if operands.isAttach, operands.file == nil {
                throw SqlCipherError.invalidQuery(
                    reason: "this ATTACH names its file with an expression, so SqlCipherKit cannot check the file and its "
                        + "-journal and -wal before SQLite opens them (a named pipe there blocks the call for ever; a "
                        + "-journal left by an interrupted write of another format would be rolled back with this "
                        + "encryption and damage the file, and SQLCipher 3 crashes). Compute the file name in Swift and "
                        + "bind it: execute(\"ATTACH DATABASE ? AS name KEY ?\", path, key), or write it as a string "
                        + "literal. Nothing was attached")
            }
            statementGate.attachFiles = operands.file.map(Self.attachedFilePaths) ?? []
            let encrypted = operands.hasKeyClause ? !operands.keyIsEmpty : statementGate.isEncrypted
            let hotJournal = operands.file.map(Self.attachedFilePaths)?.lazy.compactMap { file in
                ReadOnlyOpening.liveJournalPageSize(file + "-journal").map { (file, $0) }
            }.first
            if encrypted, let (file, journalPageSize) = hotJournal,
               let library = try? SqlCipherLibrary.shared,
               let pageSize = try? KeyDerivation.parameters(for: .default, library: library).pageSize,
               journalPageSize < pageSize {
                throw SqlCipherError.cannotOpen(
                    path: file,
                    reason: "its -journal, left by a write that was interrupted or is under way, holds \(journalPageSize)-byte "
                        + "pages, smaller than the \(pageSize)-byte pages this ATTACH's encryption reads: the file was not "
                        + "written with these settings (a plaintext SQLite file, or one made with another page size), and "
                        + "rolling that write back with them would damage it (SQLCipher 3 crashes). Let the program that "
                        + "wrote it finish, or open it the way it was written (a plaintext file: ATTACH it with KEY '' or read "
                        + "it with importPlaintext(from:as:_:)), which rolls the write back. Nothing was read or changed")
            }
        }
        attachWillRun()
    }

    /// Refuses a `VACUUM INTO` whose target string is a `file:` URI with `textkey=`: SQLite
    /// attaches the target through the code an `ATTACH` runs, which hands that key to SQLCipher
    /// with the length -1 ("out of memory" on 4.6.1, a crash of the process on 4.7 and later).
    static func refuseTextkeyTarget(_ target: SQLTokenizer.Token) throws {
        guard target.kind == .string else { return }
        let value = String(target.text.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'")
        guard value.hasPrefix("file:"), uriHasParameter("textkey", value) else { return }
        throw SqlCipherError.invalidQuery(
            reason: "this VACUUM INTO names a file: URI with a textkey= parameter, which SQLCipher passes on with a "
                + "length of -1: SQLCipher 4.6.1 fails with \"out of memory\" and 4.7 and later crash the process. Name "
                + "the target file without key parameters. Nothing was written")
    }

    /// Before a `VACUUM … INTO ?` runs: the bound target, read from the statement's text with its
    /// values written in, gets the check ``refuseByText(_:sql:)`` gives a target written in the text.
    func vacuumIntoWillRun(_ statement: Statement) throws {
        guard let text = scb_expanded_sql(statement.handle) else { return }
        defer { scb_free_expanded_sql(text) }
        guard let tokens = SQLTokenizer.tokenize(String(cString: text)),
              let into = tokens.firstIndex(where: { $0.isKeyword("INTO") }), into + 1 < tokens.count else { return }
        try Self.refuseTextkeyTarget(tokens[into + 1])
    }

    /// Whether the query of the `file:` URI `uri` has a parameter called `name` (compared after
    /// percent-decoding, as SQLite decodes the query, and in any case, so that no spelling slips by).
    static func uriHasParameter(_ name: String, _ uri: String) -> Bool {
        guard let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first else { return false }
        let parameters = query.prefix { $0 != "#" }.split(separator: "&")
        return parameters.contains { parameter in
            let key = parameter.prefix { $0 != "=" }
            return (String(key).removingPercentEncoding ?? String(key)).lowercased() == name
        }
    }

    /// The paths SQLite may open for an `ATTACH`'s file name, each checked before it runs: any
    /// name but a `file:` one as it is; for a `file:` name both the URI's path
    /// (``attachedFilePath(_:)``) and the name itself, a relative path. Whether SQLite reads the
    /// name as a URI depends on the library's build and the connection's open flags (Debian's
    /// 4.6.1 does; 3.4.1 does only on connections opened with `SQLITE_OPEN_URI`, and takes
    /// `file:x.db` for a file of that name in the working folder otherwise): checking one reading
    /// only left the other unchecked. Empty for an in-memory or temporary database.
    static func attachedFilePaths(_ name: String) -> [String] {
        let candidates = name.hasPrefix("file:") ? [attachedFilePath(name), name] : [name]
        var paths: [String] = []
        for path in candidates where path != ":memory:" && !path.isEmpty && !paths.contains(path) { paths.append(path) }
        return paths
    }

    /// The path SQLite opens for an `ATTACH`'s file name read as a URI: a `file:` URI's path
    /// (authority, query and fragment removed, percent escapes decoded), any other name as it is.
    static func attachedFilePath(_ name: String) -> String {
        guard name.hasPrefix("file:") else { return name }
        var rest = name.dropFirst(5)
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            rest = rest.drop { $0 != "/" }
        }
        let path = rest.prefix { $0 != "?" && $0 != "#" }
        return String(path).removingPercentEncoding ?? String(path)
    }

    /// Notes when a user's `ATTACH` starts (see ``StatementGate/attachStarted``).
    func attachWillRun() {
        var now = timespec()
        #if os(Linux)
        // Linux stamps files from the coarse clock, which can lag the precise one by a tick.
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        #else
        clock_gettime(CLOCK_REALTIME, &now)
        #endif
        statementGate.attachStarted = now
    }

    /// The check after a user's `ATTACH` ran: every attached database that lives in a file must be
    /// a regular file (a device is detached again with ``SqlCipherError/cannotOpen(path:reason:)``),
    /// and encrypted exactly when this one is. One that is not (an empty `KEY` on an encrypted
    /// database, a `key=` URI parameter, a key on a plaintext database) is detached at once, before
    /// any other statement can write to it, and the statement fails with
    /// ``SqlCipherError/unsafeAttach(schema:path:encrypted:sql:)``. In-memory and temporary
    /// databases (no file) are left alone: under `temp_store = MEMORY` their pages never reach a
    /// file. The package's own `ATTACH` (conversions) is not checked. A file that the refused
    /// `ATTACH` created (empty, and younger than the statement) is removed again, so that the folder
    /// is left as it was. One whose schema holds an FTS5 table with a tokenizer chain too deep to
    /// use (``tablesWithDeepTokenizerChains(schema:)``) is detached with
    /// ``SqlCipherError/cannotOpen(path:reason:)``.
    func attachDidRun(_ statement: Statement) throws {
        let gate = statementGate
        let started = gate.attachStarted
        gate.attachStarted = nil
        gate.attachFiles = []
        guard !scope.isPackage else { return }
        var attached: [(schema: String, file: String)] = []
        guard rows("PRAGMA database_list", columns: [0, 1, 2], { values in
            if case .integer(let seq) = values[0], seq > 1, case .text(let schema) = values[1],
               case .text(let file) = values[2], !file.isEmpty {
                attached.append((schema, file))
            }
        }) else { return }
        for (schema, file) in attached {
            let quoted = SQLRenderer.quotedName(schema)
            // A device (`/dev/zero`, `/dev/null`) attaches as an empty database that takes every
            // write and keeps none; `file:` URIs reach it as plain paths do. PRAGMA database_list
            // names the file SQLite opened, so one check covers every way of naming it.
            if let kind = SnapshotFiles.specialKind(file) {
                scb_reset(statement.handle)
                if !rows("DETACH DATABASE \(quoted)", columns: [], { _ in }) {
                    gate.unsafeAttachment = (schema, file, gate.isEncrypted)
                }
                throw SqlCipherError.cannotOpen(
                    path: file,
                    reason: "the ATTACH named \(kind), not a regular file: SQLite would read no database from it and "
                        + "every write to \(schema) would be lost. Attach a regular database file")
            }
            // SQLCipher answers cipher_page_size only for a database with a codec (both versions).
            var encrypted = false
            _ = rows("PRAGMA \(quoted).cipher_page_size", columns: []) { _ in encrypted = true }
            if encrypted == gate.isEncrypted {
                // A file written by another program may hold an FTS5 table that ends the process
                // when a statement names it: detached before any can.
                let deep = tablesWithDeepTokenizerChains(schema: schema)
                guard !deep.isEmpty else { continue }
                scb_reset(statement.handle)
                _ = rows("DETACH DATABASE \(quoted)", columns: [], { _ in })
                throw SqlCipherError.cannotOpen(path: file, reason: Self.deepTokenizerChainsReason(deep))
            }
            scb_reset(statement.handle)
            if !rows("DETACH DATABASE \(quoted)", columns: [], { _ in }) {
                // Never leave such a database usable: from now on the authorizer refuses every
                // statement of this connection, which must be closed.
                gate.unsafeAttachment = (schema, file, encrypted)
            } else if let started {
                Self.removeIfCreatedEmpty(file, since: started)
            }
            throw SqlCipherError.unsafeAttach(schema: schema, path: file, encrypted: encrypted, sql: statement.sql).redactingSQL()
        }
    }

    /// The end of a user's `ATTACH` that failed: SQLite creates a missing file when it opens it, and
    /// some failures come after that (a `KEY` of a number, "Invalid key value"), which left an
    /// empty file under the name (found by the attack review). That file is removed again, as
    /// after a refusal of ``attachDidRun(_:)``.
    func attachFailed() {
        let gate = statementGate
        let started = gate.attachStarted
        let files = gate.attachFiles
        gate.attachStarted = nil
        gate.attachFiles = []
        guard let started, !scope.isPackage else { return }
        for file in files { Self.removeIfCreatedEmpty(file, since: started) }
    }

    /// Removes `path` when it is an empty regular file whose inode changed at or after `since`:
    /// the file an `ATTACH` of a missing path created. An older or non-empty file is never touched.
    private static func removeIfCreatedEmpty(_ path: String, since: timespec) {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size == 0 else { return }
        #if os(Linux)
        let changed = info.st_ctim
        #else
        let changed = info.st_ctimespec
        #endif
        guard changed.tv_sec > since.tv_sec || (changed.tv_sec == since.tv_sec && changed.tv_nsec >= since.tv_nsec) else {
            return
        }
        unlink(path)
    }

    /// Whether `name` is `hard_heap_limit` or `soft_heap_limit`: SQLite keeps both for the whole
    /// process, so one `Database` setting them made every other database and opening of the
    /// process fail with "out of memory" (SQLCipher 4.6.1, measured: `PRAGMA hard_heap_limit =
    /// 300000` on one database, and opening another failed; found by the fuzzing pass). Setting
    /// them is refused, reading is allowed.
    static func isProcessWideLimitPragma(_ name: UnsafePointer<CChar>) -> Bool {
        strcasecmp(name, "hard_heap_limit") == 0 || strcasecmp(name, "soft_heap_limit") == 0
    }

    /// Whether `name` is `temp_store` or `temp_store_directory` (for the error's wording).
    static func isTempStorePragma(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower == "temp_store" || lower == "temp_store_directory"
    }
}
