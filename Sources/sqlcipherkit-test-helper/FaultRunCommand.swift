import CSqlCipherTestVFS
import Foundation
import SqlCipherKit

/// The outcome of one run of the fault workload, one JSON line per run. The parent test decodes
/// the same fields (Tests/SqlCipherKitTests/Reliability/FaultInjectionTests.swift).
struct FaultRunResult: Codable {
    /// Which operation of the kind failed (0: none, the counting run).
    var nth: Int64
    /// "ok", or "error" when a call of the workload threw.
    var outcome: String = "ok"
    /// Where the workload was when it threw: open, transaction, read.
    var stage: String = ""
    /// The SqlCipherError case, or "untyped ..." for any other error.
    var kind: String = ""
    var code: Int32 = 0
    var message: String = ""
    /// Whether the workload's transaction returned successfully (its commit is then promised).
    var committed = false
    /// After a failure past the open: the fault is removed and the transaction run again on the
    /// same Database. "ok", the error's case, or "" when there was nothing to retry; "ok after
    /// reopening" when the same Database refused with SQLCipher 4.7+'s sticky codec error (its
    /// advice says to open the file again) and a Database opened again ran it.
    var retry = ""
    /// Operations failed on purpose during the run.
    var injected: Int64 = 0
    /// Reads, writes and syncs counted during the run.
    var reads: Int64 = 0
    var writes: Int64 = 0
    var syncs: Int64 = 0
}

/// The workload of the fault scenario, run through the fault-injecting VFS: open an existing
/// database, one transaction that inserts 30 rows across several pages and updates every row of
/// a second table, a read, and close (which checkpoints in WAL mode). After a failure, the
/// transaction is retried on the same Database with the fault removed.
enum FaultWorkload {
    static func run(path: String, key: Data, mode: JournalMode, nth: Int64) async -> FaultRunResult {
        var result = FaultRunResult(nth: nth)
        var stage = "open"
        var opened: Database?
        do {
            let db = try Database(path: path, rawKey: key, journalMode: mode)
            opened = db
            stage = "transaction"
            try await transaction(db)
            result.committed = true
            stage = "read"
            _ = try await db.query("SELECT sum(balance), count(*) FROM accounts")
            await db.close()
        } catch {
            result.outcome = "error"
            result.stage = stage
            result.message = String(describing: error)
            if let typed = error as? SqlCipherError {
                if case let .sqlite(code, _, _, _) = typed { result.code = code }
                result.kind = Mirror(reflecting: typed).children.first?.label ?? String(describing: typed)
            } else {
                result.kind = "untyped \(type(of: error))"
            }
        }
        result.injected = sctv_injected()
        result.reads = sctv_count(Int32(SCTV_READ.rawValue))
        result.writes = sctv_count(Int32(SCTV_WRITE.rawValue))
        result.syncs = sctv_count(Int32(SCTV_SYNC.rawValue))
        if result.outcome == "error", let db = opened {
            // The disk is well again: the same Database must be usable without reopening.
            sctv_disarm()
            do {
                try await transaction(db)
                result.retry = "ok"
            } catch {
                result.retry = (error as? SqlCipherError).map { Mirror(reflecting: $0).children.first?.label ?? "\($0)" }
                    ?? "untyped \(type(of: error))"
                result.message += " | retry: \(error)"
                // SQLCipher 4.7+ keeps the connection in error after a page failed to read or
                // decrypt; the error says to open the file again, which is what is done here.
                if case let .sqlite(7, _, message, _)? = error as? SqlCipherError,
                   message.contains("keeps a connection in error for good") {
                    await db.close()
                    do {
                        let again = try Database(path: path, rawKey: key, journalMode: mode)
                        try await transaction(again)
                        await again.close()
                        result.retry = "ok after reopening"
                    } catch {
                        result.message += " | after reopening: \(error)"
                    }
                }
            }
            await db.close()
        }
        return result
    }

    /// One batch: 30 log rows over several pages, every account updated, the batch counter.
    static func transaction(_ db: Database) async throws {
        try await db.transaction { conn in
            let batch = (try conn.query("SELECT batch FROM meta").first?.get("batch", as: Int64.self) ?? 0) + 1
            for i in 0..<30 {
                try conn.execute("INSERT INTO log(batch, body) VALUES (?, ?)",
                                 batch, String(repeating: "batch \(batch) row \(i) ", count: 25))
            }
            try conn.execute("UPDATE accounts SET balance = balance + 1")
            try conn.execute("UPDATE meta SET batch = ?", batch)
        }
    }
}

/// Runs the fault workload once per N on a fresh copy of BASELINE (DIR/fault-N.db), with the
/// test VFS registered as the default VFS of the loaded library and the Nth read, write or sync
/// failing. N = 0 is the counting run (no fault). The parent reopens every copy with the normal
/// VFS and checks it.
let faultRunCommand = HelperCommand(
    name: "fault-run",
    usage: "fault-run DIR BASELINE wal|rollback RAWKEYHEX read|write|sync CODE once|persistent N[,N...]"
) { arguments in
    guard arguments.count == 8, let mode = JournalMode(rawValue: arguments[2]),
          let operation = ["read": SCTV_READ, "write": SCTV_WRITE, "sync": SCTV_SYNC][arguments[4]],
          let code = Int32(arguments[5]), ["once", "persistent"].contains(arguments[6]) else {
        throw HelperUsageError(message: "usage: fault-run DIR BASELINE wal|rollback RAWKEYHEX read|write|sync CODE once|persistent N[,N...]")
    }
    let directory = arguments[0], baseline = arguments[1]
    let key = try helperBytes(fromHex: arguments[3])
    let persistent: Int32 = arguments[6] == "persistent" ? 1 : 0
    let positions = arguments[7].split(separator: ",").compactMap { Int64($0) }
    _ = try SqlCipherLibrary.shared
    let rc = sctv_register(1)
    guard rc == 0 else { throw HelperUsageError(message: "cannot register the test VFS: SQLite error \(rc)") }
    return try runBlocking { () async throws -> Int32 in
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for nth in positions {
            let path = directory + "/fault-\(nth).db"
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: baseline, toPath: path)
            sctv_arm(Int32(operation.rawValue), nth, code, persistent)
            let result = await FaultWorkload.run(path: path, key: key, mode: mode, nth: nth)
            sctv_disarm()
            report(String(decoding: try encoder.encode(result), as: UTF8.self))
        }
        return 0
    }
}
