import Foundation

// How SQL text held inside a connection prints (the key types: Keys/KeyRendering.swift). A
// prepared statement and the statement cache's keys are shown redacted: a statement whose text
// carries a key is never cached (SQLiteConnection.cachedStatement), but one can be in flight (a
// stream's statement) while something dumps the database.

extension Statement: CustomReflectable {
    @usableFromInline var customMirror: Mirror { Mirror(self, children: ["sql": SQLRedaction.text(of: sql)], displayStyle: .class) }
}

extension SQLText: CustomStringConvertible, CustomReflectable {
    var description: String { SQLRedaction.text(of: text) }
    var customMirror: Mirror { Mirror(self, children: ["text": SQLRedaction.text(of: text)], displayStyle: .struct) }
}

// SQL text with its values, held in a value the caller keeps (an `SQL` literal, a rendered
// `SQLFragment`, the query of a stream or a live request), prints by the same rule as a trace
// event: the text through `SQLRedaction`, the values only when the text is not one whose values
// can be key material (`SQLRedaction.hidesArguments`: an `ATTACH … KEY ?`, a `VACUUM INTO ?`).
extension SQLRedaction {
    /// What a description shows in place of values that are never shown.
    static let hiddenValues = "<values not shown: the statement can carry key material>"

    /// `sql` and `values` as one line: the redacted text, then the values when they may be shown.
    static func line(_ sql: String, values: [DatabaseValue]) -> String {
        let text = text(of: sql)
        guard !values.isEmpty else { return text }
        return text + "  " + (hidesArguments(of: sql) ? hiddenValues : values.description)
    }

    /// The values (or arguments) of `sql` as a mirror child: themselves, or ``hiddenValues``.
    static func mirrored(_ values: Any, of sql: String) -> Any {
        hidesArguments(of: sql) ? hiddenValues : values
    }

    /// The mirror children of a query held as text and its arguments (a stream's, a live
    /// request's): the redacted text, and the arguments where they may be shown.
    static func children(sql: String, arguments: Any) -> [Mirror.Child] {
        [(label: "sql", value: text(of: sql)), (label: "arguments", value: mirrored(arguments, of: sql))]
    }
}

extension QuerySource: CustomReflectable {
    var customMirror: Mirror {
        switch self {
        case let .sql(sql, arguments):
            return Mirror(self, children: SQLRedaction.children(sql: sql, arguments: arguments), displayStyle: .enum)
        case let .fragment(fragment, bindings):
            return Mirror(self, children: ["fragment": fragment,
                                           "bindings": SQLRedaction.mirrored(bindings, of: fragment.sql)], displayStyle: .enum)
        case let .literal(_, sql):
            return Mirror(self, children: ["literal": sql], displayStyle: .enum)
        }
    }
}
