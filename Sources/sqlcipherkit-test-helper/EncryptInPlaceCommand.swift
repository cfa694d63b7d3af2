import Foundation
import SqlCipherKit
import Synchronization

/// Runs `Database.encryptInPlace` once, printing `start` before and `done` after, so that a parent
/// can kill it at any moment in between and check that the file is still whole. With GO_FILE, the
/// copy stops once some but not all pages are written, prints `paused COMPLETED TOTAL`, and goes
/// on when the parent creates GO_FILE (a handshake: the parent acts while the conversion runs).
let encryptInPlaceCommand = HelperCommand(
    name: "encrypt-in-place",
    usage: "encrypt-in-place PATH pass:<text>|raw:<hex> [GO_FILE]: encrypts a plaintext file where it is"
) { arguments in
    guard arguments.count == 2 || arguments.count == 3 else {
        throw DatabaseHelperError(message: "encrypt-in-place PATH KEY [GO_FILE]")
    }
    let key = try HelperKey(arguments[1]).requiredKey(by: "encrypt-in-place")
    var progress: (@Sendable (DatabaseProgress) -> Void)?
    if arguments.count == 3 {
        let goFile = arguments[2]
        let paused = Mutex(false)
        progress = { state in
            guard state.completed > 0, state.completed < state.total,
                  paused.withLock({ wasPaused in defer { wasPaused = true }; return !wasPaused }) else { return }
            report("paused \(state.completed) \(state.total)")
            while !FileManager.default.fileExists(atPath: goFile) { usleep(1000) }
        }
    }
    report("start")
    try Database.encryptInPlace(path: arguments[0], key: key, progress: progress)
    report("done")
    return 0
}
