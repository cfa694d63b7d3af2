import Foundation
import SqlCipherKit

/// Runs `Database.encryptInPlace` once, printing `start` before and `done` after, so that a parent
/// can kill it at any moment in between and check that the file is still whole.
let encryptInPlaceCommand = HelperCommand(
    name: "encrypt-in-place",
    usage: "encrypt-in-place PATH pass:<text>|raw:<hex>: encrypts a plaintext file where it is"
) { arguments in
    guard arguments.count == 2 else { throw DatabaseHelperError(message: "encrypt-in-place PATH KEY") }
    let key = try HelperKey(arguments[1]).requiredKey(by: "encrypt-in-place")
    report("start")
    try Database.encryptInPlace(path: arguments[0], key: key)
    report("done")
    return 0
}
