import Foundation
import SqlCipherKit

/// Runs every call that takes a path with one-character relative names in the working folder
/// (which the parent sets: a test process cannot change its own without moving its neighbours'
/// files): `Database(path:)`, `DatabasePool(path:)`, `export`, `exportDecrypted`, `backup` on both,
/// `encrypt(plaintextAt:to:)`, `encryptInPlace`, `importPlaintext`. Foundation's
/// `deletingLastPathComponent` traps on such a path, and the package once asked it for the folder
/// of each. Prints `relative paths ok <rows>` when every copy holds the rows.
let relativePathsCommand = HelperCommand(
    name: "relative-paths",
    usage: "relative-paths: opens, copies and converts files named a, b, c, ... in the working folder"
) { _ in
    let rows = try waitForDatabaseWork { () async throws -> [Int] in
        let key: DatabaseKey = .rawKey(Data(repeating: 0x5A, count: 32))
        func count(_ path: String) async throws -> Int {
            let db = try Database(path: path, key: key)
            defer { Task { await db.close() } }
            return try await db.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1
        }
        let db = try Database(path: "a", key: key)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)")
        try await db.export(to: "b", key: key)
        try await db.backup(to: "c", key: key)
        try await db.exportDecrypted(to: "d")
        await db.close()
        let pool = try DatabasePool(path: "e", key: key)
        try await pool.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)")
        try await pool.backup(to: "f", key: key)
        try await pool.importPlaintext(from: "d", as: "p") { conn in
            try conn.execute("INSERT INTO t SELECT x FROM p.t")
        }
        await pool.close()
        try Database.encrypt(plaintextAt: "d", to: "g", key: key)
        try Database.encryptInPlace(path: "d", key: key)
        var counts: [Int] = []
        for path in ["a", "b", "c", "d", "f", "g"] { counts.append(try await count(path)) }
        let merged = try DatabasePool(path: "e", key: key)
        counts.append(try await merged.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1)
        await merged.close()
        return counts
    }
    report("relative paths ok \(rows.map(String.init).joined(separator: " "))")
    return 0
}
