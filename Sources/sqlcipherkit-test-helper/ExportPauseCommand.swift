import Foundation
import SqlCipherKit

/// Starts `export(to:key:)` of PATH into TARGET with the same key, or `exportDecrypted(to:)`
/// with `plain`, and stops for good inside its progress closure once some but not all pages are
/// written, after printing `paused COMPLETED TOTAL`: the parent kills it there (SIGKILL), in the
/// middle of the copy, to check what a killed export leaves.
let exportPauseCommand = HelperCommand(
    name: "export-pause",
    usage: "export-pause PATH pass:<text>|raw:<hex> TARGET encrypted|plain: pauses an export halfway until killed"
) { arguments in
    guard arguments.count == 4, ["encrypted", "plain"].contains(arguments[3]) else {
        throw DatabaseHelperError(message: "usage: export-pause PATH KEY TARGET encrypted|plain")
    }
    let (path, target) = (arguments[0], arguments[2])
    let helperKey = try HelperKey(arguments[1])
    let key = try helperKey.requiredKey(by: "export-pause")
    let progress = pauseHalfwayUntilKilled
    let plain = arguments[3] == "plain"
    try runBlocking {
        let db = try helperKey.open(path)
        if plain {
            try await db.exportDecrypted(to: target, progress: progress)
        } else {
            try await db.export(to: target, key: key, progress: progress)
        }
    }
    report("done")
    return 0
}
