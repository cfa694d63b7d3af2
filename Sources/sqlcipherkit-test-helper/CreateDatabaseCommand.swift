import Foundation
import SqlCipherKit

/// Creates an encrypted database with a raw key and salt, in a given journal mode and with or
/// without a plaintext header, through the library SQLCIPHERKIT_LIBRARY names (a fake library in
/// the tests), then writes and reads back one row. Prints one JSON line:
/// `{"outcome": "created", "journal": ..., "read_back": ...}` or `{"outcome": "error", "case": ..., ...}`.
let createDatabaseCommand = HelperCommand(
    name: "create-database",
    usage: "create-database PATH wal|rollback HEADERSIZE RAWKEYHEX SALTHEX VALUE: creates, writes VALUE, reads it back"
) { arguments in
    guard arguments.count == 6, let mode = JournalMode(rawValue: arguments[1]), let header = Int(arguments[2]) else {
        throw LinkingHelperError("usage: create-database PATH wal|rollback HEADERSIZE RAWKEYHEX SALTHEX VALUE")
    }
    let path = arguments[0], key = try helperBytes(fromHex: arguments[3]), salt = try helperBytes(fromHex: arguments[4])
    let value = arguments[5]
    let cipher = header > 0 ? CipherSettings(plaintextHeaderSize: header) : .default
    do {
        let readBack: String = try runBlocking {
            let db = try Database(path: path, key: .rawKey(key, salt: salt), journalMode: mode, cipher: cipher)
            do {
                try await db.execute("CREATE TABLE t(v TEXT)")
                try await db.execute("INSERT INTO t VALUES (?)", value)
                let read = try await db.query("SELECT v FROM t").first?.get("v", as: String.self) ?? ""
                await db.close()
                return read
            } catch {
                await db.close()
                throw error
            }
        }
        reportJSON(["outcome": "created", "journal": mode.rawValue, "read_back": readBack])
        return 0
    } catch {
        reportJSON(loadErrorFields(error).merging(["outcome": "error"]) { $1 })
        return 1
    }
}
