import Foundation
import SqlCipherKit

/// Opens PATH (a `Database` or a `DatabasePool`), prints `start`, makes one hot backup into TARGET
/// with the same key, a few pages per step, and prints `done` (or `error <case>: <message>`), so
/// that a parent can kill it at any moment of the copy, its verification or its publication.
let backupRunCommand = HelperCommand(
    name: "backup-run",
    usage: "backup-run PATH database|pool pass:<text>|raw:<hex> TARGET: one hot backup, start to done"
) { arguments in
    guard arguments.count == 4, ["database", "pool"].contains(arguments[1]) else {
        throw DatabaseHelperError(message: "usage: backup-run PATH database|pool KEY TARGET")
    }
    let (path, kind, target) = (arguments[0], arguments[1], arguments[3])
    let helperKey = try HelperKey(arguments[2])
    let key = try helperKey.requiredKey(by: "backup-run")
    do {
        try runBlocking {
            if kind == "pool" {
                let pool = try DatabasePool(path: path, key: key)
                report("start")
                try await pool.backup(to: target, key: key, pagesPerStep: 8)
                await pool.close()
            } else {
                let db = try helperKey.open(path)
                report("start")
                try await db.backup(to: target, key: key, pagesPerStep: 8)
                await db.close()
            }
        }
    } catch {
        report("error \(errorCaseName(error)): \(error)")
        return 1
    }
    report("done")
    return 0
}
