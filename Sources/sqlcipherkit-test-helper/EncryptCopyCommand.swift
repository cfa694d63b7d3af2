import Foundation
import SqlCipherKit

/// Prints `start`, runs `Database.encrypt(plaintextAt: SOURCE, to: TARGET, key:)` once, and prints
/// `done`, so that a parent can kill it at any moment in between.
let encryptCopyCommand = HelperCommand(
    name: "encrypt-copy",
    usage: "encrypt-copy SOURCE TARGET pass:<text>|raw:<hex>: writes an encrypted copy of a plaintext file"
) { arguments in
    guard arguments.count == 3 else { throw DatabaseHelperError(message: "usage: encrypt-copy SOURCE TARGET KEY") }
    let key = try HelperKey(arguments[2]).requiredKey(by: "encrypt-copy")
    report("start")
    try Database.encrypt(plaintextAt: arguments[0], to: arguments[1], key: key)
    report("done")
    return 0
}
