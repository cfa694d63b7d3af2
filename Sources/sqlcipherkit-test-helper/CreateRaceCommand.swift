import Foundation
import SqlCipherKit

/// One side of a creation race: loads the library, prints `ready`, waits at a start barrier (it
/// opens the FIFO BARRIER for reading, which blocks until the parent opens it for writing), then
/// opens a `Database` or a `DatabasePool` on PATH (missing: both sides create it at once), creates
/// table `t` if needed and commits ROWS rows `TAG-0`, `TAG-1`, ... one transaction each. Prints
/// `go NS` when past the barrier, `opened NS` when the open returned (CLOCK_MONOTONIC, comparable
/// between processes), `ack ID` after each commit returned, `done` at the end, or `error CASE
/// DESCRIPTION` and exits 1. OPTIONS (optional, comma-separated) asks for other settings than
/// the defaults: `v3` (`CipherSettings.sqlcipher3`), `header32` (a 32-byte plaintext header),
/// `rollback` (a rollback journal instead of WAL; a `Database` only).
let createRaceCommand = HelperCommand(
    name: "create-race",
    usage: "create-race PATH database|pool pass:<text>|raw:<hex>|none BARRIER TAG ROWS [v3,header32,rollback]: "
        + "races another process to create PATH"
) { arguments in
    guard [6, 7].contains(arguments.count), ["database", "pool"].contains(arguments[1]), let rows = Int(arguments[5]) else {
        throw DatabaseHelperError(message: "usage: create-race PATH database|pool KEY BARRIER TAG ROWS [OPTIONS]")
    }
    let options = Set(arguments.count == 7 ? arguments[6].split(separator: ",").map(String.init) : [])
    var settings = options.contains("v3") ? CipherSettings.sqlcipher3 : CipherSettings.default
    if options.contains("header32") { settings.plaintextHeaderSize = 32 }
    let cipher = settings
    let journal: JournalMode = options.contains("rollback") ? .rollback : .wal
    let path = arguments[0], kind = arguments[1], key = try HelperKey(arguments[2])
    let barrier = arguments[3], tag = arguments[4]
    _ = try SqlCipherLibrary.shared  // loaded before the barrier: the race is about the file
    report("ready")
    let descriptor = open(barrier, O_RDONLY)
    guard descriptor >= 0 else { throw DatabaseHelperError(message: "cannot open the barrier \(barrier)") }
    close(descriptor)
    report("go \(monotonicNanoseconds())")
    do {
        try runBlocking {
            let access: any DatabaseAccess
            let close: @Sendable () async -> Void
            switch (kind, key) {
            case ("pool", .passphrase(let text)):
                let pool = try DatabasePool(path: path, key: text, cipher: cipher)
                access = pool
                close = { await pool.close() }
            case ("pool", .raw(let bytes)):
                let pool = try DatabasePool(path: path, rawKey: bytes, cipher: cipher)
                access = pool
                close = { await pool.close() }
            case (_, .passphrase(let text)):
                let db = try Database(path: path, key: text, journalMode: journal, cipher: cipher)
                access = db
                close = { await db.close() }
            case (_, .raw(let bytes)):
                let db = try Database(path: path, rawKey: bytes, journalMode: journal, cipher: cipher)
                access = db
                close = { await db.close() }
            default:
                let db = try Database(unencryptedPath: path, journalMode: journal)
                access = db
                close = { await db.close() }
            }
            report("opened \(monotonicNanoseconds())")
            do {
                try await access.execute("CREATE TABLE IF NOT EXISTS t(id TEXT PRIMARY KEY)")
                for row in 0..<rows {
                    let id = "\(tag)-\(row)"
                    try await access.execute("INSERT INTO t(id) VALUES (?)", id)
                    report("ack \(id)")
                }
            } catch {
                await close()
                throw error
            }
            await close()
        }
        report("done")
        return 0
    } catch {
        report("error \(errorCaseName(error)) \(error)")
        return 1
    }
}

/// CLOCK_MONOTONIC in nanoseconds: one clock for every process of the machine.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
