import Foundation
import SqlCipherKit

/// Opens (or creates) the encrypted database at PATH and imports the plaintext file at PLAIN
/// through `importPlaintext(from:)`, counting the rows of its table TABLE; prints
/// `imported <count>` or `error <case>: <message>`. In a process of its own, so that a parent can
/// bound with `timeout` a case that once waited forever (a named pipe beside the plaintext file).
let importPlaintextCommand = HelperCommand(
    name: "import-plaintext",
    usage: "import-plaintext PATH pass:<text>|raw:<hex> PLAIN TABLE: imports from a plaintext file, reports the count"
) { arguments in
    guard arguments.count == 4 else { throw DatabaseHelperError(message: "usage: import-plaintext PATH KEY PLAIN TABLE") }
    let (plain, table) = (arguments[2], arguments[3])
    do {
        let db = try HelperKey(arguments[1]).open(arguments[0])
        let count = try waitForDatabaseWork {
            let count = try await db.importPlaintext(from: plain) { conn in
                try conn.query("SELECT count(*) FROM plain.\"\(table)\"")[0].get(0, as: Int.self) ?? -1
            }
            await db.close()
            return count
        }
        report("imported \(count)")
    } catch {
        report("error \(errorCaseName(error)): \(error)")
    }
    return 0
}
