/// The SQL text a trace event shows: the statement's own text, with whatever may hold key material
/// replaced by `'***'`.
///
/// Keys reach SQLite through `sqlite3_key` and `sqlite3_rekey` in this package, never through SQL,
/// and the guards refuse `PRAGMA key` and its relatives before they run. What is left is SQL that
/// names a key itself and is allowed to run:
/// - `ATTACH file AS schema KEY key`: everything after `KEY` is the key, and the file can be a
///   `file:` URI with a `key=`, `hexkey=` or `textkey=` parameter (written with `%`-escapes, or
///   assembled with `||`), so every literal of the statement is replaced;
/// - `VACUUM INTO 'file:...?key=...'` on a plaintext database: every literal is replaced;
/// - a `PRAGMA` of the key family (only reading it is allowed, but it is redacted all the same);
/// - any other statement: a string literal that contains `key=` in any case.
/// A redacted statement is rebuilt from its tokens, so comments (which could repeat the key) go
/// too. Text whose quotes do not close is not shown at all.
enum TraceRedaction {
    /// What replaces a literal.
    static let mask = "'***'"

    /// `sql` as trace events show it. Costs one scan of the text when it needs no redaction.
    static func text(of sql: String) -> String {
        guard mayHoldKey(sql) else { return sql }
        guard let tokens = SQLTokenizer.tokenize(sql) else {
            return "<statement not shown: its quotes do not close, so key material could not be removed>"
        }
        guard let head = tokens.first else { return sql }
        var output: [String] = []
        var redacted = false
        if head.isKeyword("ATTACH") || head.isKeyword("VACUUM") {
            for token in tokens {
                if head.isKeyword("ATTACH") && token.isKeyword("KEY") {
                    output += ["KEY", mask]
                    redacted = true
                    break
                }
                if isLiteral(token) {
                    output.append(mask)
                    redacted = true
                } else {
                    output.append(token.text)
                }
            }
        } else if head.isKeyword("PRAGMA"), isKeyPragma(tokens) {
            // PRAGMA [schema.]name [= value | (value)]: keep the name, mask any value.
            var index = 1
            while index < tokens.count && !tokens[index].isSymbol("=") && !tokens[index].isSymbol("(") {
                output.append(tokens[index].text)
                index += 1
            }
            output = ["PRAGMA"] + output
            if index < tokens.count { output += ["=", mask] }
            redacted = true
        } else {
            for token in tokens {
                if token.kind == .string && containsKeyParameter(token.text) {
                    output.append(mask)
                    redacted = true
                } else {
                    output.append(token.text)
                }
            }
        }
        return redacted ? join(output) : sql
    }

    /// Whether `sql` mentions `key`, `attach` or `vacuum` in any case: only such text is tokenized.
    static func mayHoldKey(_ sql: String) -> Bool {
        var utf8 = sql.utf8.makeIterator()
        // A rolling window of the last six bytes, folded to lower case.
        var window: UInt64 = 0
        while let byte = utf8.next() {
            let folded = byte >= 65 && byte <= 90 ? byte | 0x20 : byte
            window = (window << 8) | UInt64(folded)
            if window & 0xFF_FFFF == 0x6B_6579 { return true }  // "key"
            if window & 0xFFFF_FFFF_FFFF == 0x6174_7461_6368 || window & 0xFFFF_FFFF_FFFF == 0x7661_6375_756D {
                return true  // "attach", "vacuum"
            }
        }
        return false
    }

    /// Whether the values bound to `sql` must never be shown, even to a tracer that asked for
    /// arguments: `ATTACH` (its file and `KEY` can be bound), `VACUUM INTO ?` (the destination can
    /// be a `file:` URI with `key=`), and key-family pragmas. Text whose tokens do not close hides them too.
    static func hidesArguments(of sql: String) -> Bool {
        guard mayHoldKey(sql) else { return false }
        guard let tokens = SQLTokenizer.tokenize(sql) else { return true }
        guard let head = tokens.first else { return false }
        return head.isKeyword("ATTACH") || head.isKeyword("VACUUM") || (head.isKeyword("PRAGMA") && isKeyPragma(tokens))
    }

    private static func isLiteral(_ token: SQLTokenizer.Token) -> Bool {
        token.kind == .string || token.kind == .blob || token.kind == .number
    }

    private static func isKeyPragma(_ tokens: [SQLTokenizer.Token]) -> Bool {
        // The name is the second token, or the fourth after `schema .`.
        let nameIndex = tokens.count > 2 && tokens[2].isSymbol(".") ? 3 : 1
        guard nameIndex < tokens.count, let name = tokens[nameIndex].identifier else { return false }
        return CipherPragmaRule.keyPragmas.contains(FunctionKey.fold(name))
    }

    private static func containsKeyParameter(_ literal: String) -> Bool {
        FunctionKey.fold(literal).contains("key=")
    }

    /// Tokens as one line of SQL, spaced as people write it.
    private static func join(_ tokens: [String]) -> String {
        var text = ""
        var previous = ""
        for token in tokens {
            let tight = text.isEmpty || previous == "(" || previous == "." || token == ")" || token == ","
                || token == "." || token == ";" || (token == "(" && previous.last.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "\"" } == true)
            text += (tight ? "" : " ") + token
            previous = token
        }
        return text
    }
}
