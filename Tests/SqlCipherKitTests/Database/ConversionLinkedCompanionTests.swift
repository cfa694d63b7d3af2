import Foundation
import SqlCipherKit
import Testing

/// `encryptInPlace` through a chain of relative links, on a plaintext file whose `-wal` is itself a
/// link to a file elsewhere (an operator's arrangement, or an attacker's): the rows in that `-wal`
/// end up encrypted in the target, and no plaintext stays anywhere: not in the target's folder,
/// not in the links' folder, not in the file the `-wal` link pointed to.
@Suite struct ConversionLinkedCompanionTests {
    static let marker = "LINKED-WAL-MARKER"

    private static func contains(_ path: String, _ text: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.range(of: Data(text.utf8)) != nil
    }

    @Test func encryptInPlaceLeavesNoPlaintextInALinkedWAL() async throws {
        let root = TemporaryDirectory()
        for folder in ["data", "links", "elsewhere"] {
            try FileManager.default.createDirectory(atPath: root.path(folder), withIntermediateDirectories: true)
        }
        let target = root.path("data/notes.db"), savedWAL = root.path("elsewhere/notes.wal")
        // A plaintext WAL database whose last rows are only in its -wal: saved while it was open.
        let plain = try Database(unencryptedPath: target, journalMode: .wal)
        try await plain.execute("CREATE TABLE t(v TEXT)")
        try await plain.execute("PRAGMA wal_autocheckpoint = 0")
        for index in 0..<20 { try await plain.execute("INSERT INTO t VALUES (?)", "\(Self.marker) \(index)") }
        try FileManager.default.copyItem(atPath: target + "-wal", toPath: savedWAL)
        await plain.close()
        try? FileManager.default.removeItem(atPath: target + "-wal")
        try? FileManager.default.removeItem(atPath: target + "-shm")
        try #require(Self.contains(savedWAL, Self.marker))
        // The -wal beside the target is a link to the saved one; the database is reached through
        // two relative links from another folder.
        try #require(symlink("../elsewhere/notes.wal", target + "-wal") == 0)
        try #require(symlink("hop.db", root.path("links/notes.db")) == 0)
        try #require(symlink("../data/notes.db", root.path("links/hop.db")) == 0)

        do {
            try Database.encryptInPlace(path: root.path("links/notes.db"), key: "linked", cipher: fastCipher)
        } catch {
            // Refusing a linked -wal is the other acceptable outcome: a typed error that names the
            // link, with the plaintext file (the caller's) left as it was.
            guard case SqlCipherError.cannotOpen(_, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("symbolic link"), "\(reason)")
            #expect(Self.contains(target, "CREATE TABLE"))
            return
        }
        var leftovers: [String] = []
        for folder in ["data", "links", "elsewhere"] {
            for name in try FileManager.default.contentsOfDirectory(atPath: root.path(folder)) {
                let path = root.path(folder + "/" + name)
                if Self.contains(path, Self.marker) { leftovers.append(folder + "/" + name) }
            }
        }
        #expect(leftovers.isEmpty, "plaintext left in \(leftovers)")
        let db = try Database(path: root.path("links/notes.db"), key: "linked", cipher: fastCipher)
        #expect(try await db.query("SELECT count(*) FROM t").first?.get(0, as: Int.self) == 20)
        await db.close()
    }
}
