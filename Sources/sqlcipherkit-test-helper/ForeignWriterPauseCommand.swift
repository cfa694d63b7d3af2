import CSqlCipherTestVFS
import Foundation
import SqlCipherKit

/// Opens a new encrypted `Database` or `DatabasePool` (or, for `plain`, a `Database` opened with
/// `unencryptedPath:`) on PATH (missing) and pauses the opening
/// inside SQLite's open of the file it has just created, before anything is read or written:
/// prints `ready`, waits at the FIFO GATE (open for reading blocks until the parent opens it for
/// writing), then goes on. The parent writes the file meanwhile with another program, one that
/// does not take SqlCipherKit's creation lock (a plaintext libsqlite3, the `sqlcipher` shell). Prints `opened` or
/// `error CASE DESCRIPTION`.
let foreignWriterPauseCommand = HelperCommand(
    name: "foreign-writer-pause",
    usage: "foreign-writer-pause PATH database|pool|plain RAWKEYHEX GATE: creates PATH, pausing at the gate right after "
        + "the file is created"
) { arguments in
    guard arguments.count == 4, ["database", "pool", "plain"].contains(arguments[1]) else {
        throw HelperUsageError(message: "usage: foreign-writer-pause PATH database|pool|plain RAWKEYHEX GATE")
    }
    let path = arguments[0], kind = arguments[1], key = try helperBytes(fromHex: arguments[2])
    _ = try SqlCipherLibrary.shared
    guard sctv_register(1) == 0 else { throw HelperUsageError(message: "cannot register the test VFS") }
    sctv_pause_at_next_main_open({ gate in
        report("ready")
        guard let gate else { return }
        let descriptor = open(gate, O_RDONLY)
        if descriptor >= 0 { close(descriptor) }
    }, arguments[3])
    do {
        try runBlocking {
            if kind == "pool" {
                let pool = try DatabasePool(path: path, rawKey: key)
                await pool.close()
            } else if kind == "plain" {
                let db = try Database(unencryptedPath: path)
                await db.close()
            } else {
                let db = try Database(path: path, rawKey: key)
                await db.close()
            }
        }
        report("opened")
        return 0
    } catch {
        report("error \(errorCaseName(error)) \(error)")
        return 1
    }
}
