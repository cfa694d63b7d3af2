import Foundation
import SqlCipherKit

/// `run`: prints `start`, upgrades the SQLCipher 3 file at PATH with `upgradeFromSqlCipher3`, and
/// prints `done` (the parent kills it at a moment of its choosing). `check`: reports what PATH is,
/// opened read-only (or, when a hot journal must be rolled back first, read-write), on one line:
/// `v3 ROWS INTEGRITY` when it opens with SQLCipher 3's settings, `v4 ROWS INTEGRITY` when it
/// opens with SQLCipher 4's, `neither <error>` otherwise (ROWS counts table `t`; INTEGRITY is `ok`
/// or what `integrity_check` found). Both need SQLCipher 4.
let upgradeV3Command = HelperCommand(
    name: "upgrade-v3",
    usage: "upgrade-v3 run|check PATH pass:<text>|raw:<hex>: upgrades a SQLCipher 3 file, or reports what it is"
) { arguments in
    guard arguments.count == 3, ["run", "check"].contains(arguments[0]) else {
        throw DatabaseHelperError(message: "usage: upgrade-v3 run|check PATH KEY")
    }
    let path = arguments[1]
    let key = try HelperKey(arguments[2]).requiredKey(by: "upgrade-v3")
    if arguments[0] == "run" {
        report("start")
        try Database.upgradeFromSqlCipher3(path: path, key: key)
        report("done")
        return 0
    }
    // Read-only first, so that the check changes nothing; then as the next program to open the
    // file would, read-write: a kill inside a write of the original (the switch of a WAL original
    // to rollback mode is one) leaves a hot -journal, which a read-only opening must refuse and a
    // read-write one rolls back. The file with its journal is then the whole original.
    for readOnly in [true, false] {
        for (name, cipher) in [("v3", CipherSettings.sqlcipher3), ("v4", .default)] {
            guard let db = try? Database(path: path, key: key, cipher: cipher, readOnly: readOnly) else { continue }
            let line = try runBlocking {
                let rows = try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1
                let integrity = try await db.query("PRAGMA integrity_check").compactMap { $0.get(0, as: String.self) }
                await db.close()
                return "\(name) \(rows) \(integrity.joined(separator: "; "))"
            }
            report(line)
            return 0
        }
    }
    do {
        _ = try Database(path: path, key: key, readOnly: true)
        report("neither")
    } catch {
        report("neither \(errorCaseName(error)): \(error)")
    }
    return 0
}
