import Foundation

/// The one redaction of SQL text that leaves the package: trace events, the associated values of
/// ``SqlCipherError`` and every `description` show text that went through it.
///
/// Keys reach SQLite through `sqlite3_key` and `sqlite3_rekey` in this package, never through SQL,
/// and the guards refuse `PRAGMA key` and its relatives before they run. What is left is SQL that
/// names a key itself:
/// - `ATTACH file AS schema KEY key`: everything after `KEY` is the key, and the file can be a
///   `file:` URI with a `key=`, `hexkey=` or `textkey=` parameter (written with `%`-escapes, or
///   assembled with `||`), so every literal of the statement is replaced;
/// - `VACUUM INTO 'file:...?key=...'`: every literal is replaced;
/// - a `PRAGMA` of the key family, with or without a schema, `=` or `(...)`: its value is replaced;
///   so is the value of `cipher_salt`, of `cipher_add_random` and of a pragma whose name is no ASCII
///   (a look-alike of `key`);
/// - any other statement: a string literal that contains `key=` in any case, the operands of a
///   `KEY` clause (a mistyped or misplaced `ATTACH`) and the value of a key pragma named after the
///   statement's head (a `;` left out).
///
/// The decision is made on tokens, never by searching for a key's value (a short key would mask
/// unrelated words of a message): the WHOLE text is tokenized, so every statement of a script
/// counts, whatever precedes it (a leading `;`, comments, `EXPLAIN`, `EXPLAIN QUERY PLAN`). A
/// redacted text is rebuilt from its tokens, so comments (which could repeat the key) go too; text
/// whose quotes do not close is not shown at all.
enum SQLRedaction {
    /// What replaces a literal.
    static let mask = "'***'"

    /// What is shown instead of text whose quotes do not close.
    static let unclosed = "<statement not shown: its quotes do not close, so key material could not be removed>"

    /// `sql` as it may leave the package. Costs one scan of the text when it needs no redaction, and
    /// returns already redacted text unchanged.
    static func text(of sql: String) -> String {
        guard mayHoldKey(sql) else { return sql }
        let readable = blanked(sql)
        guard let tokens = SQLTokenizer.tokenize(readable) else { return unclosed }
        let original = Array(sql.utf8)
        var output: [String] = []
        var redacted = false
        for statement in statements(of: tokens) {
            let body = tokens[statement]
            let (head, kind) = classify(body)
            switch kind {
            case .attach, .vacuum:
                // Inside the file expression (ATTACH's before AS, VACUUM's after INTO) a quoted
                // identifier can stand for a string (SQLite reads an unknown "name" as text), so it
                // is masked like a literal; the schema names around it are shown.
                var inFile = kind == .attach
                var index = body.startIndex
                while index < body.endIndex {
                    let token = body[index]
                    if kind == .attach && token.isKeyword("AS") { inFile = false }
                    if kind == .vacuum && token.isKeyword("INTO") { inFile = true }
                    if kind == .attach && index > head && token.isKeyword("KEY") {
                        output += ["KEY", mask]
                        redacted = true
                        if let last = body.last, last.isSymbol(";") { output.append(";") }
                        break
                    }
                    if isLiteral(token) || (inFile && index > head && token.kind == .quotedIdentifier) {
                        output.append(mask)
                        redacted = true
                    } else {
                        output.append(token.text)
                    }
                    index += 1
                }
            case .keyPragma:
                // PRAGMA [schema.]name, then the value: keep the name and mask EVERYTHING after it,
                // whatever it is. SQLite takes `==` for `=` (`PRAGMA key == 'x'` sets the key), and
                // text that does not parse (`PRAGMA key 'x'`, a typo) still holds the key; masking
                // only what follows a `=` or `(` showed both (found by the hostile-input review).
                let name = Self.pragmaNameIndex(body, head: head)
                for index in body.startIndex...name {
                    // The keywords that decide the redaction are shown in capitals, as in KEY '***'.
                    output.append(index == head ? "PRAGMA" : body[index].text)
                }
                let last = body.last.map { $0.isSymbol(";") } == true ? body.endIndex - 1 : body.endIndex
                if name + 1 < last {
                    output += ["=", mask]
                    redacted = true
                }
                if last < body.endIndex { output.append(";") }
            case .other:
                // A word glued to a character SQLite reads as part of a name (`ATTACHé`): SQLite
                // refuses the text and echoes it; only keywords and punctuation are shown.
                let disguised = isDisguised(body, original: original, readable: readable)
                // A `KEY` clause or a key pragma inside a statement whose head says otherwise: an
                // `ATTACH` mistyped (`ATACH`, a look-alike letter such as a Cyrillic `А`), one after
                // a missing `;` (`SELECT 1 ATTACH …`, `WITH … ATTACH …`) or in a trigger's body,
                // `SELECT 1 PRAGMA key = '…'`. SQLite refuses such text and the error showed it
                // with the key (found by the attack review). The operands of the `KEY`, and
                // everything after the pragma's name, are masked.
                let pragmaName = disguised ? nil : embeddedKeyPragmaName(body, head: head)
                var keyClause = false
                for index in body.indices {
                    let token = body[index]
                    if let name = pragmaName, index > name {
                        if index == name + 1 && !token.isSymbol(";") {
                            output += ["=", mask]
                            redacted = true
                        }
                        if index == body.endIndex - 1 && token.isSymbol(";") { output.append(";") }
                        continue
                    }
                    if !disguised && !keyClause { keyClause = startsKeyClause(body, at: index) }
                    if disguised ? !isShownInDisguise(token)
                        : keyClause ? isKeyOperand(token) : token.kind == .string && containsKeyParameter(token.text) {
                        output.append(mask)
                        redacted = true
                    } else {
                        output.append(token.text)
                    }
                }
            }
        }
        // A comment is dropped with the rest when the text is rebuilt; a text that needs no other
        // redaction is rebuilt too when a comment of it names a key (commented-out
        // `-- PRAGMA key = '…'` or `/* ATTACH … KEY '…' */` was shown as written).
        return redacted || commentMayHoldKey(readable, tokens) ? join(output) : sql
    }

    /// `sql` with every character outside ASCII that a reader takes for a space, or does not see
    /// at all (Unicode white space such as U+00A0 and U+2003, format characters such as U+200B and a
    /// byte-order mark, controls), replaced by as many spaces as it has bytes: the text as a person
    /// reads it, at the same byte offsets, for the redaction's decisions only. SQLite reads those
    /// bytes as part of a name, so `ATTACH<U+00A0>'file' AS a KEY 'secret'`, pasted from a web page or
    /// a word processor, is a syntax error whose message quotes the text; read as one word
    /// `ATTACH<U+00A0>`, the statement was no `ATTACH` to the redaction and the error showed the key
    /// (found by the fuzzing pass). Returns `sql` itself when it has no byte outside ASCII.
    static func blanked(_ sql: String) -> String {
        guard sql.utf8.contains(where: { $0 >= 0x80 }) else { return sql }
        var scalars = String.UnicodeScalarView()
        var changed = false
        for scalar in sql.unicodeScalars {
            if scalar.value >= 0x80, isBlank(scalar) {
                for _ in 0..<UTF8.width(scalar) { scalars.append(" ") }
                changed = true
            } else {
                scalars.append(scalar)
            }
        }
        return changed ? String(scalars) : sql
    }

    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        if properties.isWhitespace { return true }
        switch properties.generalCategory {
        case .format, .control, .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }

    /// Whether a byte is one a reader does not see as a character of a word: an ASCII control
    /// other than SQL's whitespace (a NUL among them), or a byte of a character outside ASCII.
    @inline(__always)
    private static func isHidden(_ byte: UInt8) -> Bool {
        (byte < 32 && (byte < 9 || byte > 13)) || byte >= 0x7F
    }

    /// Whether a statement that is no `ATTACH`, `VACUUM` or key pragma to the tokens may still be
    /// meant as one, and hold a key: it mentions `key`, `attach` or `vacuum` when the characters a
    /// reader does not see are left out (`ATTA<NUL>CH`, `k<U+200B>ey`), and outside its literals it
    /// holds such a character (an ASCII control, a space or format character outside ASCII) or a
    /// word glued to a keyword that decides the redaction (`ATTACHé`, `éKEY`). SQLite refuses such
    /// text, or the package does (a NUL), and the error shows it; only its keywords and punctuation
    /// are shown then. A name outside ASCII (`prénom`) or a Unicode space inside a string does not
    /// count: such statements are shown, and cached, as written. A head word outside ASCII (a
    /// look-alike of `PRAGMA` or `ATTACH`, never valid SQL) counts.
    private static func isDisguised(_ body: ArraySlice<SQLTokenizer.Token>, original: [UInt8], readable: String) -> Bool {
        guard let first = body.first, let last = body.last else { return false }
        let span = original[first.start..<last.end]
        guard mayHoldKey(span) else { return false }
        if span.contains(where: { $0 < 32 && ($0 < 9 || $0 > 13) || $0 == 0x7F }) { return true }
        // A head word outside ASCII, which no statement has: a look-alike of a keyword
        // (`PRАGMA key = …` or `АTTACH …` with a Cyrillic `А`), which SQLite refuses and echoes
        // (found by the attack review).
        if first.kind == .word && first.text.utf8.contains(where: { $0 >= 0x80 }) { return true }
        if body.contains(where: { $0.kind == .word && isGluedToKeyword($0.text) }) { return true }
        // A character blanked outside every literal and quoted name: between two tokens, or where
        // the tokens of the original text would have run together.
        let blankedBytes = Array(readable.utf8)
        var literal = body.startIndex
        for offset in first.start..<last.end where original[offset] >= 0x80 && blankedBytes[offset] == 32 {
            while literal < body.endIndex && body[literal].end <= offset { literal += 1 }
            let inside = literal < body.endIndex && body[literal].start <= offset
                && [.string, .blob, .quotedIdentifier].contains(body[literal].kind)
            if !inside { return true }
        }
        return false
    }

    /// Whether a word holds a character outside ASCII next to one of the words the redaction
    /// decides by (`ATTACHé`, `PRAGMAé`, `éKEY`): split at those characters, one of its ASCII
    /// pieces is such a word.
    private static func isGluedToKeyword(_ word: String) -> Bool {
        guard word.utf8.contains(where: { $0 >= 0x80 }) else { return false }
        let pieces = word.utf8.split(whereSeparator: { $0 >= 0x80 }).map { String(decoding: $0, as: UTF8.self).uppercased() }
        // And the word as a reader sees it, its look-alike letters read as Latin ones (`КEY`).
        return (pieces + [skeleton(of: word)]).contains { ["ATTACH", "VACUUM", "PRAGMA", "EXPLAIN", "KEY", "AS", "INTO", "DATABASE"].contains($0)
            || CipherPragmaRule.keyPragmas.contains($0.lowercased()) }
    }

    /// `word` in capitals with each Greek or Cyrillic letter that looks like a Latin one replaced
    /// by that letter (``lookAlike(_:_:)``); empty when another character outside ASCII remains.
    private static func skeleton(of word: String) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(word.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte < 0x80 {
                bytes.append(byte >= 97 && byte <= 122 ? byte - 32 : byte)
                index += 1
            } else if index + 1 < utf8.count, let latin = lookAlike(byte, utf8[index + 1]) {
                bytes.append(latin - 32)
                index += 2
            } else {
                return ""
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The lower-case Latin letter that the Greek or Cyrillic letter encoded as `lead`, `trail`
    /// looks like (`К`, `к`, `Κ`, `κ` → `k`), or nil: the look-alikes of the letters of the words
    /// the redaction decides by (Unicode's confusables, https://www.unicode.org/reports/tr39/).
    private static func lookAlike(_ lead: UInt8, _ trail: UInt8) -> UInt8? {
        let letter: Character? = switch (lead, trail) {
        // Cyrillic capitals А В Е К М Н О Р С Т У Х Ѕ І Ј and small а е к м о р с т у х ѕ і ј.
        case (0xD0, 0x90), (0xD0, 0xB0): "a"
        case (0xD0, 0x92): "b"
        case (0xD0, 0x95), (0xD0, 0xB5): "e"
        case (0xD0, 0x9A), (0xD0, 0xBA): "k"
        case (0xD0, 0x9C), (0xD0, 0xBC): "m"
        case (0xD0, 0x9D): "h"
        case (0xD0, 0x9E), (0xD0, 0xBE): "o"
        case (0xD0, 0xA0), (0xD1, 0x80): "p"
        case (0xD0, 0xA1), (0xD1, 0x81): "c"
        case (0xD0, 0xA2), (0xD1, 0x82): "t"
        case (0xD0, 0xA3), (0xD1, 0x83): "y"
        case (0xD0, 0xA5), (0xD1, 0x85): "x"
        case (0xD0, 0x85), (0xD1, 0x95): "s"
        case (0xD0, 0x86), (0xD1, 0x96): "i"
        case (0xD0, 0x88), (0xD1, 0x98): "j"
        // Greek capitals Α Β Ε Ζ Η Ι Κ Μ Ν Ο Ρ Τ Υ Χ and small α ε ι κ ν ο ρ τ υ χ.
        case (0xCE, 0x91), (0xCE, 0xB1): "a"
        case (0xCE, 0x92): "b"
        case (0xCE, 0x95), (0xCE, 0xB5): "e"
        case (0xCE, 0x96): "z"
        case (0xCE, 0x97): "h"
        case (0xCE, 0x99), (0xCE, 0xB9): "i"
        case (0xCE, 0x9A), (0xCE, 0xBA): "k"
        case (0xCE, 0x9C): "m"
        case (0xCE, 0x9D): "n"
        case (0xCE, 0xBD): "v"
        case (0xCE, 0x9F), (0xCE, 0xBF): "o"
        case (0xCE, 0xA1), (0xCF, 0x81): "p"
        case (0xCE, 0xA4), (0xCF, 0x84): "t"
        case (0xCE, 0xA5): "y"
        case (0xCF, 0x85): "u"
        case (0xCE, 0xA7), (0xCF, 0x87): "x"
        default: nil
        }
        return letter?.asciiValue
    }

    /// Whether a token of a disguised statement (``isDisguised(_:)``) is shown: punctuation and
    /// SQL keywords written in ASCII only.
    private static func isShownInDisguise(_ token: SQLTokenizer.Token) -> Bool {
        (token.kind == .symbol && !token.text.utf8.contains(where: isHidden))
            || (token.kind == .word && SQLTokenizer.keywords.contains(token.text.uppercased()))
    }

    /// Whether the text between two tokens (whitespace and comments) mentions `key`, `attach` or
    /// `vacuum`: only a comment can, since whitespace holds no letters.
    private static func commentMayHoldKey(_ sql: String, _ tokens: [SQLTokenizer.Token]) -> Bool {
        let bytes = Array(sql.utf8)
        var start = 0
        for token in tokens {
            if token.start - start > 2, mayHoldKey(bytes[start..<token.start]) { return true }
            start = token.end
        }
        return bytes.count - start > 2 && mayHoldKey(bytes[start...])
    }

    /// Whether the values bound to `sql` must never be shown, even to a tracer that asked for
    /// arguments: some statement of it is an `ATTACH` (its file and `KEY` can be bound), a `VACUUM`
    /// (`VACUUM INTO ?` can name a `file:` URI with `key=`) or a key-family pragma. Text whose
    /// tokens do not close hides them too.
    static func hidesArguments(of sql: String) -> Bool {
        guard mayHoldKey(sql) else { return false }
        let readable = blanked(sql)
        guard let tokens = SQLTokenizer.tokenize(readable) else { return true }
        let original = Array(sql.utf8)
        return statements(of: tokens).contains {
            classify(tokens[$0]).kind != .other || isDisguised(tokens[$0], original: original, readable: readable)
        }
    }

    /// SQLite's error `message` for `sql`, with what it echoes of the text masked when the text
    /// holds key material: SQLite quotes the token it stumbled on (`near "...": syntax error`,
    /// `unrecognized token: "..."`) or ends with the name it did not find (`no such column: ...`),
    /// and either can be the key. Messages of other statements are returned unchanged.
    static func message(_ message: String, of sql: String?) -> String {
        guard let sql, hidesArguments(of: sql) || text(of: sql) != sql else { return message }
        // The package's own advice after SQLite's words (a busy lock, a key changed by another
        // process, …) echoes nothing of the text: only SQLite's part is masked. Masked whole, a
        // `VACUUM` that met another process's lock said only "database is locked: ***".
        for advice in SQLiteMessageAdvice.suffixes where message.count > advice.count && message.hasSuffix(advice) {
            return maskingEchoes(String(message.dropLast(advice.count))) + advice
        }
        return maskingEchoes(message)
    }

    /// SQLite's error `message` with every quoted token and whatever follows its first `": "`
    /// masked (see ``message(_:of:)``).
    private static func maskingEchoes(_ message: String) -> String {
        var output = message
        // SQLite quotes the token it echoes without escaping it (`near "%T": syntax error`), so a
        // token that holds the quote itself (`"secret"`, read as one token after a name glued to
        // a byte-order mark) ends at the LAST such quote, not the next one: reading it the other
        // way showed `near "***"secret"***"` (found by the fuzzing pass). Everything from the first
        // quote to the last of the same kind is masked; an unclosed one masks the rest.
        if let open = output.firstIndex(where: { $0 == "\"" || $0 == "'" }) {
            let quote = output[open]
            let inside = output.index(after: open)
            if let close = output.lastIndex(of: quote), close > open {
                // After the echo comes SQLite's `: …` or nothing; anything else is masked too.
                let after = output.index(after: close)
                if after < output.endIndex, output[after] != ":" {
                    output.replaceSubrange(after..., with: "***")
                }
                output.replaceSubrange(inside..<close, with: "***")
            } else {
                output.replaceSubrange(inside..., with: "***")
            }
        }
        // What follows the first ": " is a name SQLite echoed (`no such column: …`, `no such
        // table: …`), and a bracketed or backquoted name can hold spaces, so the whole rest is
        // masked; only SQLite's own words after a quoted token (`near "***": syntax error`) stay.
        if let colon = output.range(of: ": ") {
            let tail = output[colon.upperBound...]
            if !tail.isEmpty && !Self.ownWords.contains(String(tail)) {
                output.replaceSubrange(colon.upperBound..., with: "***")
            }
        }
        return output
    }

    /// Tails of SQLite messages that are SQLite's own words, or already masked: kept as they are.
    private static let ownWords: Set<String> = ["syntax error", "incomplete input", "***", "\"***\"", "'***'"]

    /// A file name as it may be shown: the value of every `key`, `hexkey` and `textkey` parameter
    /// of a `file:` URI is masked (SQLCipher reads them as the attached database's key).
    static func fileName(_ name: String) -> String {
        guard mayHoldKey(name), let query = name.firstIndex(of: "?") else { return name }
        let parameters = name[name.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
        let masked = parameters.map { parameter -> String in
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, FunctionKey.fold(String(parts[0])).hasSuffix("key") else { return String(parameter) }
            return parts[0] + "=***"
        }
        return String(name[...query]) + masked.joined(separator: "&")
    }

    /// The value of `PRAGMA name = value` as it may be shown: masked for the key family.
    static func pragmaValue(name: String, value: String) -> String {
        let bare = name.split(separator: ".").last.map(String.init) ?? name
        guard hidesValue(ofPragma: bare), !value.isEmpty else { return value }
        return "***"
    }

    // MARK: Tokens

    private enum Kind { case attach, vacuum, keyPragma, other }

    /// Whether `sql` mentions `key`, `attach`, `vacuum` or `salt` in any case, or `pragma` beside a
    /// character outside ASCII: only such text is tokenized.
    static func mayHoldKey(_ sql: String) -> Bool {
        // Straight over the bytes when the string has them in one piece (a native string always
        // does): the statement cache asks this of every statement it keeps, and the string's own
        // iterator cost twice as much (docs/performance.md, "Opening").
        sql.utf8.withContiguousStorageIfAvailable { mayHoldKey($0) } ?? mayHoldKey(sql.utf8)
    }

    /// ``mayHoldKey(_:)-(String)`` for UTF-8 bytes.
    static func mayHoldKey(_ bytes: some Sequence<UInt8>) -> Bool {
        var utf8 = bytes.makeIterator()
        // A rolling window of the last eight bytes, folded to lower case, and the eight before.
        var window: UInt64 = 0
        var older: UInt64 = 0
        // A `PRAGMA` in text with a character outside ASCII may name a look-alike of `key`
        // (hidesValue(ofPragma:)).
        var pragma = false
        var outsideASCII = false
        // The first byte of a two-byte Greek or Cyrillic letter, until its second arrives.
        var lead: UInt8 = 0
        while var byte = utf8.next() {
            if byte >= 0x80 {
                outsideASCII = true
                // A Greek or Cyrillic letter that looks like a Latin one is read as that letter:
                // `КEY` (a Cyrillic `К`) mentions a key to a reader (isDisguised).
                if lead != 0, let latin = lookAlike(lead, byte) {
                    lead = 0
                    byte = latin
                } else {
                    // Any other character outside ASCII is left out, as below.
                    lead = byte == 0xCE || byte == 0xCF || byte == 0xD0 || byte == 0xD1 ? byte : 0
                    continue
                }
            } else {
                lead = 0
                // What a reader does not see inside a word is left out: `ATTA<NUL>CH` and
                // `k<U+200B>ey` mention a key to the reader (isDisguised).
                if isHidden(byte) { continue }
            }
            let folded = byte >= 65 && byte <= 90 ? byte | 0x20 : byte
            older = (older << 8) | (window >> 56)
            window = (window << 8) | UInt64(folded)
            // "key", except as the end of "foreign_key": `PRAGMA foreign_keys`, which every
            // opening runs, was redacted in full to find nothing. No spelling of a key ends so
            // (`key`, `hexkey`, `rekey`, `hexrekey`, `textkey`, a URI's `key=`), and another
            // "key" in the same text is still found.
            if window & 0xFF_FFFF == 0x6B_6579, (older & 0xFF_FFFF) << 40 | window >> 24 != 0x666F_7265_6967_6E5F {
                return true
            }
            if window & 0xFFFF_FFFF_FFFF == 0x6174_7461_6368 || window & 0xFFFF_FFFF_FFFF == 0x7661_6375_756D {
                return true  // "attach", "vacuum"
            }
            if window & 0xFFFF_FFFF == 0x7361_6C74 { return true }  // "salt": `PRAGMA cipher_salt = …`
            if window == 0x645F_7261_6E64_6F6D { return true }  // "d_random": `PRAGMA cipher_add_random = …`
            if window & 0xFFFF_FFFF_FFFF == 0x7072_6167_6D61 { pragma = true }
        }
        return pragma && outsideASCII
    }

    /// The token ranges of the pieces of a script, each ending after a `;`, so that every `;`
    /// starts a new piece. A trigger's body holds `;` inside one statement, but its pieces can only
    /// be `INSERT`, `UPDATE`, `DELETE` and `SELECT`, which are redacted alike as pieces; counting
    /// `BEGIN`, `CASE` and `END` to keep a body whole cannot work, because SQLite accepts those
    /// words as names (`SELECT 1 AS trigger, 2 AS begin; ATTACH … KEY …` would hide the `ATTACH`
    /// inside the first statement). Splitting too often only masks more; never too little.
    private static func statements(of tokens: [SQLTokenizer.Token]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        for (index, token) in tokens.enumerated() where token.isSymbol(";") {
            ranges.append(start..<(index + 1))
            start = index + 1
        }
        if start < tokens.count { ranges.append(start..<tokens.count) }
        return ranges
    }

    /// What a statement is, looked at past `EXPLAIN` and `EXPLAIN QUERY PLAN`, and the index of its
    /// head token.
    private static func classify(_ body: ArraySlice<SQLTokenizer.Token>) -> (head: Int, kind: Kind) {
        var index = body.startIndex
        if index < body.endIndex && body[index].isKeyword("EXPLAIN") {
            index += 1
            if index + 1 < body.endIndex && body[index].isKeyword("QUERY") && body[index + 1].isKeyword("PLAN") {
                index += 2
            }
        }
        guard index < body.endIndex else { return (index, .other) }
        let head = body[index]
        if head.isKeyword("ATTACH") { return (index, .attach) }
        if head.isKeyword("VACUUM") { return (index, .vacuum) }
        if head.isKeyword("PRAGMA") {
            let nameIndex = pragmaNameIndex(body, head: index)
            if nameIndex < body.endIndex, let name = body[nameIndex].identifier, hidesValue(ofPragma: name) {
                return (index, .keyPragma)
            }
        }
        return (index, .other)
    }

    /// The index of a pragma's name in `body`, whose `PRAGMA` is at `head`: the token after it, or
    /// the third after it past `schema .`.
    private static func pragmaNameIndex(_ body: ArraySlice<SQLTokenizer.Token>, head: Int) -> Int {
        head + 2 < body.endIndex && body[head + 2].isSymbol(".") ? head + 3 : head + 1
    }

    private static func isLiteral(_ token: SQLTokenizer.Token) -> Bool {
        token.kind == .string || token.kind == .blob || token.kind == .number
    }

    /// Whether a pragma of this name has a value that is never shown: the key family, the salt
    /// (`cipher_salt`, which a file with a plaintext header does not store, and which its owner
    /// keeps like a key), the entropy given to the crypto provider's random generator
    /// (`cipher_add_random`: bytes that seed the generator of the salts and IVs), and a name with a character outside ASCII, which no pragma has: a
    /// look-alike of `key` (`PRAGMA kеy = '…'` with a Cyrillic `е`), which SQLite ignores as an
    /// unknown pragma, so the statement ran and its trace event showed the key.
    static func hidesValue(ofPragma name: String) -> Bool {
        let folded = FunctionKey.fold(name)
        return CipherPragmaRule.keyPragmas.contains(folded) || folded == "cipher_salt" || folded == "cipher_add_random"
            || name.utf8.contains(where: { $0 >= 0x80 })
    }

    /// The index of the name of a pragma whose value is hidden (``hidesValue(ofPragma:)``) that
    /// a statement names after its head (`SELECT 1 PRAGMA key = '…'`, a `;` left out), or nil.
    private static func embeddedKeyPragmaName(_ body: ArraySlice<SQLTokenizer.Token>, head: Int) -> Int? {
        for index in body.indices where index > head && body[index].isKeyword("PRAGMA") {
            let name = pragmaNameIndex(body, head: index)
            if name < body.endIndex, let identifier = body[name].identifier, hidesValue(ofPragma: identifier) {
                return name
            }
        }
        return nil
    }

    /// Whether the token at `index` starts the operands of a `KEY` clause in a statement that is
    /// no `ATTACH` to its head: it follows `KEY` and is a literal or a quoted name (which no `KEY`
    /// of valid SQL other than an `ATTACH`'s is followed by), or it follows `AS name KEY`, the
    /// words that end an `ATTACH` before its key, whatever it is (`KEY secret`, `KEY (SELECT …)`).
    /// `PRIMARY KEY`, `FOREIGN KEY (…)` and a column named `key` start none.
    private static func startsKeyClause(_ body: ArraySlice<SQLTokenizer.Token>, at index: Int) -> Bool {
        guard index > body.startIndex, body[index - 1].isKeyword("KEY") else { return false }
        if [.string, .blob, .number, .quotedIdentifier].contains(body[index].kind) { return true }
        return index - 3 >= body.startIndex && body[index - 3].isKeyword("AS") && !body[index].isSymbol(";")
    }

    /// What of a `KEY` clause's operands is masked: literals, quoted names and words that are no
    /// keywords; keywords and punctuation are shown.
    private static func isKeyOperand(_ token: SQLTokenizer.Token) -> Bool {
        switch token.kind {
        case .string, .blob, .number, .quotedIdentifier: return true
        case .word: return !SQLTokenizer.keywords.contains(token.text.uppercased())
        case .variable, .symbol: return false
        }
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
                || token == "." || token == ";"
                || (token == "(" && previous.last.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "\"" } == true)
            text += (tight ? "" : " ") + token
            previous = token
        }
        return text
    }
}

extension SqlCipherError {
    /// This error with every SQL text, file name and SQLite message it carries passed through
    /// ``SQLRedaction``: the one path by which the package creates errors that hold SQL, so that
    /// `dump(error)`, `String(reflecting:)` and ``description`` never show a key.
    func redactingSQL() -> SqlCipherError {
        let text = SQLRedaction.text(of:)
        switch self {
        case let .sqlite(code, extended, message, sql):
            return .sqlite(code: code, extendedCode: extended, message: SQLRedaction.message(message, of: sql),
                           sql: sql.map(text))
        case let .argumentCountMismatch(expected, given, sql):
            return .argumentCountMismatch(expected: expected, given: given, sql: text(sql))
        case let .multipleStatements(sql): return .multipleStatements(sql: text(sql))
        case let .emptyStatement(sql): return .emptyStatement(sql: text(sql))
        case let .nulCharacterInSQL(sql, offset):
            // The offset still counts bytes of the text as given, which says where to look.
            return .nulCharacterInSQL(sql: text(sql), offset: offset)
        case let .unsafePragma(name, value, sql):
            return .unsafePragma(name: name, value: SQLRedaction.pragmaValue(name: name, value: value), sql: text(sql))
        case let .unsafeFunction(name, sql): return .unsafeFunction(name: name, sql: text(sql))
        case let .perConnectionPragma(name, sql): return .perConnectionPragma(name: name, sql: text(sql))
        case let .unsafeAttach(schema, path, encrypted, sql):
            return .unsafeAttach(schema: schema, path: SQLRedaction.fileName(path), encrypted: encrypted, sql: text(sql))
        case let .unsafeVacuumInto(sql): return .unsafeVacuumInto(sql: text(sql))
        case let .transactionControlInBody(sql): return .transactionControlInBody(sql: text(sql))
        case let .transactionRolledBack(sql): return .transactionRolledBack(sql: text(sql))
        case let .readOnlyViolation(sql): return .readOnlyViolation(sql: text(sql))
        case let .functionFailed(name, message, sql):
            return .functionFailed(name: name, message: message, sql: text(sql))
        case let .functionNotAllowedInSchema(name, sql):
            return .functionNotAllowedInSchema(name: name, sql: text(sql))
        case let .plaintextAttachmentWrite(schema, sql):
            return .plaintextAttachmentWrite(schema: schema, sql: text(sql))
        // No `default`: a new case that carries SQL must be added above, not slip through (as
        // plaintextAttachmentWrite once did: `PRAGMA plain.key = '…'` inside importPlaintext
        // showed the key). These carry no SQL text.
        case .libraryNotFound, .notSQLCipher, .bindingConflict, .missingSymbol, .unsupportedRuntime,
             .libraryAlreadyLoaded, .libraryTooOld, .emptyKey, .invalidRawKey, .keyFailed, .notPlaintextDatabase,
             .notADatabase, .cannotOpen, .plaintextDetected, .unsupported, .notEncrypted, .rekeyFailed,
             .conversionFailed, .databaseClosed, .streamPreempted, .poolRequiresWAL, .columnNotFound,
             .columnIndexOutOfRange, .typeMismatch, .connectionNotUsable, .unboundParameter, .unknownParameter,
             .invalidQuery, .invalidConfiguration, .deleteWithoutWhere, .decodingFailed, .encodingFailed,
             .migrationFailed, .unknownAppliedMigrations, .unknownMigration, .migrationNotReversible,
             .foreignKeyViolation, .schemaNotFound, .tableNotFound, .passphraseLooksLikeRawKey, .registrationFailed:
            return self
        }
    }
}
