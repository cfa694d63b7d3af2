// SQLite's JSON as builder pieces: `json_extract`, the `->` and `->>` operators, and the table-valued
// `json_each` (https://sqlite.org/json1.html). Every path is a bound value, never part of the text.
// Each piece checks, when it renders, that the loaded library has the capability it needs
// (``LibraryCapabilities/Feature/json``, ``LibraryCapabilities/Feature/jsonOperators``), as the
// full-text statements check FTS5: SQLCipher 3.4.1's SQLite 3.15.2 has neither.

extension SQLExpressible {
    /// `json_extract(self, :path)`: the value at `path` in the JSON text `self`, as an SQL value
    /// for a number, a string, `true`/`false` (1/0) or `null` (NULL), and as JSON text for an object
    /// or an array; NULL when nothing is at `path` (https://sqlite.org/json1.html#jex).
    ///
    /// `path` is bound. It starts with `$` (`"$.author.name"`, `"$.tags[0]"`, `"$.tags[#-1]"` for
    /// the last element); another path makes the statement fail with SQLite's "bad JSON path", and
    /// invalid JSON in `self` with "malformed JSON", both as ``SqlCipherError/sqlite(code:extendedCode:message:sql:)``.
    /// A path holding a NUL character, which SQLite would read only up to the NUL, is refused with
    /// ``SqlCipherError/invalidQuery(reason:)`` when the statement renders. Keep documents in TEXT:
    /// SQLite 3.45 and later read a BLOB as binary JSONB whenever its bytes are valid JSONB, which
    /// some JSON text is, and then find nothing rather than fail.
    ///
    /// ```swift
    /// let notes = TableName("notes")
    /// let rows = try await db.query(
    ///     Select(col("id"), col("meta").jsonExtract(atPath: "$.author").as("author"))
    ///         .from(notes)
    ///         .where(col("meta").jsonExtract(atPath: "$.stars") >= 4))
    /// // SELECT "id", json_extract("meta", :l1) AS "author" FROM "notes" WHERE json_extract("meta", :l2) >= :l3
    /// ```
    ///
    /// - Note: rendering throws ``SqlCipherError/unsupported(feature:requires:loaded:)`` naming the
    ///   `json` capability when the loaded library has no JSON functions (SQLCipher 3.4.1).
    public func jsonExtract(atPath path: String) -> SQLExpression {
        let operand = sqlExpression, path = SQLExpression.jsonPath(path)
        return SQLExpression(.function(.jsonExtract, [operand.node, path.node]), over: operand, path)
    }

    /// `self -> :path`: the JSON text of the sub-component at `path`, so a string comes back quoted
    /// (`"\"Ada\""`), an object or array as its JSON text; NULL when nothing is at `path`
    /// (https://sqlite.org/json1.html#jptr).
    ///
    /// `path` is bound. A path that starts with `$` is a JSON path (`"$.a.b[2]"`); any other text
    /// is one object label (`"a"` is `"$.a"`, `"a.b"` the member labelled `a.b`), except text in
    /// brackets (`"[2]"`), which is an array index. The empty text is no path (SQLite's "bad JSON
    /// path"), a label holding `"` reaches no member (walk those with ``JSONEach``), and a path
    /// holding a NUL character is refused with ``SqlCipherError/invalidQuery(reason:)``.
    /// Chain it to go deeper: `col("doc").jsonRepresentation(atPath: "a").jsonValue(atPath: "b")`.
    ///
    /// ```swift
    /// let authors = Select(col("meta").jsonRepresentation(atPath: "$.author").as("author")).from(TableName("notes"))
    /// // SELECT "meta" -> :l1 AS "author" FROM "notes"    -- {"name":"Ada"}
    /// ```
    ///
    /// - Note: rendering throws ``SqlCipherError/unsupported(feature:requires:loaded:)`` naming the
    ///   `jsonOperators` capability when the loaded SQLite is older than 3.38 (SQLCipher 3.4.1).
    public func jsonRepresentation(atPath path: String) -> SQLExpression {
        .compare(.jsonRepresentation, sqlExpression, .jsonPath(path))
    }

    /// `self ->> :path`: the SQL value of the sub-component at `path` (TEXT, INTEGER, REAL or
    /// NULL; an object or array as its JSON text); NULL when nothing is at `path`
    /// (https://sqlite.org/json1.html#jptr).
    ///
    /// `path` is bound, and read as ``jsonRepresentation(atPath:)`` reads it: a JSON path when it
    /// starts with `$`, one object label otherwise.
    ///
    /// ```swift
    /// let starred = Select(col("id")).from(TableName("notes"))
    ///     .where(col("meta").jsonValue(atPath: "$.author.name") == "Ada")
    ///     .orderBy(col("meta").jsonValue(atPath: "stars").descending)
    /// // SELECT "id" FROM "notes" WHERE "meta" ->> :l1 = :l2 ORDER BY "meta" ->> :l3 DESC
    /// ```
    ///
    /// - Note: rendering throws ``SqlCipherError/unsupported(feature:requires:loaded:)`` naming the
    ///   `jsonOperators` capability when the loaded SQLite is older than 3.38 (SQLCipher 3.4.1).
    public func jsonValue(atPath path: String) -> SQLExpression {
        .compare(.jsonValue, sqlExpression, .jsonPath(path))
    }
}

extension SQLExpression {
    /// A JSON path as a bound value, or an expression that refuses to render when the path holds
    /// a NUL character: SQLite's JSON functions read a path as C text, only up to its first NUL,
    /// so `"$.a\0b"` would quietly read `$.a`. Refused, as an identifier with a NUL is.
    static func jsonPath(_ path: String) -> SQLExpression {
        guard let reason = jsonPathRefusal(path) else { return .literal(path) }
        return SQLExpression(.invalid(reason: reason, identity: 0))
    }

    /// Why `path` cannot be bound as a JSON path, or nil when it can; also ``JSONEach``'s check.
    static func jsonPathRefusal(_ path: String) -> String? {
        guard path.utf8.contains(0) else { return nil }
        let shown = path.prefix(120).split(separator: "\0", omittingEmptySubsequences: false).joined(separator: "\\0")
        return "the JSON path \"\(shown)\" holds a NUL character, and SQLite reads a JSON path only up to its "
            + "first NUL (so it would read another member): remove the NUL from the path"
    }
}

/// `json_each(json[, path])`: SQLite's table-valued function with one row per element of a JSON
/// array, or per member of a JSON object, for ``Select/from(_:)-(JSONEach)`` and
/// ``Select/join(_:on:)-(JSONEach,_)`` (https://sqlite.org/json1.html#jeach).
///
/// `json` is any expression: a bound value, or a column of a table earlier in the `FROM` clause,
/// which makes one row per element of each row's document. `path` (bound) starts the walk at that
/// sub-component; a path holding a NUL character, which SQLite would read only up to the NUL, is
/// refused with ``SqlCipherError/invalidQuery(reason:)`` when the statement renders. The columns are ``key``, ``value``, ``type``, ``atom``, ``id``, ``parent``,
/// ``fullkey`` and ``path``, qualified by the alias (`json_each` without one: give each of two
/// `json_each` sources in one statement an alias).
///
/// ```swift
/// let notes = TableName("notes")
/// let tags = JSONEach(notes.col("meta"), atPath: "$.tags")
/// let tagged = Select(notes.col("id"), tags.value.as("tag"))
///     .from(notes)
///     .join(tags, on: tags.value.like("s%"))
/// // SELECT "notes"."id", "json_each"."value" AS "tag" FROM "notes"
/// //   INNER JOIN json_each("notes"."meta", :l1) ON "json_each"."value" LIKE :l2
/// ```
///
/// Rendering throws ``SqlCipherError/unsupported(feature:requires:loaded:)`` naming the `json`
/// capability when the loaded library has no JSON functions (SQLCipher 3.4.1). A live query over a
/// `json_each` of a table's column observes that table, as SQLite reports the column read.
public struct JSONEach: Sendable, Hashable, CustomStringConvertible {
    /// The JSON document walked.
    let json: SQLExpression
    /// Where in the document the walk starts; nil for the top.
    let root: String?
    /// The alias of the source in the statement, if any: what qualifies its columns
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// JSONEach(col("tags")).as("t").alias   // "t"
    /// ```
    public let alias: String?

    /// `json_each(json)`, or `json_each(json, :path)` starting at `path` (bound)
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// let each = JSONEach(SQLExpression.value("[1, 2, 3]"))
    /// let total = try await db.query(Select(.sum(each.value).as("sum")).from(each))   // 6
    /// ```
    public init(_ json: some SQLExpressible, atPath path: String? = nil) {
        self.init(json: json.sqlExpression, root: path, alias: nil)
    }

    private init(json: SQLExpression, root: String?, alias: String?) {
        self.json = json
        self.root = root
        self.alias = alias
    }

    /// The same source under an alias (`json_each(…) AS "t"`), which qualifies its columns
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// let tags = JSONEach(col("tags")).as("t")   // "t"."value", "t"."key", …
    /// ```
    public func `as`(_ alias: String) -> JSONEach {
        JSONEach(json: json, root: root, alias: alias)
    }

    // The columns of json_each's table (https://sqlite.org/json1.html#jeach), qualified by the alias
    // or by `json_each`. For `[10, "x"]` the rows are (key 0, value 10, type "integer", fullkey "$[0]")
    // and (key 1, value "x", type "text", fullkey "$[1]").

    /// The element's array index (`0`, `1`, …), or the member's label for an object (`"author"`)
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// Select(each.key, each.value).from(each).orderBy(each.key)
    /// ```
    public var key: Column { column("key") }
    /// The element's SQL value; an object or array as its JSON text
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// Select(notes.col("id")).from(notes).join(tags, on: tags.value == "swift")
    /// ```
    public var value: Column { column("value") }
    /// The element's JSON type: `null`, `true`, `false`, `integer`, `real`, `text`, `array` or
    /// `object` (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// Select(each.key).from(each).where(each.type == "array")
    /// ```
    public var type: Column { column("type") }
    /// The element's SQL value for a primitive, NULL for an array or object
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// Select(each.atom).from(each).where(each.atom.isNotNull)
    /// ```
    public var atom: Column { column("atom") }
    /// A number that identifies the element within the document: the ``parent`` of its children
    /// in `json_tree` (https://sqlite.org/json1.html#jeach). The outer table's own `id` column,
    /// if it has one, then needs qualifying (`notes.col("id")`).
    ///
    /// ```swift
    /// Select(each.id, each.value).from(each)
    /// ```
    public var id: Column { column("id") }
    /// The ``id`` of the element's container: always NULL for `json_each`, which does not descend
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// Select(each.parent).from(each)   // NULL
    /// ```
    public var parent: Column { column("parent") }
    /// The element's full JSON path from the top of the document (`$.tags[1]`)
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// Select(each.fullkey).from(each)   // "$.a", "$.b"
    /// ```
    public var fullkey: Column { column("fullkey") }
    /// The JSON path of the element's container (`$`, or the path given to
    /// ``init(_:atPath:)``) (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// Select(each.path).from(JSONEach(col("meta"), atPath: "$.tags"))   // "$.tags"
    /// ```
    public var path: Column { column("path") }

    private func column(_ name: String) -> Column {
        Column(name, table: alias ?? "json_each")
    }

    /// `json_each(…)`, with ` AS alias` when there is one, for messages and debugging
    /// (https://sqlite.org/json1.html#jeach).
    ///
    /// ```swift
    /// print(JSONEach(col("tags")).as("t"))   // json_each("tags") AS t
    /// ```
    public var description: String {
        "json_each(\(json)\(root.map { ", \($0)" } ?? ""))" + (alias.map { " AS \($0)" } ?? "")
    }

    /// Renders `json_each(json[, :path])[ AS "alias"]`, after checking that the library has JSON.
    func render(into renderer: inout SQLRenderer) throws {
        try SqlCipherLibrary.require(.json, for: "json_each()")
        if let root, let reason = SQLExpression.jsonPathRefusal(root) { throw SqlCipherError.invalidQuery(reason: reason) }
        renderer.append("json_each(")
        try json.node.render(into: &renderer, minimum: SQLExpression.Precedence.or)
        if let root {
            renderer.append(", ")
            renderer.literal(.text(root))
        }
        renderer.append(")")
        if let alias {
            renderer.append(" AS ")
            try renderer.identifier(alias)
        }
    }
}
