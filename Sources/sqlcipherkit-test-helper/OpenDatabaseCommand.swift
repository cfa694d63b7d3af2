import Foundation
import SqlCipherKit

/// Opens a database and reports the outcome on one line, optionally running one SQL statement:
/// `opened readOnly=<bool> journal=<mode>` then `executed` or `error <case>: <message>`.
/// Used for what needs a process of its own: SQLCipher's stderr output, and files and folders
/// without permission (the parent runs this command as an unprivileged user). With `--read-only`
/// first, the database is opened with `readOnly: true`.
let openDatabaseCommand = HelperCommand(
    name: "open-database",
    usage: "open-database [--read-only] [--salt <32 hex>] PATH pass:<text>|raw:<hex>|none [SQL]: opens, reports, "
        + "optionally runs SQL"
) { arguments in
    var arguments = arguments
    let readOnly = arguments.first == "--read-only"
    if readOnly { arguments.removeFirst() }
    // `--salt`: the passphrase is given with this salt (DatabaseKey.passphrase(_:salt:)).
    var salt: Data?
    if arguments.first == "--salt", arguments.count >= 2 {
        guard case .raw(let bytes) = try HelperKey("raw:" + arguments[1]) else { throw DatabaseHelperError(message: "--salt") }
        salt = bytes
        arguments.removeFirst(2)
    }
    guard arguments.count >= 2 else {
        throw DatabaseHelperError(message: "open-database [--read-only] [--salt HEX] PATH KEY [SQL]")
    }
    let key = try HelperKey(arguments[1])
    let db: Database
    do {
        if let salt, case .passphrase(let text) = key {
            db = try Database(path: arguments[0], key: .passphrase(text, salt: salt), readOnly: readOnly)
        } else {
            db = try key.open(arguments[0], readOnly: readOnly)
        }
    } catch {
        report("error \(errorCaseName(error)): \(error)")
        return 0
    }
    report("opened readOnly=\(db.isReadOnly) journal=\(db.journalMode.rawValue)")
    if arguments.count > 2 {
        let sql = arguments[2]
        do {
            _ = try waitForDatabaseWork { try await db.execute(sql) }
            report("executed")
        } catch {
            report("error \(errorCaseName(error)): \(error)")
        }
    }
    return 0
}
