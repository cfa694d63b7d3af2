/// Byte counts on their way to C functions whose length parameter is an `int`.
///
/// SQLite takes the length of SQL text, of bound text and of bound blobs as a 32-bit `int`
/// (https://sqlite.org/c3ref/bind_blob.html). A Swift `Int` beyond `Int32.max` does not fit, and
/// `Int32(count)` would trap and kill the process. SQLite's own answer for a value larger than it
/// accepts is `SQLITE_TOOBIG` (18), so a count that does not fit gets exactly that error, as
/// ``SqlCipherError/sqlite(code:extendedCode:message:sql:)``, before anything is handed over.
/// (Below `Int32.max`, SQLite applies its own, lower limits, by default 1,000,000,000 bytes, and
/// answers `SQLITE_TOOBIG` itself: the caller sees one error for both.)
enum CLength {
    /// `SQLITE_TOOBIG` (https://sqlite.org/rescode.html#toobig).
    static let tooBig: Int32 = 18

    /// The largest count a C `int` length can carry.
    static let maximum = Int(Int32.max)

    /// `count` bytes of a bound text or blob (or a key) as a C `int`; `kind` names it for the
    /// message, e.g. "a blob".
    /// - Throws: `SQLITE_TOOBIG` as ``SqlCipherError/sqlite(code:extendedCode:message:sql:)``
    ///   when `count` exceeds `Int32.max`.
    static func value(_ count: Int, kind: String, sql: String?) throws -> Int32 {
        guard let length = Int32(exactly: count) else {
            throw SqlCipherError.sqlite(
                code: tooBig, extendedCode: tooBig,
                message: "string or blob too big: \(kind) of \(count) bytes, where SQLite accepts at most "
                    + "\(maximum) bytes (1,000,000,000 with its default limits). Store it in smaller pieces, or "
                    + "keep it in a file and store the file's name",
                sql: sql).redactingSQL()
        }
        return length
    }

    /// `count` bytes of SQL text as a C `int`.
    /// - Throws: `SQLITE_TOOBIG` as ``SqlCipherError/sqlite(code:extendedCode:message:sql:)``
    ///   when `count` exceeds `Int32.max`; the error shows only the start of the text.
    static func sql(_ count: Int, sql: String) throws -> Int32 {
        guard let length = Int32(exactly: count) else {
            throw SqlCipherError.sqlite(
                code: tooBig, extendedCode: tooBig,
                message: "statement too long: the SQL text has \(count) bytes, and SQLite accepts at most "
                    + "\(maximum) (1,000,000,000 with its default limits). Pass large values as ? arguments "
                    + "rather than in the SQL text, or split the script",
                sql: excerpt(of: sql)).redactingSQL()
        }
        return length
    }

    /// The start of an oversized text, for an error message that must not itself be gigabytes.
    static func excerpt(of text: String) -> String {
        let head = text.utf8.prefix(200)
        return String(decoding: head, as: UTF8.self) + "… (\(text.utf8.count) bytes)"
    }
}
