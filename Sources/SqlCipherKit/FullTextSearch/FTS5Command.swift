/// A maintenance command of an FTS5 table (https://sqlite.org/fts5.html#special_insert_commands),
/// run with `execute(_:)` on a ``Database``, a ``DatabasePool``, a ``Connection`` or a
/// ``MigrationContext``.
///
/// ```swift
/// try await db.execute(FTS5Command.rebuild(TableName("notes_fts")))    // reindex from the content table
/// try await db.execute(FTS5Command.optimize(TableName("notes_fts")))   // merge the index into one b-tree
/// ```
///
/// The command renders `INSERT INTO "t"("t") VALUES (:l1)` with the command's name bound.
/// On a library without FTS5 running it throws ``SqlCipherError/unsupported(feature:requires:loaded:)``
/// before any SQL runs.
public struct FTS5Command: Sendable, Hashable {
    enum Kind: String, Sendable, Hashable {
        case rebuild
        case optimize
        case integrityCheck = "integrity-check"
    }

    let table: TableName
    let kind: Kind

    /// `rebuild`: discards the index and builds it again from the content (the table's own, or the
    /// external content table's). Not for contentless tables.
    public static func rebuild(_ table: TableName) -> FTS5Command { FTS5Command(table: table, kind: .rebuild) }

    /// `optimize`: merges the index's segments into one, for faster queries after many writes.
    public static func optimize(_ table: TableName) -> FTS5Command { FTS5Command(table: table, kind: .optimize) }

    /// `integrity-check`: throws ``SqlCipherError/sqlite(code:extendedCode:message:sql:)`` with
    /// `SQLITE_CORRUPT_VTAB` when the index does not match its content (an external content table
    /// changed without the triggers, for example).
    public static func integrityCheck(_ table: TableName) -> FTS5Command {
        FTS5Command(table: table, kind: .integrityCheck)
    }
}

extension FTS5Command: DataChangeStatement {
    /// `INSERT INTO "t"("t") VALUES (:l1)`, the command's name bound to `:l1`.
    /// - Throws: ``SqlCipherError/unsupported(feature:requires:loaded:)`` on a library without FTS5.
    public func render() throws -> SQLFragment {
        try SqlCipherLibrary.require(.fts5, for: "FTS5Command.\(kind)(\(table.name))")
        var renderer = SQLRenderer()
        renderer.append("INSERT INTO ")
        try renderer.identifier(table.name)
        renderer.append("(")
        try renderer.identifier(table.name)
        renderer.append(") VALUES (")
        renderer.literal(.text(kind.rawValue))
        renderer.append(")")
        return renderer.fragment
    }
}
