/// `DROP INDEX` (https://sqlite.org/lang_dropindex.html).
///
/// ```swift
/// try ctx.execute(DropIndex("products_by_name"))   // DROP INDEX "products_by_name"
/// ```
public struct DropIndex: Sendable, Hashable {
    let name: String
    let ifExists: Bool

    /// Drops the index called `name`; with `ifExists`, nothing happens when it does not exist.
    public init(_ name: String, ifExists: Bool = false) {
        self.name = name
        self.ifExists = ifExists
    }

    /// The SQL this builder runs.
    public func sql() throws -> String {
        "DROP INDEX " + (ifExists ? "IF EXISTS " : "") + (try SQLRenderer.quoteIdentifier(name))
    }
}
