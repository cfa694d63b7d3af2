import CSqlCipherBenchFloor
import Foundation
import SqlCipherKit

/// A connection of the C floor (CSqlCipherBenchFloor): the benchmark loops written in C against
/// the same loaded library, which SqlCipherKit's figures are divided by.
final class FloorConnection {
    private let handle: OpaquePointer

    /// Resolves the floor's functions from the loaded library. Call after `SqlCipherLibrary.shared`.
    static func load() throws {
        var message = [CChar](repeating: 0, count: 512)
        guard scbf_load(&message, message.count) == 0 else {
            throw BenchError("the C floor cannot start: \(text(message))")
        }
    }

    /// Opens (or creates) `path` with `key`, reading the schema once as scbf_open describes.
    init(path: String, key: BenchKey) throws {
        var handle: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        let bytes = key.floorBytes
        let rc = bytes.withUnsafeBytes { raw in
            scbf_open(path, raw.baseAddress, Int32(raw.count), &handle, &message, message.count)
        }
        guard rc == 0, let handle else {
            throw BenchError("the C floor cannot open \(path): \(text(message)) (code \(rc))")
        }
        self.handle = handle
        // The page cache SqlCipherKit's connections get, so that both sides decrypt the same
        // pages: the floor measures the same work, not a smaller cache.
        try execute("PRAGMA cache_size = -\(Database.defaultPageCacheKiB)")
    }

    deinit {
        scbf_close(handle)
    }

    private func check(_ rc: Int32, _ what: String) throws {
        guard rc == 0 else {
            throw BenchError("the C floor failed to \(what): \(String(cString: scbf_errmsg(handle))) (code \(rc))")
        }
    }

    func execute(_ sql: String) throws {
        try check(scbf_exec(handle, sql), "run \(sql)")
    }

    /// Changes the key to `key` (bytes as scbf_open takes them); see scbf_rekey.
    func rekey(_ key: Data) throws {
        try check(key.withUnsafeBytes { scbf_rekey(handle, $0.baseAddress, Int32($0.count)) }, "change the key")
    }

    /// Inserts rows `firstID..<firstID + count` in one transaction; see scbf_insert_rows.
    func insertRows(_ sql: String, firstID: Int, count: Int, nullID: Bool = false, salt: Int = 0) throws {
        try check(scbf_insert_rows(handle, sql, Int64(firstID), Int32(count), nullID ? 1 : 0, Int64(salt)),
                  "insert \(count) rows")
    }

    /// Writes rows over existing ones in one transaction; see scbf_upsert_rows.
    func upsertRows(_ plan: UpsertPlan, firstID: Int, count: Int, salt: Int) throws {
        let rc: Int32
        if let insert = plan.insertSQL {
            rc = scbf_upsert_rows(handle, plan.sql, insert, Int64(firstID), Int32(count), Int64(salt))
        } else {
            rc = scbf_upsert_rows(handle, plan.sql, nil, Int64(firstID), Int32(count), Int64(salt))
        }
        try check(rc, "upsert \(count) rows")
    }

    /// Reads every row of `sql` by column index; returns the row count and the checksum.
    func fetchByIndex(_ sql: String) throws -> FetchTotals {
        var rows: Int64 = 0
        var checksum: Int64 = 0
        try check(scbf_fetch_by_index(handle, sql, &rows, &checksum), "fetch by index")
        return FetchTotals(rows: Int(rows), checksum: checksum)
    }

    /// Reads every row of `sql` into row structs whose columns are found by name.
    func fetchByName(_ sql: String, names: [String]) throws -> FetchTotals {
        var rows: Int64 = 0
        var checksum: Int64 = 0
        let copies = names.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) }
        let rc = pointers.withUnsafeBufferPointer { buffer in
            scbf_fetch_by_name(handle, sql, buffer.baseAddress, &rows, &checksum)
        }
        try check(rc, "fetch by name")
        return FetchTotals(rows: Int(rows), checksum: checksum)
    }
}

/// The NUL-terminated text in a C buffer.
private func text(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// What a fetch saw: how many rows, and the wrapping sum of every value (to prove that Swift and
/// C read the same thing).
struct FetchTotals: Equatable {
    var rows: Int
    var checksum: Int64
}
