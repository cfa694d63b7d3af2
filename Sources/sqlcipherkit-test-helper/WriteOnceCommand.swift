import Foundation
import SqlCipherKit

/// Opens PATH with a busy timeout of BUSY_MS milliseconds, runs one SQL statement, and prints
/// `written` or `error <case>: <message>`: another process's write at a moment the parent chooses
/// (from inside a trace callback, say), which gives up soon when the parent holds the write lock.
let writeOnceCommand = HelperCommand(
    name: "write-once",
    usage: "write-once PATH pass:<text>|raw:<hex>|none BUSY_MS SQL: runs one statement with a short busy timeout"
) { arguments in
    guard arguments.count == 4, let milliseconds = Int(arguments[2]) else {
        throw DatabaseHelperError(message: "usage: write-once PATH KEY BUSY_MS SQL")
    }
    var configuration = DatabaseConfiguration()
    configuration.busyTimeout = .milliseconds(milliseconds)
    let (path, sql) = (arguments[0], arguments[3])
    do {
        let db: Database
        switch try HelperKey(arguments[1]) {
        case .passphrase(let text): db = try Database(path: path, key: text, configuration: configuration)
        case .raw(let bytes): db = try Database(path: path, rawKey: bytes, configuration: configuration)
        case .none: db = try Database(unencryptedPath: path, configuration: configuration)
        }
        try waitForDatabaseWork {
            try await db.execute(sql)
            await db.close()
        }
        report("written")
    } catch {
        report("error \(errorCaseName(error)): \(error)")
    }
    return 0
}
