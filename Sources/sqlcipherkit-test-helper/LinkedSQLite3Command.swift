import Foundation
import SqlCipherKit

/// The "libsqlite3 linked" scenario (and, run with LD_PRELOAD, "libsqlite3 preloaded"): plaintext
/// work through the linked libsqlite3 before the bridge loads, encrypted work through SqlCipherKit,
/// then plaintext work again, in one process. Prints one JSON line of facts; the parent verifies
/// the files it leaves in DIR (plain-before.db, plain-after.db, encrypted.db).
let linkedSQLite3Command = HelperCommand(
    name: "linked-sqlite3",
    usage: "linked-sqlite3 DIR RAWKEYHEX MARKER: libsqlite3 and SqlCipherKit side by side, before and after the load"
) { arguments in
    guard arguments.count == 3 else { throw LinkingHelperError("usage: linked-sqlite3 DIR RAWKEYHEX MARKER") }
    let directory = arguments[0], key = try helperBytes(fromHex: arguments[1]), marker = arguments[2]
    guard marker.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
        throw LinkingHelperError("the marker must be letters, digits and dashes")
    }
    let plainBefore = directory + "/plain-before.db", plainAfter = directory + "/plain-after.db"
    let encrypted = directory + "/encrypted.db"
    var facts: [String: Any] = ["libsqlite3_version": PlainSQLite.version]

    // Before the bridge loads: libsqlite3 writes a plaintext file.
    try PlainSQLite.run(plainBefore, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('\(marker)-plain')")
    facts["sqlite_libraries_before_load"] = SqlCipherLibrary.sqliteLibrariesInProcess.map(\.path)

    let library = try SqlCipherLibrary.shared
    facts["cipher_version"] = library.cipherVersion
    facts["sqlite_version"] = library.sqliteVersion
    facts["library_path"] = library.path
    facts["checked"] = library.bindingAudit.checked
    facts["checked_sqlite3"] = library.bindingAudit.sqlite3Checked
    facts["checked_sqlcipher"] = library.bindingAudit.sqlcipherChecked
    facts["checked_other"] = library.bindingAudit.otherChecked
    facts["foreign"] = library.bindingAudit.foreign.count
    facts["other_libraries"] = library.otherSQLiteLibraries.map(\.path)

    // SqlCipherKit writes an encrypted file.
    try runBlocking {
        let db = try Database(path: encrypted, rawKey: key, journalMode: .rollback)
        try await db.execute("CREATE TABLE t(v TEXT)")
        try await db.execute("INSERT INTO t VALUES (?)", "\(marker)-encrypted")
        await db.close()
    }

    // After the load: libsqlite3 still reads and writes plaintext, and cannot read the encrypted file.
    facts["plain_before_read_after_load"] = try PlainSQLite.run(plainBefore, "SELECT v FROM t").first?.first ?? ""
    try PlainSQLite.run(plainAfter, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('\(marker)-after')")
    do {
        try PlainSQLite.run(encrypted, "SELECT count(*) FROM sqlite_master")
        facts["libsqlite3_on_encrypted"] = "readable"
    } catch let error as PlainSQLiteError {
        facts["libsqlite3_on_encrypted"] = "error \(error.code)"
    }
    // SqlCipherKit reads the plaintext file libsqlite3 wrote, and the encrypted one with its key.
    let readPlain: String = try runBlocking {
        let db = try Database(unencryptedPath: plainAfter, journalMode: .rollback)
        let value = try await db.query("SELECT v FROM t").first?.get("v", as: String.self) ?? ""
        await db.close()
        return value
    }
    facts["sqlcipherkit_reads_plain"] = readPlain
    let readEncrypted: String = try runBlocking {
        let db = try Database(path: encrypted, rawKey: key)
        let value = try await db.query("SELECT v FROM t").first?.get("v", as: String.self) ?? ""
        await db.close()
        return value
    }
    facts["sqlcipherkit_reads_encrypted"] = readEncrypted
    reportJSON(facts)
    return 0
}
