import Foundation
import SqlCipherKit

/// Opens PATH (in the journal mode it has; WAL for a new file) and holds a lock on it until
/// killed: `exclusive` begins an exclusive transaction and writes in it (in rollback mode no other
/// connection can read), `read` begins a transaction and reads in it (a shared lock in rollback
/// mode; in WAL mode a snapshot that keeps checkpoints from copying later commits). Prints `held` once the lock is taken: the parent
/// runs what must meet the lock, then kills this process (SIGKILL), which rolls the write back.
let holdLockCommand = HelperCommand(
    name: "hold-lock",
    usage: "hold-lock PATH pass:<text>|raw:<hex>|none exclusive|read: holds a lock on PATH until killed"
) { arguments in
    guard arguments.count == 3, ["exclusive", "read"].contains(arguments[2]) else {
        throw DatabaseHelperError(message: "usage: hold-lock PATH KEY exclusive|read")
    }
    let path = arguments[0], exclusive = arguments[2] == "exclusive"
    let key = try HelperKey(arguments[1])
    try waitForDatabaseWork {
        let db = try key.open(path)
        if exclusive {
            try await db.execute("BEGIN EXCLUSIVE")
            try await db.execute("CREATE TABLE IF NOT EXISTS hold_lock_marker(x)")
        } else {
            try await db.execute("BEGIN")
            _ = try await db.query("SELECT count(*) FROM sqlite_master")
        }
        report("held")
        while true { sleep(60) }  // until the parent's SIGKILL
    }
    return 0
}
