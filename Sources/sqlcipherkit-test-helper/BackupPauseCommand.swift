import Foundation
import SqlCipherKit

/// Starts a hot backup of PATH (a `Database` or a `DatabasePool`) into TARGET with the same key,
/// one page per step, and stops for good inside its progress closure once some but not all pages
/// are copied, after printing `paused COMPLETED TOTAL`: the parent kills it there (SIGKILL), in
/// the middle of the copy, to check what a killed backup leaves.
let backupPauseCommand = HelperCommand(
    name: "backup-pause",
    usage: "backup-pause PATH database|pool pass:<text>|raw:<hex> TARGET: pauses a hot backup halfway until killed"
) { arguments in
    guard arguments.count == 4, ["database", "pool"].contains(arguments[1]) else {
        throw DatabaseHelperError(message: "usage: backup-pause PATH database|pool KEY TARGET")
    }
    let (path, kind, target) = (arguments[0], arguments[1], arguments[3])
    let helperKey = try HelperKey(arguments[2])
    let key = try helperKey.requiredKey(by: "backup-pause")
    let progress = pauseHalfwayUntilKilled
    try runBlocking {
        if kind == "pool" {
            let pool = try DatabasePool(path: path, key: key)
            try await pool.backup(to: target, key: key, pagesPerStep: 1, progress: progress)
        } else {
            let db = try helperKey.open(path)
            try await db.backup(to: target, key: key, pagesPerStep: 1, progress: progress)
        }
    }
    report("done")
    return 0
}
