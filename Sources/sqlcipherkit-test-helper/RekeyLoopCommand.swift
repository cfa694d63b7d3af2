import Foundation
import SqlCipherKit

/// Opens an encrypted database with key A and rekeys it back and forth between two keys, printing
/// `key A` or `key B` after each verified rekey, until `ROUNDS` rekeys are done (or it is killed).
/// With `JOURNAL`, the connection is first switched to that journal mode with SQL (as a user may,
/// `OFF` or `MEMORY`) and given a 10-page cache, so that rewritten pages reach the file early.
/// With `pool` instead, a `DatabasePool` (raw keys) is rekeyed, while a task reads on its readers.
let rekeyLoopCommand = HelperCommand(
    name: "rekey-loop",
    usage: "rekey-loop PATH KEY_A KEY_B ROUNDS [JOURNAL]: rekeys A->B->A... (keys pass:<text> or raw:<hex>)"
) { arguments in
    guard arguments.count == 4 || arguments.count == 5, let rounds = Int(arguments[3]) else {
        throw DatabaseHelperError(message: "rekey-loop PATH KEY_A KEY_B ROUNDS [JOURNAL]")
    }
    let keys = [try HelperKey(arguments[1]), try HelperKey(arguments[2])]
    if arguments.count == 5 && arguments[4] == "pool" {
        return try rekeyPool(arguments[0], keys: keys, rounds: rounds)
    }
    let db = try keys[0].open(arguments[0])
    if arguments.count == 5 {
        let journal = arguments[4]
        try waitForDatabaseWork {
            _ = try await db.query("PRAGMA journal_mode = \(journal)")
            try await db.execute("PRAGMA cache_size = 10")
        }
    }
    report("opened")
    for round in 0..<rounds {
        let next = keys[(round + 1) % 2]
        try waitForDatabaseWork {
            switch next {
            case .passphrase(let text): try await db.rekey(.passphrase(text))
            case .raw(let bytes): try await db.rekey(rawKey: bytes)
            case .none: throw DatabaseHelperError(message: "rekey-loop needs keys")
            }
        }
        report((round + 1) % 2 == 0 ? "key A" : "key B")
    }
    return 0
}

/// The `pool` form of rekey-loop: raw keys only; a task reads on the readers between rekeys.
private func rekeyPool(_ path: String, keys: [HelperKey], rounds: Int) throws -> Int32 {
    let raw = try keys.map { key -> Data in
        guard case .raw(let bytes) = key else { throw DatabaseHelperError(message: "rekey-loop pool needs raw keys") }
        return bytes
    }
    let pool = try DatabasePool(path: path, rawKey: raw[0])
    let reading = Task.detached {
        while !Task.isCancelled { _ = try? await pool.query("SELECT count(*) FROM t") }
    }
    report("opened")
    for round in 0..<rounds {
        try waitForDatabaseWork { try await pool.rekey(rawKey: raw[(round + 1) % 2]) }
        report((round + 1) % 2 == 0 ? "key A" : "key B")
    }
    reading.cancel()
    return 0
}
