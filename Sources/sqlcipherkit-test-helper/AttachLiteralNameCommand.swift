import Foundation
import SqlCipherKit

/// Works from FOLDER: opens `main.db` (passphrase `main key`, rollback journal) by a relative
/// path, runs `ATTACH 'NAME' AS other KEY 'a key'`, and prints `attach ok`, or `attach error
/// CASE PATH: MESSAGE` for a refusal that names a path (`cannotOpen`), else `attach error CASE:
/// MESSAGE`. A process of its own: SQLite reads a `file:` name that it does not take for a URI as
/// a file of that name in the working folder, which is the whole process's.
let attachLiteralNameCommand = HelperCommand(
    name: "attach-literal-name",
    usage: "attach-literal-name FOLDER NAME: ATTACHes NAME, as written, from FOLDER"
) { arguments in
    guard arguments.count == 2 else { throw DatabaseHelperError(message: "usage: attach-literal-name FOLDER NAME") }
    try enterWorkingFolder(arguments[0])
    let name = arguments[1].replacingOccurrences(of: "'", with: "''")
    try runBlocking {
        let db = try Database(path: "main.db", key: "main key", journalMode: .rollback, cipher: CipherSettings(kdfIterations: 1000))
        do {
            try await db.execute("ATTACH '\(name)' AS other KEY 'a key'")
            report("attach ok")
        } catch SqlCipherError.cannotOpen(let path, let reason) {
            report("attach error cannotOpen \(path): \(reason)".replacingOccurrences(of: "\n", with: " "))
        } catch {
            report("attach error \(errorCaseName(error)): \(error)".replacingOccurrences(of: "\n", with: " "))
        }
        await db.close()
    }
    return 0
}
