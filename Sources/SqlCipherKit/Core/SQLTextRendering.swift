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
