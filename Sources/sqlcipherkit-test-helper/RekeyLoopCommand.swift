import Foundation
import SqlCipherKit

/// Opens an encrypted database with key A and rekeys it back and forth between two keys, printing
/// `key A` or `key B` after each verified rekey, until `ROUNDS` rekeys are done (or it is killed).
let rekeyLoopCommand = HelperCommand(
    name: "rekey-loop",
    usage: "rekey-loop PATH KEY_A KEY_B ROUNDS: rekeys A->B->A... (keys pass:<text> or raw:<hex>)"
) { arguments in
    guard arguments.count == 4, let rounds = Int(arguments[3]) else {
        throw DatabaseHelperError(message: "rekey-loop PATH KEY_A KEY_B ROUNDS")
    }
    let keys = [try HelperKey(arguments[1]), try HelperKey(arguments[2])]
    let db = try keys[0].open(arguments[0])
    report("opened")
    for round in 0..<rounds {
        let next = keys[(round + 1) % 2]
        try waitForDatabaseWork {
            switch next {
            case .passphrase(let text): try await db.rekey(text)
            case .raw(let bytes): try await db.rekey(rawKey: bytes)
            case .none: throw DatabaseHelperError(message: "rekey-loop needs keys")
            }
        }
        report((round + 1) % 2 == 0 ? "key A" : "key B")
    }
    return 0
}
