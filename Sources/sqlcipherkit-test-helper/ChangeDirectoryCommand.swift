import Foundation
import SqlCipherKit

/// Opens a pool (`pool.db`, raw key) and a `Database` (`db.db`, passphrase `old`) by relative paths
/// in FOLDER, changes the working folder to OTHER, then reads through the pool, rekeys the
/// `Database` to `new` and backs it up to `copy.db` (relative to OTHER, where the caller now is),
/// one line each: `pool-read <count>`, `rekey ok`, `backup ok`, or `<step> error <case>: <message>`.
/// A process of its own: the working folder is the whole process's.
let changeDirectoryCommand = HelperCommand(
    name: "change-directory",
    usage: "change-directory FOLDER OTHER: opens by relative paths in FOLDER, then works from OTHER"
) { arguments in
    guard arguments.count == 2 else { throw DatabaseHelperError(message: "usage: change-directory FOLDER OTHER") }
    try enterWorkingFolder(arguments[0])
    let cipher = CipherSettings(kdfIterations: 1000)
    try runBlocking {
        let pool = try DatabasePool(path: "pool.db", rawKey: Data(repeating: 0xAB, count: 32))
        try await pool.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let db = try Database(path: "db.db", key: "old", cipher: cipher)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        try enterWorkingFolder(arguments[1])
        do {
            let count = try await pool.read { try $0.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1 }
            report("pool-read \(count)")
        } catch {
            report("pool-read error \(errorCaseName(error)): \(error)")
        }
        do {
            try await db.rekey("new")
            report("rekey ok")
        } catch {
            report("rekey error \(errorCaseName(error)): \(error)")
        }
        do {
            try await db.backup(to: "copy.db", key: "copy")
            report("backup ok")
        } catch {
            report("backup error \(errorCaseName(error)): \(error)")
        }
        await db.close()
        await pool.close()
    }
    return 0
}
