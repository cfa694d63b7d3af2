/// A small SQL tokenizer following SQLite's lexical rules (https://sqlite.org/lang_keywords.html,
/// https://sqlite.org/lang_expr.html#literal_values_constants_), used by the table rebuild to find
/// column names in the stored `CREATE` statements and to rewrite them without touching anything
/// else, and by the SQL guards and the redaction (SQLiteConnection+Guards.swift, SQLRedaction.swift)
/// to tell what a statement is. Those must split the text exactly where SQLite's `sqlite3GetToken`
/// does (whitespace, a byte-order mark, Tcl-style variables): a token read otherwise can hide a
/// statement's head or a key from them. Comments and whitespace are dropped; every token keeps its
/// byte range in the source.
struct SQLTokenizer {
    enum Kind: Equatable {
        /// An unquoted word: a keyword or an identifier.
        case word
        /// `"…"`, `` `…` `` or `[…]`.
        case quotedIdentifier
        /// `'…'`.
        case string
        case blob
        case number
        case variable
        /// Punctuation and operators: `(`, `)`, `,`, `.`, `;`, `<=`, …
        case symbol
    }

    struct Token {
        let kind: Kind
        /// Byte range in the source's UTF-8.
        let start: Int
        let end: Int
        /// The raw text of the token.
        let text: String
        /// The identifier this token names, dequoted, for words, quoted identifiers and strings
        /// (SQLite accepts a string literal where an identifier is expected); nil otherwise.
        let identifier: String?

        /// Whether this is the unquoted keyword `word` (ASCII case-insensitive).
        func isKeyword(_ word: String) -> Bool {
            kind == .word && text.uppercased() == word
        }

        func isSymbol(_ symbol: String) -> Bool {
            kind == .symbol && text == symbol
        }

        /// Whether this token names the identifier `name` (SQLite compares identifiers without
        /// regard to ASCII case).
        func names(_ name: String) -> Bool {
            guard let identifier, kind != .string else { return false }
            return SQLTokenizer.sameIdentifier(identifier, name)
        }
    }

    /// The tokens of `sql`, or nil when it has an unterminated quote.
    static func tokenize(_ sql: String) -> [Token]? {
        let bytes = Array(sql.utf8)
        var tokens: [Token] = []
        var index = 0
        func text(_ start: Int, _ end: Int) -> String { String(decoding: bytes[start..<end], as: UTF8.self) }
        func isWordByte(_ byte: UInt8) -> Bool { isIdentifierByte(byte) }
        while index < bytes.count {
            let byte = bytes[index]
            let start = index
            switch byte {
            case 32, 9, 10, 11, 12, 13:
                // SQLite's whitespace run goes on over every `isspace` byte, vertical tab included.
                index += 1
            case 0xEF where index + 2 < bytes.count && bytes[index + 1] == 0xBB && bytes[index + 2] == 0xBF:
                // A UTF-8 byte-order mark where a token starts is whitespace for SQLite 3.46
                // (tokenize.c, CC_BOM): read as a word, `\u{FEFF}VACUUM INTO 'file:…?key='` hid its head
                // from the guards and wrote a plaintext copy (found by the adversarial review).
                index += 3
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count && bytes[index] != 10 { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index < bytes.count && !(bytes[index] == UInt8(ascii: "*") && index + 1 < bytes.count
                                               && bytes[index + 1] == UInt8(ascii: "/")) {
                    index += 1
                }
                index = min(index + 2, bytes.count)
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                let quote = byte
                index += 1
                var value: [UInt8] = []
                var closed = false
                while index < bytes.count {
                    if bytes[index] == quote {
                        if index + 1 < bytes.count && bytes[index + 1] == quote {
                            value.append(quote)
                            index += 2
                            continue
                        }
                        index += 1
                        closed = true
                        break
                    }
                    value.append(bytes[index])
                    index += 1
                }
                guard closed else { return nil }
                let kind: Kind = quote == UInt8(ascii: "'") ? .string : .quotedIdentifier
                tokens.append(Token(kind: kind, start: start, end: index, text: text(start, index),
                                    identifier: String(decoding: value, as: UTF8.self)))
            case UInt8(ascii: "["):
                index += 1
                while index < bytes.count && bytes[index] != UInt8(ascii: "]") { index += 1 }
                guard index < bytes.count else { return nil }
                index += 1
                tokens.append(Token(kind: .quotedIdentifier, start: start, end: index, text: text(start, index),
                                    identifier: text(start + 1, index - 1)))
            case _ where (byte | 0x20) == UInt8(ascii: "x") && index + 1 < bytes.count
                && bytes[index + 1] == UInt8(ascii: "'"):
                index += 2
                while index < bytes.count && bytes[index] != UInt8(ascii: "'") { index += 1 }
                guard index < bytes.count else { return nil }
                index += 1
                tokens.append(Token(kind: .blob, start: start, end: index, text: text(start, index), identifier: nil))
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                index += 1
                while index < bytes.count {
                    let next = bytes[index]
                    if isWordByte(next) || next == UInt8(ascii: ".") {
                        index += 1
                    } else if (next == UInt8(ascii: "+") || next == UInt8(ascii: "-"))
                                && (bytes[index - 1] | 0x20) == UInt8(ascii: "e") {
                        index += 1
                    } else {
                        break
                    }
                }
                tokens.append(Token(kind: .number, start: start, end: index, text: text(start, index), identifier: nil))
            case UInt8(ascii: "."):
                if index + 1 < bytes.count && bytes[index + 1] >= 48 && bytes[index + 1] <= 57 {
                    index += 1
                    while index < bytes.count && isWordByte(bytes[index]) { index += 1 }
                    tokens.append(Token(kind: .number, start: start, end: index, text: text(start, index), identifier: nil))
                } else {
                    index += 1
                    tokens.append(Token(kind: .symbol, start: start, end: index, text: ".", identifier: nil))
                }
            case UInt8(ascii: "?"):
                // `?NNN`: digits only, as SQLite reads it (`?$a` is `?` then the variable `$a`).
                index += 1
                while index < bytes.count && bytes[index] >= 48 && bytes[index] <= 57 { index += 1 }
                tokens.append(Token(kind: .variable, start: start, end: index, text: text(start, index), identifier: nil))
            case UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "$"), UInt8(ascii: "#"):
                index = variableEnd(bytes, from: index)
                tokens.append(Token(kind: .variable, start: start, end: index, text: text(start, index), identifier: nil))
            default:
                if isWordByte(byte) {
                    while index < bytes.count && isWordByte(bytes[index]) { index += 1 }
                    let word = text(start, index)
                    tokens.append(Token(kind: .word, start: start, end: index, text: word, identifier: word))
                } else {
                    index += 1
                    if index < bytes.count {
                        let pair = [byte, bytes[index]]
                        if ["||", "<=", ">=", "==", "!=", "<>", "<<", ">>", "->"].contains(String(decoding: pair, as: UTF8.self)) {
                            index += 1
                            if pair == [UInt8(ascii: "-"), UInt8(ascii: ">")] && index < bytes.count
                                && bytes[index] == UInt8(ascii: ">") {
                                index += 1
                            }
                        }
                    }
                    tokens.append(Token(kind: .symbol, start: start, end: index, text: text(start, index), identifier: nil))
                }
            }
        }
        return tokens
    }

    /// The end of the named variable (`:`, `@`, `$` or `#`, then a name) that starts at `start`, as
    /// SQLite's tokenizer finds it: the name may hold `::`, and a `(` after it takes in every byte
    /// up to the next `)` or whitespace, quotes included (Tcl's `$name(index)`). Read any other
    /// way, `ATTACH $a(') AS x KEY 'secret' --'` put the key outside every string the redaction
    /// masked while SQLite ran it as an ATTACH with that KEY (found by the adversarial review).
    private static func variableEnd(_ bytes: [UInt8], from start: Int) -> Int {
        func isSpace(_ byte: UInt8) -> Bool { byte == 32 || (byte >= 9 && byte <= 13) }
        var index = start + 1
        var nameBytes = 0
        while index < bytes.count {
            let byte = bytes[index]
            if isIdentifierByte(byte) {
                nameBytes += 1
                index += 1
            } else if byte == UInt8(ascii: "("), nameBytes > 0 {
                repeat { index += 1 } while index < bytes.count && !isSpace(bytes[index]) && bytes[index] != UInt8(ascii: ")")
                if index < bytes.count && bytes[index] == UInt8(ascii: ")") { index += 1 }
                break
            } else if byte == UInt8(ascii: ":"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: ":") {
                index += 2
            } else {
                break
            }
        }
        return index
    }

    /// SQLite's `IdChar`: ASCII letters and digits, `_`, `$`, and every byte of a multi-byte character.
    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57) || byte == 95
            || byte == 36 || byte >= 0x80
    }

    /// Whether two identifiers are the same for SQLite: equal after folding ASCII letters only.
    static func sameIdentifier(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        for (p, q) in zip(x, y) {
            let fp = (p >= 65 && p <= 90) ? p | 0x20 : p
            let fq = (q >= 65 && q <= 90) ? q | 0x20 : q
            if fp != fq { return false }
        }
        return true
    }

    /// The index of the `)` matching the `(` at `open`, or nil.
    static func closingParenthesis(_ tokens: [Token], from open: Int) -> Int? {
        var depth = 0
        for index in open..<tokens.count {
            if tokens[index].isSymbol("(") { depth += 1 }
            if tokens[index].isSymbol(")") {
                depth -= 1
                if depth == 0 { return index }
            }
        }
        return nil
    }

    /// Replaces byte ranges of `source` (which must not overlap) with new text.
    static func rewrite(_ source: String, _ replacements: [(start: Int, end: Int, text: String)]) -> String {
        var bytes = Array(source.utf8)
        for replacement in replacements.sorted(by: { $0.start > $1.start }) {
            bytes.replaceSubrange(replacement.start..<replacement.end, with: Array(replacement.text.utf8))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// SQLite's keywords (https://sqlite.org/lang_keywords.html). An unquoted keyword in an
    /// expression is not taken for a column when rewriting, so a rewrite is never applied to SQL
    /// syntax; a column named like a keyword is still found when quoted.
    static let keywords: Set<String> = [
        "ABORT", "ACTION", "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "AS", "ASC", "ATTACH",
        "AUTOINCREMENT", "BEFORE", "BEGIN", "BETWEEN", "BY", "CASCADE", "CASE", "CAST", "CHECK", "COLLATE", "COLUMN",
        "COMMIT", "CONFLICT", "CONSTRAINT", "CREATE", "CROSS", "CURRENT", "CURRENT_DATE", "CURRENT_TIME",
        "CURRENT_TIMESTAMP", "DATABASE", "DEFAULT", "DEFERRABLE", "DEFERRED", "DELETE", "DESC", "DETACH", "DISTINCT",
        "DO", "DROP", "EACH", "ELSE", "END", "ESCAPE", "EXCEPT", "EXCLUDE", "EXCLUSIVE", "EXISTS", "EXPLAIN", "FAIL",
        "FILTER", "FIRST", "FOLLOWING", "FOR", "FOREIGN", "FROM", "FULL", "GENERATED", "GLOB", "GROUP", "GROUPS",
        "HAVING", "IF", "IGNORE", "IMMEDIATE", "IN", "INDEX", "INDEXED", "INITIALLY", "INNER", "INSERT", "INSTEAD",
        "INTERSECT", "INTO", "IS", "ISNULL", "JOIN", "KEY", "LAST", "LEFT", "LIKE", "LIMIT", "MATCH", "MATERIALIZED",
        "NATURAL", "NO", "NOT", "NOTHING", "NOTNULL", "NULL", "NULLS", "OF", "OFFSET", "ON", "OR", "ORDER", "OTHERS",
        "OUTER", "OVER", "PARTITION", "PLAN", "PRAGMA", "PRECEDING", "PRIMARY", "QUERY", "RAISE", "RANGE",
        "RECURSIVE", "REFERENCES", "REGEXP", "REINDEX", "RELEASE", "RENAME", "REPLACE", "RESTRICT", "RETURNING",
        "RIGHT", "ROLLBACK", "ROW", "ROWS", "SAVEPOINT", "SELECT", "SET", "TABLE", "TEMP", "TEMPORARY", "THEN", "TIES",
        "TO", "TRANSACTION", "TRIGGER", "UNBOUNDED", "UNION", "UNIQUE", "UPDATE", "USING", "VACUUM", "VALUES", "VIEW",
        "VIRTUAL", "WHEN", "WHERE", "WINDOW", "WITH", "WITHOUT",
    ]
}
