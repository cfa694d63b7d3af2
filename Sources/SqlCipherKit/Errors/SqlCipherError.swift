import Foundation

/// Every error SqlCipherKit throws.
///
/// Each case carries what a person needs to act on it, and ``description`` says what to do.
/// The SQL text a case carries is the statement with any key material replaced by `'***'` (an
/// `ATTACH … KEY`, a `file:` URI's `key=`, a key pragma's value; <doc:RawSQLGuards>), so printing,
/// logging or `dump`ing an error never shows a key.
/// The cases are `Equatable`, so tests and callers can match them exactly:
///
/// ```swift
/// do {
///     _ = try Database(path: path, key: "wrong")
/// } catch SqlCipherError.keyFailed(let path, _) {
///     print("\(path) needs another key")
/// }
/// ```
///
/// ## Opening errors
///
/// Opening a ``Database`` or ``DatabasePool`` checks, in this order, and stops at the first
/// problem: the key (``emptyKey``, ``passphraseLooksLikeRawKey``, a passphrase too long for
/// SQLite, ``invalidRawKey(byteCount:)``), the path and its folder
/// (``cannotOpen(path:reason:)``), the file (``notADatabase(path:reason:)``), then the key against
/// the file (``keyFailed(path:reason:)``, ``notPlaintextDatabase(path:)``, or the library's own
/// ``sqlite(code:extendedCode:message:sql:)`` for a damaged file), and the settings
/// (``unsupported(feature:requires:loaded:)``). Each case says which opening failures give it.
public enum SqlCipherError: Error, Sendable, Equatable {
    // MARK: Loading the library

    /// No SQLCipher library was found at any of the searched paths.
    case libraryNotFound(searched: [String], package: String)
    /// The library at `path` is not SQLCipher (for example a plaintext libsqlite3), or it could not
    /// be proven to encrypt.
    case notSQLCipher(path: String, reason: String)
    /// The library's own `sqlite3_*` references resolve into another object, typically a
    /// libsqlite3 that the process linked or loaded first.
    case bindingConflict(path: String, foreign: Int, checked: Int, symbol: String, boundTo: String)
    /// The library lacks a function SqlCipherKit requires.
    case missingSymbol(path: String, symbol: String)
    /// The process cannot host an isolated load of the library (under a sanitizer, or a fully static
    /// executable, whose own C library a loaded libsqlcipher and libcrypto cannot use), or the library
    /// was already in the process with lazy binding (a build not linked with `-z now`, linked by the
    /// program or preloaded), so its references to its own functions are not bound yet and cannot
    /// be proven.
    case unsupportedRuntime(reason: String)
    /// A different SQLCipher library is already in use by this process.
    case libraryAlreadyLoaded(loaded: String, requested: String)
    /// The loaded library is older than, or lacks features that, the program requires
    /// (``SqlCipherLibrary/require(minimumCipherVersion:_:)``).
    case libraryTooOld(loaded: String, required: String, missing: [String])

    // MARK: Opening and keys

    /// An empty passphrase or key: SQLCipher would silently create a plaintext database.
    ///
    /// Opening: an empty passphrase (checked before anything else).
    case emptyKey
    /// A raw key that is not exactly 32 bytes.
    ///
    /// Opening: a `rawKey:` of any other length.
    case invalidRawKey(byteCount: Int)
    /// The key does not open the file: a wrong key, a plaintext file opened with a key, or
    /// different cipher settings.
    ///
    /// Opening:
    /// - a plaintext SQLite file opened with a key (also one whose pages reserve bytes for
    ///   something else, e.g. a checksum VFS): `reason` says it is plaintext;
    /// - the wrong key (or, with a plaintext header, the wrong salt), or other cipher settings
    ///   than the file was made with, whatever result code the library gave: what decides is
    ///   whether page 1 decrypts (<doc:OpeningADatabase> says how). A file of
    ///   random bytes cannot be told from a wrong key without the key, and is reported the same way.
    case keyFailed(path: String, reason: String)
    /// An encrypted (or otherwise unreadable) file was opened with `Database(unencryptedPath:)`.
    ///
    /// Opening: an encrypted file opened with `unencryptedPath:`.
    case notPlaintextDatabase(path: String)
    /// The file is not a database at all.
    ///
    /// Opening: a file that is not a database (a text file, say).
    case notADatabase(path: String, reason: String)
    /// The path cannot be opened or created (a directory, a missing folder, no permission).
    ///
    /// Opening:
    /// - the path is empty, a directory, in a missing or non-writable folder, or unreadable;
    /// - a file in WAL mode in a folder this process cannot write (its `-wal` and `-shm` cannot be
    ///   created): `reason` says why and what to do;
    /// - a file the key opens whose schema holds SQL the loaded SQLite cannot parse (a `STRICT`
    ///   table or a generated column, written by a newer SQLite, read by SQLCipher 3.4.1): `reason`
    ///   says so and names the library to load instead;
    /// - a `-wal` beside the file whose pages do not decrypt with the key that opens the file
    ///   itself (damaged, or another database's): `reason` says so and what to do.
    case cannotOpen(path: String, reason: String)
    /// A database that was meant to be encrypted shows plaintext on disk. Nothing more was written.
    case plaintextDetected(path: String, reason: String)
    /// The loaded SQLCipher cannot honour a requested feature.
    ///
    /// Opening: a ``CipherSettings`` value the loaded SQLCipher cannot honour (a plaintext header
    /// on SQLCipher 3, say).
    case unsupported(feature: String, requires: String, loaded: String)
    /// A key operation on a database that was opened without encryption.
    case notEncrypted
    /// A rekey did not take effect; the file still opens with the key it had before the call (the old
    /// key, unless another connection changed it first, which `reason` then says). The one
    /// exception, which `reason` opens with: the rewrite was committed and only its proof on a
    /// fresh connection failed, so the file has the new key.
    case rekeyFailed(path: String, reason: String)
    /// An export or conversion failed its verification; the source was left as it was.
    case conversionFailed(source: String, target: String, reason: String)
    /// The database was closed with ``Database/close()`` or ``DatabasePool/close()``.
    case databaseClosed
    /// A ``DatabaseStream`` paused between batches gave its statement (or its pool reader) to
    /// another call that needed it, and was then resumed. `reason` says which call.
    case streamPreempted(reason: String)
    /// A ``DatabasePool`` was opened on a file that is not in WAL mode (or on an in-memory
    /// database), where readers could not run beside the writer.
    case poolRequiresWAL(path: String, journalMode: String)

    // MARK: SQL

    /// SQLite reported an error. `code` is the primary result code, `extendedCode` the extended one
    /// (https://sqlite.org/rescode.html).
    ///
    /// Opening:
    /// - a passphrase of more than `Int32.max` bytes: code 18 (`SQLITE_TOOBIG`);
    /// - the right key on a file damaged behind page 1, or in its plaintext header: the library's
    ///   error as it is (11, `SQLITE_CORRUPT`, for a damaged page; 26 for a header SQLite
    ///   rejects), never ``keyFailed(path:reason:)``, since the key was proven right.
    case sqlite(code: Int32, extendedCode: Int32, message: String, sql: String?)
    /// The number of `?` arguments does not match the statement's parameters.
    case argumentCountMismatch(expected: Int, given: Int, sql: String)
    /// Arguments were given with SQL that holds more than one statement.
    case multipleStatements(sql: String)
    /// The SQL text holds no statement.
    case emptyStatement(sql: String)
    /// The SQL text contains a NUL character (U+0000) at UTF-8 byte `offset`. SQLite reads SQL
    /// text only up to a NUL, so the rest would be silently dropped (a `DELETE` could lose its
    /// `WHERE` clause); nothing was run.
    case nulCharacterInSQL(sql: String, offset: Int)
    /// The statement would make SQLite write temporary data (temporary tables and indices, sort
    /// runs, materialized views) to files that SQLCipher does not encrypt: `PRAGMA temp_store` set
    /// to anything but `MEMORY`, or `PRAGMA temp_store_directory` set at all. Nothing was run.
    ///
    /// The same case refuses the pragmas that would change the key, the cipher format, the key
    /// derivation, the HMAC, the salt, the page size of an encrypted database, the plaintext header
    /// or SQLCipher's process-wide defaults, and those that would write SQL or diagnostics to a
    /// file (`cipher_profile`, `cipher_log`): <doc:RawSQLGuards> lists every `cipher_*` pragma and
    /// what is allowed. On a ``DatabasePool`` it also refuses `PRAGMA journal_mode` set to anything
    /// but `WAL`, the mode a pool's readers need. `value` is the value given, empty when the pragma
    /// was only named.
    case unsafePragma(name: String, value: String, sql: String)
    /// The statement calls a SQLCipher function that copies data between databases outside the
    /// package's verified conversions (`sqlcipher_export`). Nothing was run.
    case unsafeFunction(name: String, sql: String)
    /// The statement sets a per-connection `PRAGMA` on a ``DatabasePool``, which would set it on
    /// whichever one of the pool's connections ran the call, and leave the others as they were.
    /// Nothing was run. Set it for every connection with ``DatabaseConfiguration``
    /// (`configuration:` when the pool opens): its settings, or the statement in its
    /// `prepareConnection`. Inside a migration's `up` or `down` (on a `Database` too) the same
    /// statements are refused, since no rollback of the migration would undo them; the runner then
    /// reports ``migrationFailed(id:reason:)``.
    ///
    /// The pragmas whose setting lives in the connection, not in the file: `analysis_limit`,
    /// `automatic_index`, `busy_timeout`, `cache_size`, `cache_spill`, `case_sensitive_like`,
    /// `cell_size_check`, `checkpoint_fullfsync`, `count_changes`, `empty_result_callbacks`,
    /// `foreign_keys`, `full_column_names`, `fullfsync`, `ignore_check_constraints`,
    /// `journal_size_limit`, `legacy_alter_table`, `locking_mode`, `mmap_size`, `query_only`,
    /// `read_uncommitted`, `recursive_triggers`, `reverse_unordered_selects`, `secure_delete`,
    /// `short_column_names`, `synchronous`, `threads`, `trusted_schema`, `wal_autocheckpoint`.
    /// Reading any of them is allowed.
    case perConnectionPragma(name: String, sql: String)
    /// `ATTACH` would have added a database whose encryption differs from this one's: a plaintext
    /// file (an empty `KEY`) to an encrypted `Database`, where rows copied into it would be written
    /// in the clear, or an encrypted file to a plaintext `Database`. `encrypted` tells which: true
    /// for an encrypted file attached to a plaintext database. The database was detached again
    /// before the statement returned; nothing was written to it, and the empty file the statement
    /// created for a missing path was removed.
    case unsafeAttach(schema: String, path: String, encrypted: Bool, sql: String)
    /// `sql` would change the plaintext database that ``DatabaseAccess/importPlaintext(from:as:_:)``
    /// attached as `schema` for reading: it was not run, and the plaintext file was not written.
    case plaintextAttachmentWrite(schema: String, sql: String)
    /// `VACUUM INTO` on an encrypted database: SQLCipher takes the copy's key from the target (a
    /// `file:...?key=` URI with an empty key writes the whole database in plaintext) and writes it
    /// with its default settings, not the database's (measured with SQLCipher 4.6.1). Neither can
    /// be checked before the statement runs. Nothing was run.
    case unsafeVacuumInto(sql: String)
    /// A transaction control statement (`BEGIN`, `COMMIT`, `END`, `ROLLBACK`, `SAVEPOINT`,
    /// `RELEASE`) ran inside the body of ``Database/transaction(_:)``, ``Database/savepoint(_:)``,
    /// ``Connection/savepoint(_:)``, a migration or a batch save, which own the transaction.
    /// Nothing was run; the transaction is as it was before the statement.
    case transactionControlInBody(sql: String)
    /// SQLite rolled back the transaction of a ``Database/transaction(_:)``,
    /// ``Database/savepoint(_:)`` or ``Database/read(_:)`` body after an earlier error in it (an
    /// interrupted or failed write, a full disk), and the body went on: `sql` was not run, so
    /// nothing of the body is committed.
    case transactionRolledBack(sql: String)
    /// A row has no column of that name.
    case columnNotFound(name: String, available: [String])
    /// A row has no column at that index.
    case columnIndexOutOfRange(index: Int, count: Int)
    /// A stored value cannot be converted to the requested Swift type.
    case typeMismatch(column: String, stored: String, expected: String)
    /// A ``Connection``, a ``Cursor`` or a ``PreparedStatement`` was used after the body that
    /// received, opened or prepared it returned.
    case connectionNotUsable
    /// A statement that writes ran inside a read-only body (``Database/read(_:)``). Nothing was
    /// run.
    case readOnlyViolation(sql: String)

    // MARK: Query builder, entities, migrations

    /// A named parameter received no value: a template's ``Param`` (its name, without prefix), or
    /// a parameter of SQL text given ``StatementArguments`` by name (its spelling in the text:
    /// `:name`, `@name`, `$name`, or `?3` for a positional one).
    case unboundParameter(name: String)
    /// A value was given for a name the template or the SQL text does not use.
    case unknownParameter(name: String)
    /// A builder was used in a way that cannot produce valid SQL.
    case invalidQuery(reason: String)
    /// A setting of ``DatabaseConfiguration`` is out of its range; nothing was opened or created.
    case invalidConfiguration(reason: String)
    /// A `Delete` without a `where` clause, which would remove every row.
    case deleteWithoutWhere(table: String)
    /// A stored row cannot be decoded into an entity.
    case decodingFailed(entity: String, column: String, stored: String, expected: String)
    /// An entity cannot be encoded into columns.
    case encodingFailed(entity: String, reason: String)
    /// A migration failed; nothing of it was applied.
    case migrationFailed(id: String, reason: String)
    /// The database records migrations that the given list does not contain.
    case unknownAppliedMigrations(ids: [String])
    /// `rollback(to:using:)` named a migration that is not applied or not in the list.
    case unknownMigration(id: String)
    /// A migration without a `down` step was asked to roll back.
    case migrationNotReversible(id: String)
    /// A change left rows that violate foreign keys.
    case foreignKeyViolation(table: String, rowid: Int64?, parent: String)

    // MARK: Schema introspection

    /// A schema introspection call (``Connection/columns(in:schema:)`` and the others) named a
    /// schema this connection does not have: `available` lists the ones it has (`main`, `temp`
    /// and the attached ones).
    case schemaNotFound(schema: String, available: [String])
    /// A schema introspection call named a table that `schema` does not hold (or a view, where
    /// only a table can answer: a view has no indexes, primary key or foreign keys).
    case tableNotFound(table: String, schema: String)

    // MARK: Keys spelled like something else

    /// A passphrase spelled like SQLCipher's raw-key literal (`x'` and 64, 96 or 160 hexadecimal
    /// digits, 67, 99 or 163 bytes in all), which SQLCipher would use as a raw key, without key
    /// derivation. Nothing was opened or changed. Pass the key's bytes with `rawKey:` instead.
    ///
    /// Opening: a passphrase spelled that way, whether given as `String` or `Data`.
    case passphraseLooksLikeRawKey

    // MARK: SQL functions and collations written in Swift

    /// A SQL function or aggregate added with ``Database/add(function:)`` threw `message` while
    /// `sql` ran (or one of its arguments did not convert to the type the function takes). SQLite
    /// stopped the statement and undid what it had changed.
    case functionFailed(name: String, message: String, sql: String)
    /// A function, aggregate or collation could not be added or removed: its name is empty, too long
    /// or holds NUL, SQLite already defines it, it starts with `sqlcipher`, its argument count is
    /// out of range, or SQLite refused it (`reason` says which). Nothing changed.
    case registrationFailed(name: String, reason: String)
    /// `sql` would make the database's schema (a trigger, a view, a `CHECK` or `DEFAULT`
    /// expression, an index on an expression, a generated column) call the function `name`, which
    /// was added without `allowedInSchema`. Nothing was run.
    case functionNotAllowedInSchema(name: String, sql: String)
}

extension SqlCipherError: CustomStringConvertible, LocalizedError {
    /// A sentence that says what went wrong and what to do about it.
    public var description: String {
        switch self {
        case let .libraryNotFound(searched, package):
            return "SQLCipher library not found (searched: \(searched.joined(separator: ", "))). "
                + "Install it (on Debian/Ubuntu: apt-get install \(package)), or point "
                + "\(SqlCipherLibrary.environmentVariable) or SqlCipherLibrary.load(from:) at a libsqlcipher file."
        case let .notSQLCipher(path, reason):
            return "\(path) is not a usable SQLCipher library: \(Self.clause(reason)). "
                + "Point \(SqlCipherLibrary.environmentVariable) at libsqlcipher (e.g. /usr/lib/x86_64-linux-gnu/libsqlcipher.so.1)."
        case let .bindingConflict(path, foreign, checked, symbol, boundTo):
            return "Binding conflict in \(path): \(foreign) of its \(checked) references to its own "
                + "functions (sqlite3_*, sqlcipher_* and others) resolve elsewhere (\(symbol) is bound to \(boundTo)). SQLCipher would run on another "
                + "SQLite's code, so nothing was opened. Make sure nothing in the process loads libsqlcipher before "
                + "SqlCipherKit does (do not link it, do not LD_PRELOAD it), then run sqlcipher-doctor."
        case let .missingSymbol(path, symbol):
            return "\(path) does not export \(symbol), which SqlCipherKit requires. Install a complete SQLCipher "
                + "build (SQLCipher 3.4 or later)."
        case let .unsupportedRuntime(reason):
            return "This process cannot load SQLCipher in isolation: \(Self.clause(reason)). "
                + SqlCipherError.unsupportedRuntimeAdvice(for: reason)
        case let .libraryAlreadyLoaded(loaded, requested):
            return "This process already uses \(loaded); \(requested) cannot be loaded next to it. Use one "
                + "SQLCipher library per process (run a separate process for the other)."
        case .emptyKey:
            return "An empty key would create a plaintext database. Pass a non-empty passphrase, or use "
                + "Database(unencryptedPath:) if plaintext is what you want."
        case let .invalidRawKey(count):
            return "A raw key must be exactly 32 bytes; this one has \(count). Pass 32 random bytes, or use a passphrase."
        case let .keyFailed(path, reason):
            return "The key does not open \(path): \(Self.clause(reason))."
        case let .notPlaintextDatabase(path):
            return "\(path) is not a plaintext SQLite database (it is encrypted, or not a database). "
                + "Open it with Database(path:key:) or Database(path:rawKey:)."
        case let .libraryTooOld(loaded, required, missing):
            return "The loaded library, \(loaded), lacks what this program requires (\(required)): "
                + "\(missing.joined(separator: ", ")). Install SQLCipher 4 (Debian 12: apt-get install -t "
                + "bookworm-backports libsqlcipher1; Debian 13 and Ubuntu 24.04: apt-get install libsqlcipher1) and point "
                + "\(SqlCipherLibrary.environmentVariable) at it, or remove it from the requirement."
        case let .notADatabase(path, reason):
            return "\(path) is not a database: \(Self.clause(reason)). Check the path; run `sqlcipher-doctor inspect \(path)`."
        case let .cannotOpen(path, reason):
            return "Cannot open or create \(path): \(Self.clause(reason))."
        case let .plaintextDetected(path, reason):
            return "Refusing to use \(path): it was meant to be encrypted but \(Self.clause(reason)). Nothing more was written. "
                + "Run sqlcipher-doctor to check the SQLCipher binding."
        case let .unsupported(feature, requires, loaded):
            return "\(feature) needs \(requires); the loaded library is SQLCipher \(loaded). Load a SQLCipher that "
                + "has it (SQLCipher 4: libsqlcipher1 on Debian and Ubuntu), or do without it on this library "
                + "(leave the setting out, or write the statement without it)."
        case .notEncrypted:
            return "This database was opened without encryption, so it has no key to change. Use "
                + "Database.encrypt(plaintextAt:to:key:) to make an encrypted copy."
        case let .rekeyFailed(path, reason) where reason.hasPrefix(Self.rekeyCommitted):
            return "Changing the key of \(path) was not proven: \(Self.clause(reason))."
        case let .rekeyFailed(path, reason):
            return "Changing the key of \(path) failed: \(Self.clause(reason)). This call did not change the file's key: "
                + "it still opens with the key it had before the call."
        case let .conversionFailed(source, target, reason):
            return "Converting \(source) to \(target) failed: \(Self.clause(reason)). The source was not changed."
        case .databaseClosed:
            return "The Database or DatabasePool was closed (close() was called), and takes no more calls. Open the "
                + "file again with a new Database or DatabasePool to continue."
        case let .streamPreempted(reason):
            return "This stream was paused between batches and gave up its statement: \(reason). A paused stream "
                + "never holds a connection against a call that needs it (a loop left without its iterator being "
                + "destroyed would otherwise hold it forever). Read the stream to its end first, collect the rows "
                + "with fetch or query, or read inside db.read { } with a Cursor for one uninterrupted snapshot."
        case let .poolRequiresWAL(path, journalMode) where path == ":memory:" || path.isEmpty:
            return "A DatabasePool needs a file (it was given \(path.isEmpty ? "an empty path" : path), in \(journalMode) "
                + "mode): each of its connections opens the file, and an in-memory or temporary database would be "
                + "a different, empty database on each. Use Database for an in-memory database."
        case let .poolRequiresWAL(path, journalMode):
            return "A DatabasePool needs a database in WAL mode, and \(path) is in \(journalMode) mode: in that mode a "
                + "write blocks every reader, so readers could not run beside the writer. Convert the file once, "
                + "with every other connection closed: open it with Database, run "
                + "`try await db.execute(\"PRAGMA journal_mode = WAL\")` and close it (the mode is stored in the "
                + "file), then open the pool; or use Database, which works in either mode. Nothing was changed."
        case let .sqlite(code, extended, message, sql):
            let statement = sql.map { " in \(Self.quoted($0))" } ?? ""
            return "SQLite error \(code) (extended \(extended)): \(Self.clause(Self.bounded(message)))\(statement)."
        case let .argumentCountMismatch(expected, given, sql):
            return "\(Self.quoted(sql)) has \(expected) parameter(s) but \(given) argument(s) were given. Pass one argument per `?`."
        case let .multipleStatements(sql):
            return "\(Self.quoted(sql)) holds several statements where one is expected: a query returns the rows of "
                + "one statement, and arguments bind to one statement. Run the statements one by one (text of several "
                + "statements runs only through execute without arguments)."
        case let .emptyStatement(sql):
            return "\(Self.quoted(sql)) holds no SQL statement."
        case let .nulCharacterInSQL(sql, offset):
            let shown = sql.replacingOccurrences(of: "\u{0}", with: "\\0")
            return "\(Self.quoted(shown)) contains a NUL character (U+0000) at byte \(offset). SQLite would read the SQL only up "
                + "to it and silently ignore the rest, so nothing was run. Pass values as ? arguments instead of "
                + "putting them into the SQL text, or remove the NUL."
        case let .unsafePragma(name, value, sql)
            where SQLiteConnection.isTempStorePragma(name):
            let effect = name.lowercased() == "temp_store_directory"
                ? "choose a folder for SQLite's temporary files, which SQLCipher does not encrypt"
                : "send temporary tables, indices and sort runs to temporary files, which SQLCipher does not encrypt"
            return "\(Self.quoted(sql)) sets PRAGMA \(name) = \(value), which would \(effect). SqlCipherKit keeps temporary data "
                + "in memory (temp_store = MEMORY), so the statement was not run. Remove it; reading PRAGMA \(name) "
                + "is allowed, and PRAGMA temp_store = MEMORY is accepted."
        case let .unsafePragma(name, value, sql) where ["hard_heap_limit", "soft_heap_limit"].contains(name.lowercased()):
            return "\(Self.quoted(sql)) sets PRAGMA \(name) = \(value), which limits the memory of every SQLite connection "
                + "of the process, not only this database's: every other database, pool and opening of the process would "
                + "fail with \"out of memory\" once the limit is reached. The statement was not run. Bound a database's "
                + "memory with DatabaseConfiguration's page cache (pageCacheKiB); reading PRAGMA \(name) is allowed."
        case let .unsafePragma(name, value, sql) where name.lowercased() == "writable_schema":
            return "\(Self.quoted(sql)) sets PRAGMA writable_schema = \(value), which lets statements edit sqlite_master directly: "
                + "one malformed entry and no key opens the file again, losing every row. The statement was not run. "
                + "Change the schema with CREATE, ALTER and DROP (or migrations); reading the pragma and turning it off "
                + "are allowed."
        case let .unsafePragma(name, value, sql) where name.lowercased() == "journal_mode":
            return "\(Self.quoted(sql)) sets PRAGMA journal_mode = \(value) on a DatabasePool, whose readers run beside its "
                + "writer only in WAL mode; the statement was not run. To change the file's journal mode, close the pool, "
                + "open the file with Database(path:key:journalMode:) and run the statement there (the mode is stored in "
                + "the file), then use that Database; reading PRAGMA journal_mode, or setting it to WAL, is allowed."
        case let .unsafePragma(name, value, sql) where name.lowercased() == "locking_mode":
            return "\(Self.quoted(sql)) sets PRAGMA locking_mode = \(value) on a DatabasePool: the connection would keep "
                + "its lock on the file from its first write on, and every read of the pool's readers would fail with "
                + "\"database is locked\"; the statement was not run. A pool shares its file between its connections; "
                + "for one connection that keeps the file to itself, open a Database, and run the statement there."
        case let .unsafePragma(name, value, sql):
            return CipherPragmaRule.refusalDescription(name: name, value: value, sql: sql)
        case let .perConnectionPragma(name, sql):
            return "\(Self.quoted(sql)) sets PRAGMA \(name) on one connection of a DatabasePool, which runs each call on whichever "
                + "of its connections routing picks (the writer or a reader), so the setting would apply to that one "
                + "only; it was not run. Set it for every connection when the pool opens: DatabasePool(path:..., "
                + "configuration:) with DatabaseConfiguration's synchronous, pageCacheKiB or busyTimeout, or the "
                + "statement in its prepareConnection closure. Reading PRAGMA \(name) is allowed."
        case let .unsafeFunction(name, sql):
            return "\(Self.quoted(sql)) calls \(name)(), which copies every row of a database into another one, encrypted or "
                + "in the clear, without the checks of the package's conversions, so the statement was not run. Use "
                + "Database.export(to:key:cipher:) for an encrypted copy, exportDecrypted(to:) for a plaintext one, "
                + "Database.encrypt(plaintextAt:to:key:) to encrypt a plaintext file, and "
                + "Database.upgradeFromSqlCipher3(path:key:) to move a SQLCipher 3 file to SQLCipher 4."
        case let .unsafeAttach(schema, path, encrypted, sql):
            let path = SQLRedaction.fileName(path)
            if encrypted {
                return "\(Self.quoted(sql)) attached the encrypted database \(path) as \(schema) to a plaintext Database, "
                    + "where its rows could be copied in the clear; it was detached again. Open the encrypted file with "
                    + "Database(path:key:) (or rawKey:), and copy it with exportDecrypted(to:) if a plaintext copy is "
                    + "really needed; to encrypt this plaintext database use Database.encrypt(plaintextAt:to:key:)."
            }
            return "\(Self.quoted(sql)) attached \(path) as \(schema) without encryption (an empty KEY), so anything copied into "
                + "it would be written in the clear; it was detached again and nothing was written to it. To read "
                + "rows from a plaintext database into this one, use db.importPlaintext(from:) { conn in ... }, which "
                + "attaches it for reading only. Leave the KEY clause out to attach an encrypted database with this "
                + "database's key, or give a non-empty key; for a plaintext copy use exportDecrypted(to:)."
        case let .plaintextAttachmentWrite(schema, sql):
            return "\(Self.quoted(sql)) would change \(schema), the plaintext database attached for reading by "
                + "importPlaintext(from:), so it was not run: nothing of the encrypted database may be written in the "
                + "clear. Read from \(schema) and write into main (INSERT INTO main.t SELECT ... FROM \(schema).t)."
        case let .unsafeVacuumInto(sql):
            return "\(Self.quoted(sql)) would write a copy of this encrypted database whose key comes from the target (a "
                + "`file:...?key=` URI writes it in plaintext) and whose settings are SQLCipher's defaults, neither of "
                + "which can be checked before it runs; the statement was not run. Use Database.export(to:key:cipher:), "
                + "which writes the copy with the key and settings you give and verifies it."
        case let .transactionRolledBack(sql):
            return "SQLite rolled back this body's transaction after an earlier error in it (an interrupted or "
                + "failed write, or a full disk), so \(Self.quoted(sql)) was not run and nothing of the body is committed. "
                + "Let that first error propagate out of the body, then run the transaction again."
        case let .transactionControlInBody(sql):
            return "\(Self.quoted(sql)) would end or change the transaction that transaction { } or savepoint { } manages (the "
                + "change could be committed while the call reports a failure), so it was not run. Return from the "
                + "body to commit, throw to roll back, and nest savepoint { } to undo part of the work. BEGIN, COMMIT "
                + "and ROLLBACK written by hand work outside these bodies."
        case let .columnNotFound(name, available):
            return "No column named \"\(name)\" in this row (columns: \(available.joined(separator: ", ")))."
        case let .columnIndexOutOfRange(index, count):
            return "Column index \(index) is out of range; the row has \(count) column(s)."
        case let .typeMismatch(column, stored, expected):
            return "Column \"\(column)\" holds \(stored), which cannot be read as \(expected)."
        case .connectionNotUsable:
            return "This Connection, cursor or prepared statement belongs to a transaction, savepoint or read body that "
                + "has ended; use it only inside the body. To read rows from outside a body, use db.stream(...)."
        case let .readOnlyViolation(sql):
            return "\(Self.quoted(sql)) writes, but it ran inside a read-only body (db.read { ... }), so it was not run. "
                + "Use db.transaction { ... } or db.savepoint { ... } (on a Database or a DatabasePool) for statements "
                + "that change the database."
        case let .unboundParameter(name):
            if name.first == "?" {
                // A numbered or anonymous parameter left over by named values: no key reaches it.
                return "The SQL parameter \(name) has no value: a ? parameter takes a value by position, and named "
                    + "values were given (positional and named values are not mixed). Give it a name (:x) or pass "
                    + "every value by position."
            }
            if let first = name.first, ":@$".contains(first) {
                // A bare key matches :key first, so @key and $key are named with their prefix: a
                // statement using both :a and @a needs [":a": …, "@a": …].
                let key = first == ":" ? String(name.dropFirst()) : name
                return "The SQL parameter \(name) has no value. Pass one value for every parameter, e.g. "
                    + "arguments: [\"\(key)\": value] (positional and named values are not mixed)."
            }
            return "The query parameter :\(name) has no value. Pass \(name).set(value) when running the query."
        case let .unknownParameter(name):
            if name.first == "?" {
                // SQLite names a numbered parameter "?3", but no key reaches one: a ? parameter takes
                // its value by position. "does not use" would be false when the statement has ?3.
                return "A value was given for the key \(SQLRenderer.visible(name)), but a ? parameter (?, ?NNN) takes "
                    + "its value by position, never by key. Pass every value by position, or name the parameter in "
                    + "the SQL (:x) and give the value for that name."
            }
            // A name that would print invisibly (empty, or with a NUL or another control character)
            // is shown quoted and escaped, as every other name in a message is.
            let spelling = name.isEmpty || name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
                ? SQLRenderer.visible(name) : Self.parameterSpelling(name)
            return "A value was given for \(spelling), which the statement does not use. "
                + "Remove it or fix the name."
        case let .invalidQuery(reason):
            return "Invalid query: \(Self.clause(reason))."
        case let .invalidConfiguration(reason):
            return "Invalid DatabaseConfiguration: \(Self.clause(reason)). Nothing was opened."
        case let .schemaNotFound(schema, available):
            return "This connection has no database named \(SQLRenderer.visible(schema)) (it has: "
                + "\(available.map(SQLRenderer.visible).joined(separator: ", "))). "
                + "Pass one of those names, or attach the database first (ATTACH 'file' AS name KEY ...; on a DatabasePool "
                + "in DatabaseConfiguration.prepareConnection, so that every connection has it)."
        case let .tableNotFound(table, schema):
            return "Schema \(SQLRenderer.visible(schema)) has no table named \(SQLRenderer.visible(table)). Check the name and the schema "
                + "(tableExists(_:in:) tells without throwing); a view has columns but no indexes, primary key or "
                + "foreign keys."
        case let .deleteWithoutWhere(table):
            return "Delete from \(SQLRenderer.visible(table)) has no where clause and would remove every row. Add .where(...) "
                + "or use Delete(table, allRows: true)."
        case let .decodingFailed(entity, column, stored, expected) where stored == SqlCipherError.noSuchColumn:
            return "Cannot decode \(entity): the row has no column \"\(column)\" (expected \(expected)). Select that "
                + "column, or make the property optional so that a missing column decodes as nil."
        case let .decodingFailed(entity, column, stored, expected):
            return "Cannot decode \(entity): column \"\(column)\" holds \(stored), expected \(expected)."
        case let .encodingFailed(entity, reason):
            return "Cannot encode \(entity): \(Self.clause(reason))."
        case let .migrationFailed(id, reason):
            return "Migration \"\(id)\" failed and was rolled back: \(Self.clause(reason))."
        case let .unknownAppliedMigrations(ids):
            return "The database records migrations that are not in the list given: \(ids.joined(separator: ", ")). "
                + "It was migrated by a newer or different version of the program; pass the full list."
        case let .unknownMigration(id):
            return "No applied migration has the id \"\(id)\"."
        case let .migrationNotReversible(id):
            return "Migration \"\(id)\" has no down step, so it cannot be rolled back."
        case let .foreignKeyViolation(table, rowid, parent):
            let row = rowid.map { " (rowid \($0))" } ?? ""
            return "A row of \"\(table)\"\(row) refers to a missing row of \"\(parent)\"; the change was rolled back."
        case .passphraseLooksLikeRawKey:
            return "This passphrase is spelled like SQLCipher's raw-key literal (x' followed by 64, 96 or 160 hexadecimal "
                + "digits and one more character), which SQLCipher would take as the key itself, without key "
                + "derivation, so it was refused and nothing was opened or changed. To use a raw key, pass its "
                + "32 bytes with rawKey: (Database(path:rawKey:), DatabaseKey.rawKey(key), "
                + "or rekey(rawKey:)), with its 16-byte salt as DatabaseKey.rawKey(key, salt: salt) (the 96-digit form); "
                + "otherwise choose another passphrase."
        case let .functionFailed(name, message, sql):
            return "The SQL function \(name)() failed while \(Self.quoted(sql)) ran: \(Self.clause(message)). SQLite stopped the statement "
                + "and undid its changes. Check the values the statement passes to \(name)(), or make the function "
                + "handle them."
        case let .registrationFailed(name, reason):
            return "The SQL function or collation \"\(name)\" was not added or removed: \(Self.clause(reason)). Nothing changed."
        case let .functionNotAllowedInSchema(name, sql):
            return "\(Self.quoted(sql)) would make the database's schema (a trigger, view, CHECK or DEFAULT expression, or an "
                + "index on an expression) call \(name)(), which may only be called from SQL you run yourself, so it "
                + "was not run. If \(name)() has no side effects and reveals nothing beyond its result, add it again "
                + "with DatabaseFunction(..., allowedInSchema: true); otherwise do not use it in the schema (the "
                + "schema of a file made by someone else may call it with arguments of their choosing)."
        }
    }

    /// The `stored` of ``decodingFailed(entity:column:stored:expected:)`` when the row has no
    /// column of that name: the description then says so instead of "holds no such column".
    static let noSuchColumn = "no such column"

    /// A parameter's name as the user would write it in SQL: as given when it carries a prefix,
    /// else with the `:` a template's ``Param`` and a bare dictionary key stand for.
    static func parameterSpelling(_ name: String) -> String {
        if let first = name.first, ":@$?".contains(first) { return name }
        return ":" + name
    }

    /// `text` without its closing period, for a message that goes on after it: reasons come from
    /// SQLite, from callers' own errors (a migration's) and from other descriptions, which may
    /// already end a sentence, and a message must not end in "..".
    /// SQL text in backquotes, as every description shows it: cut after
    /// ``descriptionSQLLimit`` characters, so that an error about a statement of thousands of
    /// parameters or a long script stays a readable line (the error's `sql` keeps it whole).
    /// Redacted again (``SQLRedaction``): the package makes its errors from redacted text, but an
    /// error made by hand (`SqlCipherError.sqlite(…, sql: "ATTACH … KEY '…'")`, in a test or a
    /// wrapper) printed its key (found by the attack review).
    static func quoted(_ sql: String) -> String {
        let sql = SQLRedaction.text(of: sql)
        guard sql.count > descriptionSQLLimit else { return "`\(sql)`" }
        let shown = sql.prefix(descriptionSQLLimit)
        return "`\(shown)…` (\(sql.count - descriptionSQLLimit) more characters)"
    }

    /// The most characters of SQL a description shows.
    static let descriptionSQLLimit = 1_000

    /// SQLite's message as a description shows it: whole up to ``descriptionMessageLimit``
    /// characters, else its start and its end around a note of what was left out. SQLite's
    /// messages quote the caller's names and paths whole ("no such table: …", "bad JSON path: …"),
    /// so a megabyte identifier made a megabyte description; the end is kept because the advice
    /// this package appends to a message is there (the error's `message` keeps it whole).
    static func bounded(_ message: String) -> String {
        guard message.count > descriptionMessageLimit else { return message }
        let half = descriptionMessageLimit / 2
        return "\(message.prefix(half))… (\(message.count - 2 * half) more characters) …\(message.suffix(half))"
    }

    /// The most characters of SQLite's message a description shows.
    static let descriptionMessageLimit = 2_000

    /// How the reason of a ``rekeyFailed(path:reason:)`` opens when the rewrite was committed and
    /// only its proof failed: the file then has the new key, and the description says so.
    static let rekeyCommitted = "the rewrite was committed, so the file now has the new key"

    static func clause(_ text: String) -> String {
        var trimmed = Substring(text)
        while let last = trimmed.last, last.isWhitespace { trimmed.removeLast() }
        if trimmed.hasSuffix("."), !trimmed.hasSuffix("..") { trimmed.removeLast() }
        return String(trimmed)
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }

    /// Always nil: ``description`` already says what went wrong, and error presenters that show
    /// the failure reason under the description would only repeat it.
    public var failureReason: String? { nil }

    /// Always nil: ``description`` already ends with what to do, and error presenters that show
    /// the suggestion under the description would only repeat it.
    public var recoverySuggestion: String? { nil }

    /// Always nil: SqlCipherKit ships no help book to point into.
    public var helpAnchor: String? { nil }
}

extension SqlCipherError {
    /// What to do about ``unsupportedRuntime(reason:)``, chosen by its cause, which the bridge
    /// names in the reason.
    ///
    /// - A sanitizer runtime (ASan, TSan, MSan, HWASan; the bridge finds its `__asan_init`, ...
    ///   with `dlsym(RTLD_DEFAULT)`): the C library is not the problem, the sanitizer's
    ///   interceptors are, so the advice is to run without it, never to move to glibc.
    /// - A C library without `RTLD_DEEPBIND` (musl) whose audit cannot run: move to a platform that
    ///   can isolate the library.
    /// - Otherwise the audit could not read the library file: use a supported build.
    static func unsupportedRuntimeAdvice(for reason: String) -> String {
        if reason.contains("sanitizer runtime") || reason.contains("Sanitizer") {
            return "The sanitizer is the cause: its interceptors are incompatible with RTLD_DEEPBIND, and "
                + "loading without it would give up the isolation, so SqlCipherKit refuses instead. Run the "
                + "program without the sanitizer (a build without -fsanitize or swift build --sanitize, and no "
                + "sanitizer runtime in LD_PRELOAD), or run the database work in a separate process built "
                + "without it."
        }
        if reason.contains("fully static executable") {
            return "Build the program with `swift build -c release --static-swift-stdlib` instead of "
                + "-static-executable (or without -static): the Swift runtime and Foundation are still linked in, "
                + "and the program uses the system's C library, the one libsqlcipher and libcrypto run on "
                + "(docs/linking.md). Nothing was created or opened."
        }
        if reason.contains("lazy binding") {
            return "Set LD_BIND_NOW=1 in the program's environment, which binds every reference when the "
                + "program starts, where the audit can check it; or let SqlCipherKit load the library itself "
                + "(do not link it, do not LD_PRELOAD it); or use a libsqlcipher linked with -Wl,-z,now, as "
                + "Debian's are. Then run sqlcipher-doctor. Nothing was opened."
        }
        if reason.contains("musl") || reason.contains("no RTLD_DEEPBIND") {
            return "Run on a platform with RTLD_DEEPBIND (glibc) or two-level namespaces (Apple), where "
                + "the library is isolated at load."
        }
        return "Use a libsqlcipher built for this platform (on Debian/Ubuntu: libsqlcipher1 or "
            + "libsqlcipher0), then run sqlcipher-doctor to check the binding."
    }
}
