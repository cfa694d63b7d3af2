/// How an FTS5 table splits text into the tokens it indexes and searches
/// (https://sqlite.org/fts5.html#tokenizers): the `tokenize` option of ``CreateFTS5Table``.
///
/// ```swift
/// CreateFTS5Table(TableName("notes_fts")).column("body").tokenizer(.porter(.unicode61(removeDiacritics: .remove)))
/// // CREATE VIRTUAL TABLE "notes_fts" USING fts5("body", tokenize='porter unicode61 remove_diacritics 2')
/// ```
///
/// A closed set of values, never text: the tokenizer's name and arguments are written by the
/// package, so nothing a caller passes reaches the schema unquoted. ``FTS5Pattern`` splits user
/// input by the same rule, so that each token of a pattern is one token of the table.
public struct FTS5Tokenizer: Sendable, Hashable {
    /// What `unicode61` does with diacritics (accents): `remove_diacritics`.
    public enum Diacritics: Int, Sendable, Hashable {
        /// `remove_diacritics 0`: "é" and "e" are different tokens.
        case keep = 0
        /// `remove_diacritics 1`: SQLite's original removal, which misses letters with several
        /// diacritics.
        case removeLegacy = 1
        /// `remove_diacritics 2` (SQLite 3.27): every diacritic removed, "é" matches "e"; the default
        /// of this package.
        case remove = 2
    }

    indirect enum Kind: Sendable, Hashable {
        case unicode61(Diacritics)
        case ascii
        case porter(Kind)
        case trigram(caseSensitive: Bool)
    }

    let kind: Kind

    /// `unicode61`: words of Unicode letters and digits, case-folded; SQLite's default tokenizer.
    public static func unicode61(removeDiacritics: Diacritics = .remove) -> FTS5Tokenizer {
        FTS5Tokenizer(kind: .unicode61(removeDiacritics))
    }

    /// `unicode61` with diacritics removed (`remove_diacritics 2`).
    public static var unicode61: FTS5Tokenizer { unicode61() }

    /// `ascii`: words of ASCII letters and digits, where every non-ASCII character counts as a letter;
    /// only ASCII is case-folded.
    public static var ascii: FTS5Tokenizer { FTS5Tokenizer(kind: .ascii) }

    /// `porter`: English stemming over another tokenizer ("running" matches "run").
    /// A `porter` over `porter` is the inner one.
    public static func porter(_ base: FTS5Tokenizer = .unicode61) -> FTS5Tokenizer {
        if case .porter = base.kind { return base }
        return FTS5Tokenizer(kind: .porter(base.kind))
    }

    /// `trigram` (SQLite 3.34): every sequence of three characters is a token, so a pattern matches
    /// any substring of three characters or more. Case-insensitive unless `caseSensitive`.
    public static func trigram(caseSensitive: Bool = false) -> FTS5Tokenizer {
        FTS5Tokenizer(kind: .trigram(caseSensitive: caseSensitive))
    }

    /// The value of the `tokenize` option, words separated by spaces.
    var optionValue: String { Self.words(kind).joined(separator: " ") }

    private static func words(_ kind: Kind) -> [String] {
        switch kind {
        case .unicode61(let diacritics): return ["unicode61", "remove_diacritics", String(diacritics.rawValue)]
        case .ascii: return ["ascii"]
        case .porter(let base): return ["porter"] + words(base)
        case .trigram(let caseSensitive): return ["trigram", "case_sensitive", caseSensitive ? "1" : "0"]
        }
    }

    /// The oldest SQLite that has this tokenizer with these arguments, with what needs it: nil when
    /// every SQLite with FTS5 has it.
    var requirement: (feature: String, sqlite: Int)? {
        switch kind {
        case .unicode61(.remove): return ("the unicode61 tokenizer with remove_diacritics 2", 3_027_000)
        case .unicode61, .ascii: return nil
        case .porter(let base): return FTS5Tokenizer(kind: base).requirement
        case .trigram: return ("the trigram tokenizer", 3_034_000)
        }
    }

    /// How user input is split into tokens for ``FTS5Pattern``: the rule of the innermost tokenizer.
    var splitting: FTS5Pattern.Splitting {
        switch kind {
        case .unicode61: return .unicode61
        case .ascii: return .ascii
        case .porter(let base): return FTS5Tokenizer(kind: base).splitting
        case .trigram: return .whitespace
        }
    }
}
