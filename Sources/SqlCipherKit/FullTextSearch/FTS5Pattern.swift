import CSqlCipherBridge

/// A full-text query for an FTS5 table (https://sqlite.org/fts5.html#full_text_query_syntax),
/// always bound as a value, never written into SQL text.
///
/// ```swift
/// let typed = "Serrano ham \"AND\" NEAR(cheese"     // whatever the user typed
/// if let pattern = FTS5Pattern(matchingAllTokensIn: typed) {
///     let rows = try await db.query(
///         Select(.all).from(TableName("notes_fts")).where(TableName("notes_fts").match(pattern)))
/// }
/// ```
///
/// The initialisers that take user input split it into tokens by the rule of the table's
/// tokenizer and write each token as an FTS5 string (`"token"`, with any `"` doubled), so no
/// character of the input is FTS5 syntax: quotes, `*`, `^`, `:`, `NEAR(`, `AND`, `OR`, `NOT` and
/// column filters are all searched as text, and the pattern is never a syntax error. They return
/// nil when the input holds no token (only spaces and punctuation, for example): there is then
/// nothing to search for, and an empty FTS5 query would be an error. Under `trigram` a token of
/// fewer than three characters can match no row, so it is left out (and a phrase that short is nil).
///
/// One limit is the table's, not the pattern's: a table made with `detail=column` or `detail=none`
/// (``CreateFTS5Table/detail(_:)``) answers a phrase of several tokens with an error ("phrase
/// queries are not supported"), and under `trigram` a word longer than three characters is such a
/// phrase. Search those tables with ``init(matchingAllTokensIn:tokenizer:)`` or
/// ``init(matchingAnyTokenIn:tokenizer:)`` over `unicode61` or `ascii`.
///
/// ``init(rawPattern:columns:)`` takes FTS5's own syntax, for patterns written by the program; it is
/// checked by the loaded SQLite before it is accepted.
public struct FTS5Pattern: Sendable, Hashable, CustomStringConvertible, DatabaseValueConvertible {
    /// The pattern in FTS5's query syntax, as it is bound.
    public let rawPattern: String

    /// The pattern text.
    public var description: String { rawPattern }

    private init(unchecked rawPattern: String) {
        self.rawPattern = rawPattern
    }

    /// Rows holding every token of `text`, in any order and place (`"a" AND "b"`).
    ///
    /// `tokenizer` is the table's tokenizer: it chooses how `text` is split (for `trigram`, at
    /// white space only). Nil when `text` holds no token.
    public init?(matchingAllTokensIn text: String, tokenizer: FTS5Tokenizer = .unicode61) {
        let tokens = Self.searchableTokens(in: text, tokenizer.splitting)
        guard !tokens.isEmpty else { return nil }
        self.init(unchecked: tokens.map(Self.quoted).joined(separator: " AND "))
    }

    /// Rows holding at least one token of `text` (`"a" OR "b"`). Nil when `text` holds no token.
    public init?(matchingAnyTokenIn text: String, tokenizer: FTS5Tokenizer = .unicode61) {
        let tokens = Self.searchableTokens(in: text, tokenizer.splitting)
        guard !tokens.isEmpty else { return nil }
        self.init(unchecked: tokens.map(Self.quoted).joined(separator: " OR "))
    }

    /// Rows holding the tokens of `text` next to each other, in order (`"a b"`). Nil when `text`
    /// holds no token. Needs a table with `detail=full` (the default) when `text` has several tokens.
    public init?(matchingPhrase text: String, tokenizer: FTS5Tokenizer = .unicode61) {
        let phrase = Self.tokens(in: text, tokenizer.splitting).joined(separator: " ")
        guard phrase.unicodeScalars.count >= (tokenizer.splitting == .whitespace ? Self.trigramLength : 1) else {
            return nil
        }
        self.init(unchecked: Self.quoted(phrase))
    }

    /// Rows holding, for every token of `text`, a token that starts with it (`"a"* AND "b"*`): what a
    /// search field shows while the user types. Nil when `text` holds no token.
    public init?(matchingAllPrefixesIn text: String, tokenizer: FTS5Tokenizer = .unicode61) {
        let tokens = Self.searchableTokens(in: text, tokenizer.splitting)
        guard !tokens.isEmpty else { return nil }
        self.init(unchecked: tokens.map { Self.quoted($0) + "*" }.joined(separator: " AND "))
    }

    /// A pattern in FTS5's own syntax (`"sqlite AND (fts5 OR fts4)"`, `"title: privacy"`), for
    /// patterns the program writes. For text a user types, use the other initialisers: they cannot
    /// fail.
    ///
    /// The loaded SQLite parses the pattern on a private in-memory FTS5 table whose columns are
    /// `columns` (give the searched table's columns when the pattern filters by column). A column
    /// filter naming another column is then an error here; against a table the pattern is run on,
    /// such a filter is an error of that query.
    ///
    /// - Throws: ``SqlCipherError/invalidQuery(reason:)`` for a pattern that is empty, holds NUL or
    ///   is not valid FTS5 syntax (SQLite's message says where);
    ///   ``SqlCipherError/unsupported(feature:requires:loaded:)`` when the loaded library has no FTS5.
    public init(rawPattern: String, columns: [String] = []) throws {
        try Self.validate(rawPattern, columns: columns)
        self.init(unchecked: rawPattern)
    }

    /// The pattern, bound as text.
    public var databaseValue: DatabaseValue { .text(rawPattern) }

    /// Nil: a pattern read back from the database is not known to be valid; check it with
    /// ``init(rawPattern:columns:)``.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> FTS5Pattern? { nil }

    // MARK: Tokens

    /// How user input is cut into tokens, by the rule of the table's tokenizer.
    enum Splitting: Sendable, Hashable {
        /// Tokens are runs of letters (L*), numbers (N*) and private-use characters (Co), with the
        /// combining marks (Mn, Mc) that follow them: unicode61's default token characters.
        case unicode61
        /// Tokens are runs of ASCII letters and digits and of every non-ASCII character.
        case ascii
        /// Tokens are runs of anything but white space (the trigram tokenizer has no separators).
        case whitespace
    }

    /// The tokens of `text`. Control characters (NUL among them) always separate: FTS5 reads a
    /// pattern as C text, which ends at NUL.
    static func tokens(in text: String, _ splitting: Splitting) -> [String] {
        var tokens: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isTokenScalar(scalar, splitting, continuing: !current.isEmpty) {
                current.append(scalar)
            } else if !current.isEmpty {
                tokens.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { tokens.append(String(current)) }
        return tokens
    }

    private static func isTokenScalar(_ scalar: Unicode.Scalar, _ splitting: Splitting, continuing: Bool) -> Bool {
        let category = scalar.properties.generalCategory
        if category == .control { return false }
        switch splitting {
        case .ascii:
            guard scalar.isASCII else { return true }
            let byte = scalar.value
            return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
        case .whitespace:
            return !scalar.properties.isWhitespace
        case .unicode61:
            switch category {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber, .privateUse:
                return true
            case .nonspacingMark, .spacingMark:
                // A mark alone is no token: it stays with the letter it modifies.
                return continuing
            default:
                return false
            }
        }
    }

    /// The characters of one `trigram` token.
    static let trigramLength = 3

    /// The tokens of `text` that can match a row. Under `trigram` a token shorter than three
    /// characters holds no trigram: FTS5 finds no row for it, so one such token in an `AND` would
    /// empty the whole result (a search field showed nothing while the user typed "hello w").
    static func searchableTokens(in text: String, _ splitting: Splitting) -> [String] {
        let tokens = tokens(in: text, splitting)
        guard splitting == .whitespace else { return tokens }
        return tokens.filter { $0.unicodeScalars.count >= trigramLength }
    }

    /// `token` as an FTS5 string: in double quotes, with each `"` doubled. Inside such a string no
    /// character is syntax (https://sqlite.org/fts5.html#fts5_strings).
    static func quoted(_ token: String) -> String {
        "\"" + token.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: Validation

    /// Parses `pattern` with the loaded SQLite's FTS5, on a private in-memory table.
    private static func validate(_ pattern: String, columns: [String]) throws {
        guard !pattern.unicodeScalars.contains("\0") else {
            throw SqlCipherError.invalidQuery(
                reason: "the full-text pattern contains a NUL character, where FTS5 stops reading; remove it")
        }
        guard pattern.unicodeScalars.contains(where: { !$0.properties.isWhitespace }) else {
            throw SqlCipherError.invalidQuery(
                reason: "the full-text pattern is empty; give it a term, or use FTS5Pattern(matchingAllTokensIn:), "
                    + "which is nil when the text holds nothing to search")
        }
        try SqlCipherLibrary.require(.fts5, for: "FTS5Pattern(rawPattern:)")
        let names = columns.isEmpty ? ["content"] : columns
        let table = "CREATE VIRTUAL TABLE temp.\"pattern_check\" USING fts5("
            + (try names.map { try SQLRenderer.quoteIdentifier($0) }.joined(separator: ", ")) + ")"
        var db: OpaquePointer?
        // SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY: nothing on disk.
        guard scb_open_v2(":memory:", &db, 0x02 | 0x04 | 0x80, nil) == 0, let db else {
            if let db { scb_close_v2(db) }
            throw SqlCipherError.invalidQuery(reason: "the full-text pattern could not be checked: no in-memory database")
        }
        defer { scb_close_v2(db) }
        if let message = step(db, table, binding: nil) {
            // SQLite's reason says which rule a name broke (a reserved name, one given twice).
            throw SqlCipherError.invalidQuery(
                reason: "the full-text pattern's columns \(columns.map(SQLRenderer.visible)) cannot make an FTS5 table "
                    + "(\(message)); give the searched table's column names: each once, none named rank or rowid")
        }
        if let message = step(db, "SELECT rowid FROM \"pattern_check\" WHERE \"pattern_check\" MATCH ?", binding: pattern) {
            if message.hasPrefix("no such column") {
                // A column filter (`title: x`) is checked against the columns given, "content" by default.
                throw SqlCipherError.invalidQuery(
                    reason: "the full-text pattern filters on a column it was not given (\(message)); pass the searched "
                        + "table's column names as FTS5Pattern(rawPattern:columns:), or remove the filter")
            }
            throw SqlCipherError.invalidQuery(
                reason: "the full-text pattern is not valid FTS5 syntax (\(message)); fix the pattern, or build it "
                    + "from user input with FTS5Pattern(matchingAllTokensIn:), which cannot fail")
        }
    }

    /// Runs `sql` to its end, binding `binding` to its one parameter; the error message, or nil.
    private static func step(_ db: OpaquePointer, _ sql: String, binding: String?) -> String? {
        var statement: OpaquePointer?
        guard scb_prepare(db, sql, -1, 0, &statement, nil) == 0, let statement else {
            return scb_errmsg(db).map { String(cString: $0) } ?? "prepare failed"
        }
        defer { scb_finalize(statement) }
        if let binding {
            let bytes = Array(binding.utf8)
            // A length past a C int's range would trap in the conversion: say it is too long.
            guard let length = Int32(exactly: bytes.count) else {
                return "the pattern is \(bytes.count) bytes long, more than SQLite can take"
            }
            let rc = bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    scb_bind_text(statement, 1, $0.baseAddress, length)
                }
            }
            guard rc == 0 else { return "bind failed" }
        }
        var rc = scb_step(statement)
        while rc == 100 { rc = scb_step(statement) }
        return rc == 101 ? nil : (scb_errmsg(db).map { String(cString: $0) } ?? "error \(rc)")
    }
}
