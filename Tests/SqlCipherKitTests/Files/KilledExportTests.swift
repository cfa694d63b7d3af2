import Foundation
import Testing
@testable import SqlCipherKit

/// An export killed (SIGKILL) halfway through its copy, in a child paused inside its progress
/// closure (a handshake: the parent kills it once it says `paused`): nothing is left under the
/// target's name, and the next export to the same target succeeds and removes the dead one's
/// hidden file.
///
/// Before, the export wrote straight to the target, and `sqlcipher_export` commits table by
/// table: a kill left a copy under the target's name that opened with the key and lacked tables
/// (or rows), and the next export to the target was refused because the file existed.
@Suite struct KilledExportTests {
    @Test(arguments: ["encrypted", "plain"])
    func anExportKilledHalfwayLeavesNothingUnderTheTargetsName(kind: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db"), target = dir.path("copy.db")
        let source = try Database(path: path, rawKey: rawKey())
        for table in ["a", "b", "c", "d"] {
            try await source.execute("CREATE TABLE \(table)(id INTEGER PRIMARY KEY, body BLOB)")
            try await source.execute("""
                WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
                INSERT INTO \(table) SELECT i, randomblob(3000) FROM c
                """)
        }
        await source.close()

        let child = try KillableChild(helperArguments: ["export-pause", path, "raw:" + hex(rawKey()), target, kind])
        let paused = child.waitForLine(startingWith: "paused", timeout: 120)
        #expect(paused != nil, "the child never paused: \(child.lines)")
        #expect(child.killAndCollect(), "the child was killed, not finished")
        #expect(!FileManager.default.fileExists(atPath: target), "a partial copy is under the target's name")

        let db = try Database(path: path, rawKey: rawKey())
        if kind == "plain" {
            try await db.exportDecrypted(to: target)
        } else {
            try await db.export(to: target, key: .rawKey(rawKey()))
        }
        await db.close()
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".copy.db.") }
        #expect(leftovers.isEmpty, "left: \(leftovers)")
        let copy = kind == "plain" ? try Database(unencryptedPath: target, readOnly: true)
            : try Database(path: target, rawKey: rawKey(), readOnly: true)
        for table in ["a", "b", "c", "d"] {
            #expect(try await copy.query("SELECT count(*) FROM \(table)")[0].get(0, as: Int.self) == 300)
        }
        await copy.close()
    }

    /// An export killed halfway into a name that another export then fills: the next export to
    /// that name is refused (the target exists, as documented), and that refused call still
    /// removes the dead export's hidden file. Before, it stayed beside the target for as long as
    /// the target existed: for `exportDecrypted`, a partial plaintext copy.
    @Test(arguments: ["encrypted", "plain"])
    func aDeadExportsHiddenFileGoesEvenWhenItsTargetExists(kind: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("store.db"), target = dir.path("copy.db")
        let source = try Database(path: path, rawKey: rawKey())
        for table in ["a", "b"] {
            try await source.execute("CREATE TABLE \(table)(id INTEGER PRIMARY KEY, body BLOB)")
            try await source.execute("""
                WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
                INSERT INTO \(table) SELECT i, randomblob(3000) FROM c
                """)
        }
        let export = { @Sendable (db: Database) async throws in
            if kind == "plain" {
                try await db.exportDecrypted(to: target)
            } else {
                try await db.export(to: target, key: .rawKey(rawKey()))
            }
        }
        let child = try KillableChild(helperArguments: ["export-pause", path, "raw:" + hex(rawKey()), target, kind])
        #expect(child.waitForLine(startingWith: "paused", timeout: 120) != nil, "the child never paused: \(child.lines)")
        try await export(source)
        #expect(child.killAndCollect(), "the child was killed, not finished")
        let hidden = { try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".copy.db.export-") } }
        #expect(try hidden().count >= 1, "the killed export's hidden file")
        // A plaintext export's is a partial plaintext copy: the reason it must not stay.
        let dead = try hidden().filter { !$0.hasSuffix("-journal") }
        #expect(dead.allSatisfy { FileHeader(path: dir.path($0))?.hasPlaintextMagic == (kind == "plain") })

        let error = await #expect(throws: SqlCipherError.self) { try await export(source) }
        guard case .cannotOpen? = error else { Issue.record("\(String(describing: error))"); return }
        let left = try hidden()
        #expect(left.isEmpty, "left: \(left)")
        await source.close()
    }
}
