/// Something opened inside a body that must not outlive it (a ``Cursor``).
protocol BodyScoped: AnyObject {
    /// Releases what it holds (its statement) and refuses any later use.
    func bodyDidEnd()
}

/// The bodies a connection runs now (a `transaction`, `savepoint` or `read` closure, nested
/// savepoints included), innermost last, with what each opened.
///
/// A body's number is handed to the ``Connection`` it receives and to every cursor opened through
/// that connection, so a cursor knows when its body has ended even if a reference to it survives
/// (Swift cannot forbid that for a class), and the connection can release the cursor's statement
/// at the body's end instead of leaving a read open until the cursor is freed.
struct BodyStack {
    private var open: [UInt64] = []
    private var last: UInt64 = 0
    private var scoped: [(body: UInt64, object: Weak)] = []

    private struct Weak {
        weak var object: (any BodyScoped)?
    }

    /// Opens a body and returns its number.
    mutating func push() -> UInt64 {
        last &+= 1
        open.append(last)
        return last
    }

    /// Closes body `id` (the innermost) and returns what it opened, for the caller to release.
    mutating func pop(_ id: UInt64) -> [any BodyScoped] {
        if open.last == id { open.removeLast() } else { open.removeAll { $0 == id } }
        var ended: [any BodyScoped] = []
        scoped.removeAll { entry in
            guard entry.body == id else { return entry.object.object == nil }
            if let object = entry.object.object { ended.append(object) }
            return true
        }
        return ended
    }

    /// The innermost running body, 0 outside every body (a number no body has).
    var innermost: UInt64 { open.last ?? 0 }

    /// Whether body `id` is still running.
    func isOpen(_ id: UInt64) -> Bool {
        open.contains(id)
    }

    /// Remembers `object` as opened by body `id`.
    mutating func register(_ object: any BodyScoped, in id: UInt64) {
        scoped.append((id, Weak(object: object)))
    }
}

extension SQLiteConnection {
    /// Runs the user's body of a transaction, savepoint or read: the one place where a body
    /// begins and ends.
    ///
    /// - Its SQL is the user's again, even inside the package's own stretch, and transaction
    ///   control is refused in it (SQLiteConnection+Guards.swift).
    /// - What it opens (cursors) ends with it: their statements are released when it returns.
    /// - With `readOnly`, every statement that would write is refused before it runs
    ///   (``SqlCipherError/readOnlyViolation(sql:)``).
    /// - With `transactional` (the body runs in a transaction or savepoint the caller opened), no
    ///   statement runs once that transaction is gone (``refuseStatementsAfterRollback()``).
    func runBody<T>(readOnly: Bool = false, transactional: Bool = false, _ body: () throws -> T) rethrows -> T {
        try scope.with(.body(readOnly: readOnly, transactional: transactional)) {
            let id = bodies.push()
            defer {
                for object in bodies.pop(id) { object.bodyDidEnd() }
            }
            return try body()
        }
    }

    /// Calls `body` with a ``Connection`` lent for the innermost running body (see
    /// ``runBody(readOnly:_:)``), to which the cursors it opens belong.
    func lend<T>(_ body: (borrowing Connection) throws -> T) rethrows -> T {
        assertIsolated()
        // A named local, not a temporary: Swift 6.3.1 crashes in release builds
        // (GenericSpecializer, "Cannot initialize a nonCopyable type with a guaranteed value")
        // when the ~Copyable Connection is built inline as the argument.
        let connection = Connection(self, body: bodies.innermost)
        return try body(connection)
    }

    /// Throws before a statement runs inside a transactional body whose transaction SQLite has
    /// already ended.
    ///
    /// SQLite rolls back the whole transaction by itself when a write is interrupted (a
    /// cancellation) or fails in some ways (a full disk, an I/O error), and the connection is back
    /// in autocommit mode. A body that caught that error and went on would then commit each later
    /// statement on its own, while the call reports a failure. So every statement, the package's
    /// own `SAVEPOINT` of a nested savepoint included, is refused until the body ends.
    func refuseStatementsAfterRollback(_ statement: Statement) throws {
        guard scope.isTransactionalBody, !isInTransaction else { return }
        if interruptGate.isCancellingCurrentCall { throw CancellationError() }
        throw SqlCipherError.transactionRolledBack(sql: statement.sql).redactingSQL()
    }
}
