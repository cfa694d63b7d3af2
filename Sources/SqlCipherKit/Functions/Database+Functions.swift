extension DatabaseAccess {
    /// Adds a SQL function or aggregate written in Swift (or replaces the one with the same name and
    /// argument count), for every statement run from now on.
    ///
    /// ```swift
    /// try await db.add(function: DatabaseFunction("half", deterministic: true) { (x: Double) in x / 2 })
    /// let rows = try await db.query("SELECT name FROM products WHERE half(price) < ?", 10)
    /// ```
    ///
    /// The function lives as long as the database is open; add it again after opening the file
    /// again. See ``DatabaseFunction`` for what a function may do and how its errors surface.
    /// - Throws: ``SqlCipherError/registrationFailed(name:reason:)`` for a name SQLite already
    ///   defines, a `sqlcipher` name, an invalid name or argument count, or a function that a
    ///   running statement uses (an open stream) and that therefore cannot be replaced yet.
    public func add(function: DatabaseFunction) async throws {
        try await _withConnection(.write) { try $0.core.add(function: function) }
    }

    /// Removes the function with `function`'s name and argument count; nothing happens when there
    /// is none. Statements that call it fail afterwards with SQLite's "no such function", and so do
    /// the triggers, views and indexes that use it.
    /// - Throws: ``SqlCipherError/registrationFailed(name:reason:)`` when a running statement uses it.
    public func remove(function: DatabaseFunction) async throws {
        try await _withConnection(.write) { try $0.core.remove(function: function) }
    }

    /// Adds a collation written in Swift (or replaces the one with the same name), for `ORDER BY`,
    /// comparisons and indexes with `COLLATE name`.
    ///
    /// ```swift
    /// try await db.add(collation: DatabaseCollation("localized") { $0.localizedStandardCompare($1) })
    /// let rows = try await db.query("SELECT name FROM people ORDER BY name COLLATE localized")
    /// ```
    ///
    /// An index that uses the collation needs it (and needs it unchanged) whenever its table is
    /// written or searched: add it right after opening. See ``DatabaseCollation``.
    /// - Throws: ``SqlCipherError/registrationFailed(name:reason:)`` for a name SQLite already defines
    ///   (`BINARY`, `NOCASE`, `RTRIM`) or an invalid name.
    public func add(collation: DatabaseCollation) async throws {
        try await _withConnection(.write) { try $0.core.add(collation: collation) }
    }

    /// Removes the collation named as `collation`; nothing happens when there is none.
    public func remove(collation: DatabaseCollation) async throws {
        try await _withConnection(.write) { try $0.core.remove(collation: collation) }
    }
}
