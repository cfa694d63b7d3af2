/// Rendered SQL of a query-builder template: its text and the literal values to bind.
///
/// ```swift
/// let maxPrice = Param<Double>("maxPrice")
/// let fragment = try Select(.all).from(TableName("products"))
///     .where(col("price") < maxPrice && col("name") != "")
///     .render()
/// // fragment.sql == #"SELECT * FROM "products" WHERE "price" < :p_maxPrice AND "name" <> :l1"#
/// // fragment.literals == [.text("")], fragment.parameterNames == ["maxPrice"]
/// ```
///
/// Rendering rules:
/// - Identifiers (tables, columns, aliases) are always double-quoted, with embedded `"` doubled.
///   An identifier containing NUL is rejected, because SQLite ends SQL text at NUL.
/// - Values are never part of the text. A literal written in the template (`col("price") < 10`)
///   becomes the placeholder `:l1`, `:l2`, … in rendering order; a ``Param`` named `x` becomes
///   `:p_x`. User names start with `p_` and literal names with `l` followed by a digit, so the two
///   can never collide. Parameter names must be ASCII letters, digits and `_`, not starting with a
///   digit.
/// - The text depends only on the template's shape, never on the values bound, so a template run
///   many times is prepared once and then found in the connection's statement cache.
public struct SQLFragment: Sendable, Hashable, CustomStringConvertible {
    /// The SQL text, with named placeholders.
    public let sql: String
    /// The values of the template's literals: `literals[0]` binds `:l1`, `literals[1]` binds `:l2`, …
    public let literals: [DatabaseValue]
    /// The names of the template's ``Param``s (without the `:p_` prefix), in order of first use.
    public let parameterNames: [String]

    /// The SQL text, redacted where it names a key, as errors and traces show SQL (a fragment of
    /// an ``SQL`` literal can hold `ATTACH … KEY '…'`).
    public var description: String { SQLRedaction.text(of: sql) }

    /// The placeholder of the literal at `index` (0-based): `:l1` for 0.
    static func literalPlaceholder(_ index: Int) -> String { ":l\(index + 1)" }

    /// The placeholder of a user parameter: `:p_<name>`.
    static func parameterPlaceholder(_ name: String) -> String { ":p_" + name }
}

/// A fragment prints its text and literals as a trace event does: the text redacted, the literals
/// left out when the statement can carry key material (`ATTACH ? AS archive KEY ?`).
extension SQLFragment: CustomReflectable {
    /// The redacted text, the literals (unless hidden) and the parameter names, so that `dump`
    /// shows no key.
    public var customMirror: Mirror {
        Mirror(self, children: ["sql": SQLRedaction.text(of: sql), "literals": SQLRedaction.mirrored(literals, of: sql),
                                "parameterNames": parameterNames], displayStyle: .struct)
    }
}

/// Builds an ``SQLFragment``: SQL text plus literals and parameter names, assigned in order.
struct SQLRenderer {
    private(set) var sql = ""
    private(set) var literals: [DatabaseValue] = []
    private(set) var parameterNames: [String] = []
    private var parameterSet: Set<String> = []
    /// Whether literals are written as `?` (bound by position) rather than `:l1`, `:l2`, …: for a
    /// builder piece interpolated into an ``SQL`` literal, whose values are all positional. Such
    /// a piece takes no ``Param``, which would have no way to receive a value.
    private let positional: Bool

    init(positional: Bool = false) {
        self.positional = positional
        sql.reserveCapacity(128)
    }

    mutating func append(_ text: String) {
        sql += text
    }

    /// Appends a quoted identifier.
    mutating func identifier(_ name: String) throws {
        sql += try SQLRenderer.quoteIdentifier(name)
    }

    /// Appends the placeholder of a new literal and records its value.
    mutating func literal(_ value: DatabaseValue) {
        sql += positional ? "?" : SQLFragment.literalPlaceholder(literals.count)
        literals.append(value)
    }

    /// Appends the placeholder of a user parameter, after checking its name.
    mutating func parameter(_ name: String) throws {
        if positional { throw SqlCipherError.unboundParameter(name: name) }
        try SQLRenderer.validateParameterName(name)
        sql += SQLFragment.parameterPlaceholder(name)
        if parameterSet.insert(name).inserted { parameterNames.append(name) }
    }

    var fragment: SQLFragment {
        SQLFragment(sql: sql, literals: literals, parameterNames: parameterNames)
    }

    // MARK: Rules

    /// `name` in double quotes, with embedded double quotes doubled
    /// (https://sqlite.org/lang_keywords.html), for a name SQLite itself gave (a schema, table or
    /// collation read from the database), which cannot hold a NUL. Names from the caller go
    /// through ``quoteIdentifier(_:)``, which refuses one.
    static func quotedName(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `name` in double quotes, with embedded double quotes doubled
    /// (https://sqlite.org/lang_keywords.html).
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` when `name` contains NUL.
    static func quoteIdentifier(_ name: String) throws -> String {
        var quoted = "\""
        quoted.reserveCapacity(name.utf8.count + 2)
        for character in name.unicodeScalars {
            if character == "\0" {
                throw SqlCipherError.invalidQuery(
                    reason: "the identifier \(visible(name)) contains a NUL character, which SQL text cannot hold; "
                        + "use a name without NUL")
            }
            if character == "\"" { quoted += "\"\"" } else { quoted.unicodeScalars.append(character) }
        }
        quoted += "\""
        return quoted
    }

    /// Parameter names are ASCII identifiers, so `:p_<name>` is always one SQLite parameter token.
    static func validateParameterName(_ name: String) throws {
        var first = true
        for byte in name.utf8 {
            let isLetter = (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95
            let isDigit = byte >= 48 && byte <= 57
            guard isLetter || (isDigit && !first) else {
                throw SqlCipherError.invalidQuery(
                    reason: "the parameter name \(visible(name)) is not valid; use ASCII letters, digits and _ "
                        + "(not starting with a digit)")
            }
            first = false
        }
        if first {
            throw SqlCipherError.invalidQuery(reason: "a parameter name is empty; give every Param a name")
        }
    }

    /// A name for messages, in quotes, with control characters (NUL included) made visible and at
    /// most ``visibleLimit`` characters shown: the one way an error description shows a name.
    static func visible(_ name: String) -> String {
        var text = "\""
        var shown = 0
        for scalar in name.unicodeScalars {
            if shown == visibleLimit {
                let more = name.unicodeScalars.count - shown
                return text + "\"… (\(more) more character\(more == 1 ? "" : "s"))"
            }
            shown += 1
            if scalar.value < 0x20 || scalar.value == 0x7F {
                text += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    /// The most characters of a name a message shows: an identifier, a table or a schema name can
    /// be as long as SQL text, and an error message stays one readable line (the error's associated
    /// value keeps the whole name).
    static let visibleLimit = 200
}
