import CSqlCipherTestVFS
import Foundation
import SqlCipherKit

/// What the leak workload saw: writes per kind of file, and how many of them held the marker.
/// The parent test decodes the same fields (Tests/SqlCipherKitTests/Reliability/LeakTests.swift).
struct LeakWatchResult: Codable {
    /// SQLite's file kinds (open flags) by name: main, journal, wal, temp-db, temp-journal,
    /// subjournal, transient, super-journal.
    var writes: [String: Int64] = [:]
    var hits: [String: Int64] = [:]
    /// Files of the database's directory, read while the database was still open, that hold the marker.
    var filesWithMarkerWhileOpen: [String] = []
    /// The steps that ran, in order.
    var steps: [String] = []
    var error = ""
}

/// Runs the leak workload through the test VFS with a write watch on the marker: inserts, an
/// update, a large sort on a column without an index, a temporary table and index, an index build,
/// deletes and VACUUM. `temp-store` is `default` (the package's own setting, in memory) or `file`
/// (a user's `PRAGMA temp_store = FILE`, which sends sorts and temporary tables to files).
let leakWatchCommand = HelperCommand(
    name: "leak-watch",
    usage: "leak-watch DIR wal|rollback RAWKEYHEX MARKER default|file: the leak workload; prints writes and marker hits by file kind"
) { arguments in
    guard arguments.count == 5, let mode = JournalMode(rawValue: arguments[1]), ["default", "file"].contains(arguments[4]) else {
        throw HelperUsageError(message: "usage: leak-watch DIR wal|rollback RAWKEYHEX MARKER default|file")
    }
    let directory = arguments[0], marker = arguments[3], tempStore = arguments[4]
    let key = try helperBytes(fromHex: arguments[2])
    _ = try SqlCipherLibrary.shared
    guard sctv_register(1) == 0 else { throw HelperUsageError(message: "cannot register the test VFS") }
    let needle = Array(marker.utf8)
    sctv_watch(needle, Int32(needle.count))
    let kinds: [(String, Int32)] = [
        ("main", 0x100), ("temp-db", 0x200), ("transient", 0x400), ("journal", 0x800),
        ("temp-journal", 0x1000), ("subjournal", 0x2000), ("super-journal", 0x4000), ("wal", 0x80000),
    ]
    let result = try runBlocking { () async throws -> LeakWatchResult in
        var result = LeakWatchResult()
        do {
            let db = try Database(path: directory + "/leak.db", rawKey: key, journalMode: mode)
            // A small page cache makes the sorter and temporary b-trees spill early.
            try await db.execute("PRAGMA cache_size = -64")
            if tempStore == "file" {
                do {
                    try await db.execute("PRAGMA temp_store = FILE")
                } catch {
                    let kind = (error as? SqlCipherError).flatMap { Mirror(reflecting: $0).children.first?.label } ?? "untyped"
                    result.error = "temp_store refused: \(kind): \(error)"
                    return result
                }
            }
            let steps = LeakWorkload.steps(marker: marker)
            if try SqlCipherLibrary.shared.sqliteVersionNumber >= 3_027_000 {
                // VACUUM INTO (SQLite 3.27+) takes the copy's key from its target, so an encrypted
                // database refuses it (SqlCipherKit.docc/RawSQLGuards.md): it must write nothing at all.
                do {
                    try await db.execute("VACUUM INTO '\(directory)/leak-copy.db'")
                    result.error = "VACUUM INTO ran on an encrypted database"
                    return result
                } catch SqlCipherError.unsafeVacuumInto {
                    result.steps.append("vacuum into refused")
                }
            }
            for (name, sql) in steps {
                result.steps.append(name)
                if sql.hasPrefix("SELECT") { _ = try await db.query(sql) } else { try await db.execute(sql) }
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names.sorted() {
                if let data = FileManager.default.contents(atPath: directory + "/" + name), data.range(of: Data(needle)) != nil {
                    result.filesWithMarkerWhileOpen.append(name)
                }
            }
            await db.close()
        } catch {
            result.error = String(describing: error)
        }
        for (name, flag) in kinds {
            result.writes[name] = sctv_watch_writes(flag)
            result.hits[name] = sctv_watch_hits(flag)
        }
        return result
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    report(String(decoding: try encoder.encode(result), as: UTF8.self))
    return result.error.isEmpty ? 0 : 1
}

/// The statements of the leak workload. Every one of them puts the marker somewhere SQLite may
/// write: table pages, journal and WAL frames, sorter runs, temporary b-trees, the VACUUM copy.
enum LeakWorkload {
    static func steps(marker: String) -> [(String, String)] {
        [
            ("create", "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tag TEXT, data BLOB)"),
            ("insert", """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
                INSERT INTO notes(id, title, body, tag, data)
                SELECT i, 'title ' || i, '\(marker) body ' || i || ' ' || hex(randomblob(100)),
                       hex(randomblob(8)), CAST('\(marker)' AS BLOB) || randomblob(50)
                FROM n
                """),
            ("update", "UPDATE notes SET title = title || ' \(marker)' WHERE id % 3 = 0"),
            ("large sort", "SELECT body, title FROM notes ORDER BY tag, body"),
            ("group by", "SELECT count(*), tag FROM notes GROUP BY substr(body, 1, 60) ORDER BY 1 DESC"),
            ("temp table", "CREATE TEMP TABLE scratch AS SELECT id, body, title FROM notes WHERE id % 2 = 0"),
            ("temp index", "CREATE INDEX temp.scratch_body ON scratch(body)"),
            ("temp read", "SELECT count(*) FROM scratch WHERE body > '\(marker)'"),
            ("index build", "CREATE INDEX notes_body ON notes(body)"),
            ("delete", "DELETE FROM notes WHERE id % 5 = 0"),
            ("vacuum", "VACUUM"),
            ("final read", "SELECT count(*) FROM notes WHERE body LIKE '\(marker)%'"),
        ]
    }
}
