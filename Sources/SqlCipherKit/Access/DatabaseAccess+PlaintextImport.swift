import Foundation

extension DatabaseAccess {
    /// Attaches the plaintext SQLite database at `path` as `schema`, for reading only, runs `body`
    /// in a transaction, and detaches it again: the way to bring plaintext rows into an encrypted
    /// database.
    ///
    /// ```swift
    /// try await db.importPlaintext(from: "/tmp/legacy.sqlite") { conn in
    ///     try conn.execute("INSERT INTO main.notes(title, body) SELECT title, body FROM plain.notes")
    /// }
    /// ```
    ///
    /// While the file is attached, every statement that would change it (an insert, update,
    /// delete, create, drop, alter or pragma on `schema`) is refused before it runs with
    /// ``SqlCipherError/plaintextAttachmentWrite(schema:sql:)``, so nothing of the encrypted
    /// database can reach the plaintext file. That is why a hand-written `ATTACH … KEY ''` is
    /// refused (``SqlCipherError/unsafeAttach(schema:path:encrypted:sql:)``): it would let rows be
    /// copied out in the clear. The body's writes to `main` commit together; a throw rolls them back.
    ///
    /// SQLite cannot attach a file inside a transaction, so this is called on the database, not
    /// inside ``transaction(_:)``; for the same reason a `DETACH` of `schema` in the body fails (the
    /// call detaches it when the body returns). The body is `@Sendable` for the reason given at
    /// ``transaction(_:)``.
    /// - Parameters:
    ///   - path: A plaintext SQLite database file. It is not created when missing.
    ///   - schema: The name the body's SQL uses for it; `"plain"` by default.
    ///   - body: Runs in a transaction with the file attached; returns the call's result.
    /// - Throws: ``SqlCipherError/notPlaintextDatabase(path:)`` for an encrypted file or one that is
    ///   not a database; ``SqlCipherError/cannotOpen(path:reason:)`` for a missing file;
    ///   ``SqlCipherError/invalidQuery(reason:)`` for `main`, `temp` or an empty name, or inside a
    ///   transaction; ``SqlCipherError/plaintextAttachmentWrite(schema:sql:)``; what the body throws.
    @discardableResult
    public func importPlaintext<T: Sendable>(from path: String, as schema: String = "plain",
                                             _ body: @Sendable (borrowing Connection) throws -> T) async throws -> T {
        try await _withConnection(.write) { conn in
            try conn.core.withPlaintextAttached(path, as: schema) {
                try conn.core.inTransaction { try conn.core.lend(body) }
            }
        }
    }
}

extension SQLiteConnection {
    /// Attaches the plaintext database at `path` as `schema` with writes to it refused by the
    /// authorizer (``StatementGate/readOnlySchema``), runs `body`, and detaches it. Should the detach
    /// fail, the refusal stays in force for as long as the connection lives.
    func withPlaintextAttached<T>(_ path: String, as schema: String, _ body: () throws -> T) throws -> T {
        let lower = schema.lowercased()
        guard !schema.isEmpty, lower != "main", lower != "temp" else {
            throw SqlCipherError.invalidQuery(reason: "importPlaintext(from:as:) needs a schema name other than main or temp")
        }
        guard !isInTransaction else {
            throw SqlCipherError.invalidQuery(
                reason: "importPlaintext(from:) attaches a file, which SQLite cannot do inside a transaction; call it "
                    + "on the database, outside transaction { }")
        }
        let gate = statementGate
        guard gate.readOnlySchema == nil else {
            throw SqlCipherError.invalidQuery(reason: "a plaintext database is already attached as \(gate.readOnlySchema ?? "")")
        }
        try DatabasePath.refuseUnusable(path)
        guard let header = FileHeader(path: path), header.fileSize > 0 else { throw Exporter.noSource(path) }
        guard header.looksPlaintextSQLite else {
            throw SqlCipherError.notPlaintextDatabase(path: path)
        }
        // The checks of every opening: a -journal, -wal or -shm that is a symbolic link, a pipe, a
        // socket, a device or a directory. The ATTACH read through a linked -wal (another file's
        // pages, or whatever it points to) and then removed the link, removed a pipe -wal, and
        // failed on the others with a bare "disk I/O error" that blamed the file itself. Beside
        // the path as given and beside the file a link leads to: SQLite names the companions
        // after one or the other, by release.
        try DatabaseOpener.refuseSpecialFiles(of: path)
        let resolved = try DatabasePath.resolve(path)
        if resolved != path { try DatabaseOpener.refuseSpecialFiles(of: resolved) }
        let quoted = try SQLRenderer.quoteIdentifier(schema)
        do {
            try asPackage { _ = try execute("ATTACH DATABASE ? AS \(quoted) KEY ''", [.text(SQLiteConnection.fileName(path))]) }
        } catch {
            // A schema the loaded SQLite cannot parse (a STRICT table or other SQL a newer SQLite
            // wrote, read by SQLCipher 3.4.1's SQLite 3.15) failed the ATTACH with a bare, masked
            // "malformed database schema": said as an opening of the file says it.
            if case let SqlCipherError.sqlite(code, _, message, _) = error,
               let unreadable = DatabaseOpener.unreadableSchema(path: path, encrypted: false, code: code, message: message) {
                throw unreadable
            }
            throw error
        }
        gate.readOnlySchema = schema
        defer {
            let detached = asPackage { (try? execute("DETACH DATABASE \(quoted)")) != nil }
            if detached { gate.readOnlySchema = nil }
        }
        let deep = tablesWithDeepTokenizerChains(schema: schema)
        if !deep.isEmpty {
            throw SqlCipherError.cannotOpen(path: path, reason: Self.deepTokenizerChainsReason(deep))
        }
        return try body()
    }
}
