import CSqlCipherTestVFS
import Foundation
import SqlCipherKit

/// A pool's reader meets one failed read: the read through it fails, and the reads after it,
/// with the disk well again, must succeed. Reports `first error CODE` (or `first ok`), then
/// `second ok SUM` or `second error CODE: MESSAGE`, and the same for a third read.
let poolReadFaultCommand = HelperCommand(
    name: "pool-read-fault",
    usage: "pool-read-fault PATH RAWKEYHEX: one read of a pool's reader fails with SQLITE_IOERR_READ; the next reads must not"
) { arguments in
    guard arguments.count == 2 else { throw HelperUsageError(message: "usage: pool-read-fault PATH RAWKEYHEX") }
    let path = arguments[0]
    let key = try helperBytes(fromHex: arguments[1])
    _ = try SqlCipherLibrary.shared
    let rc = sctv_register(1)
    guard rc == 0 else { throw HelperUsageError(message: "cannot register the test VFS: SQLite error \(rc)") }
    return try runBlocking { () async throws -> Int32 in
        let pool = try DatabasePool(path: path, rawKey: key, maximumReaderCount: 1)
        try await pool.execute("CREATE TABLE t(n INTEGER, b BLOB)")
        try await pool.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300) "
                                   + "INSERT INTO t SELECT i, zeroblob(200) FROM c")
        _ = try await pool.query("SELECT sum(n) FROM t")  // the reader is open, its cache warm
        // A commit makes the reader read its pages again, from the -wal, at its next read.
        try await pool.execute("UPDATE t SET n = n + 1")
        sctv_arm(Int32(SCTV_READ.rawValue), 1, 266, 0)  // SQLITE_IOERR_READ, once
        await readSum(pool, "first")
        sctv_disarm()
        await readSum(pool, "second")
        await readSum(pool, "third")
        await pool.close()
        return 0
    }
}

/// Reads the sum through `pool` and reports it, or the error, after `label`.
private func readSum(_ pool: DatabasePool, _ label: String) async {
    do {
        let sum = try await pool.query("SELECT sum(n) FROM t")[0].get(0, as: Int.self) ?? -1
        report("\(label) ok \(sum)")
    } catch {
        if case .sqlite(let code, _, let message, _)? = error as? SqlCipherError {
            report("\(label) error \(code): \(message)")
        } else {
            report("\(label) error \(error)")
        }
    }
}
