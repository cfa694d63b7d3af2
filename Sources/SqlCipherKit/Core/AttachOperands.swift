import Foundation

/// What the text of an `ATTACH` names, read from the statement's text with its bound values
/// written in (`sqlite3_expanded_sql`): the file, when one string literal names it, and whether a
/// `KEY` clause gives the empty literal (no encryption). Read from the bytes in place: the text can
/// hold a bound key, so nothing of it is copied but the file name.
///
/// A file named by an expression (`'a' || '.db'`, a function call) is not told (`file` nil,
/// `isAttach` true).
struct AttachOperands {
    /// Whether the text is an `ATTACH` statement at all.
    var isAttach = false
    /// The file name as SQLite receives it (a `file:` URI is left as written), or nil. SQLite
    /// takes a name in identifier form (`ATTACH other AS o`, `"other.db"`, `[other.db]`) as the
    /// text of the name (attach.c's resolveAttachExpr), so those name the file too.
    var file: String?
    /// Whether the statement has a `KEY` clause.
    var hasKeyClause = false
    /// Whether that clause gives the empty literal `''`: SQLCipher then attaches without a codec.
    var keyIsEmpty = false

    /// Reads `text`, which starts with the statement (whitespace and comments first are skipped).
    init(_ text: UnsafeBufferPointer<UInt8>) {
        var scanner = Scanner(bytes: text)
        guard scanner.keyword("ATTACH") else { return }
        isAttach = true
        _ = scanner.keyword("DATABASE")
        guard let name = scanner.stringLiteral()?.bytes ?? scanner.identifier() else { return }
        guard scanner.keyword("AS") else { return }
        file = String(decoding: name, as: UTF8.self)
        guard scanner.skipName() else { return }
        guard scanner.keyword("KEY") else { return }
        hasKeyClause = true
        if scanner.stringLiteral(copying: false)?.length == 0, scanner.atStatementEnd() { keyIsEmpty = true }
    }

    /// A cursor over SQL text that knows whitespace, comments, keywords, names and string literals.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        private func byte(_ offset: Int = 0) -> UInt8? {
            index + offset < bytes.count ? bytes[index + offset] : nil
        }

        /// Skips what SQLite skips between tokens: whitespace, comments and UTF-8 byte-order marks.
        mutating func skipSpace() {
            while let current = byte() {
                if current == 0x20 || (0x09...0x0D).contains(current) {
                    index += 1
                } else if current == 0xEF, byte(1) == 0xBB, byte(2) == 0xBF {
                    index += 3
                } else if current == UInt8(ascii: "-"), byte(1) == UInt8(ascii: "-") {
                    while let next = byte(), next != 0x0A { index += 1 }
                } else if current == UInt8(ascii: "/"), byte(1) == UInt8(ascii: "*") {
                    index += 2
                    while byte() != nil, !(byte() == UInt8(ascii: "*") && byte(1) == UInt8(ascii: "/")) { index += 1 }
                    index = min(bytes.count, index + 2)
                } else {
                    return
                }
            }
        }

        private static func isNameByte(_ byte: UInt8) -> Bool {
            byte >= 0x80 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
                || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }

        /// Consumes `word` (any case) when it comes next as a whole word.
        mutating func keyword(_ word: StaticString) -> Bool {
            skipSpace()
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] | 0x20 != word.utf8Start[offset] | 0x20 {
                return false
            }
            if let after = byte(count), Self.isNameByte(after) { return false }
            index += count
            return true
        }

        /// Consumes one name: a bare word, one quoted with `"`, `` ` `` or `[`, or a string
        /// literal (SQLite takes `'name'` where a name belongs).
        mutating func skipName() -> Bool {
            identifier() != nil || stringLiteral(copying: false) != nil
        }

        /// Consumes one identifier, bare or quoted with `"`, `` ` `` or `[`, and returns its text
        /// (a doubled quote inside as one), or nil when none comes next.
        mutating func identifier() -> [UInt8]? {
            skipSpace()
            guard let first = byte() else { return nil }
            let closing: UInt8? = switch first {
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "`"): UInt8(ascii: "`")
            case UInt8(ascii: "["): UInt8(ascii: "]")
            default: nil
            }
            guard let closing else {
                let start = index
                while let current = byte(), Self.isNameByte(current) { index += 1 }
                return index > start ? Array(bytes[start..<index]) : nil
            }
            index += 1
            var value: [UInt8] = []
            while let current = byte() {
                index += 1
                if current == closing {
                    guard closing != UInt8(ascii: "]"), byte() == closing else { return value }
                    index += 1
                }
                value.append(current)
            }
            return nil
        }

        /// Consumes a string literal and returns its length and, when `copying`, its bytes (`''`
        /// inside as one quote), or nil when none comes next. A key's literal is only measured.
        mutating func stringLiteral(copying: Bool = true) -> (bytes: [UInt8], length: Int)? {
            skipSpace()
            guard byte() == UInt8(ascii: "'") else { return nil }
            index += 1
            var value: [UInt8] = []
            var count = 0
            while let current = byte() {
                index += 1
                if current == UInt8(ascii: "'") {
                    guard byte() == UInt8(ascii: "'") else { return (value, count) }
                    index += 1
                }
                count += 1
                if copying { value.append(current) }
            }
            return nil
        }

        /// Whether nothing but whitespace, comments and `;` follow.
        mutating func atStatementEnd() -> Bool {
            skipSpace()
            while byte() == UInt8(ascii: ";") {
                index += 1
                skipSpace()
            }
            return byte() == nil
        }
    }
}
