import Foundation
import SqlCipherKit

// Backups, rekeys, exports, conversions, integrity and plaintext import, each with a progress
// closure formed here, in a class without annotation of a module whose default isolation is the
// main actor (top-level code is in main.swift). Written out in full on purpose: the closures must
// be formed in the context under test.

final class FilesModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let base = directory + "/files-default-main-actor-class"
            let db = try Database(path: directory + "/files-default-main-actor-class.db", key: "my-passphrase")
            let marker = self.marker
            try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            let expected: [String] = ["a", "b", "c"].map { $0 + marker }
            try await db.execute("INSERT INTO notes(body) VALUES (?), (?), (?)", expected[0], expected[1], expected[2])
            // The copies take a raw key: no key derivation, which keeps the example quick.
            let copyKey = Data(repeating: 0x11, count: 32)
            let backupLog = ProgressLog()
            try await db.backup(to: base + "-backup.db", key: .rawKey(copyKey), pagesPerStep: 1, progress: { progress in
                backupLog.record(progress)
            })
            let exportLog = ProgressLog()
            try await db.export(to: base + "-export.db", key: .rawKey(copyKey), progress: { exportLog.record($0) })
            let decryptLog = ProgressLog()
            try await db.exportDecrypted(to: base + "-plain.db", progress: { decryptLog.record($0) })
            let header = FileManager.default.contents(atPath: base + "-plain.db")?.prefix(16)
            try expect(header == Data("SQLite format 3\0".utf8), "files-default-main-actor-class", "exportDecrypted's header")
            let encryptLog = ProgressLog()
            try Database.encrypt(plaintextAt: base + "-plain.db", to: base + "-encrypted.db", key: .rawKey(copyKey),
                                 progress: { encryptLog.record($0) })
            try await db.exportDecrypted(to: base + "-in-place.db")
            let inPlaceLog = ProgressLog()
            try Database.encryptInPlace(path: base + "-in-place.db", key: .rawKey(copyKey), progress: { inPlaceLog.record($0) })
            for suffix in ["-backup.db", "-export.db", "-encrypted.db", "-in-place.db"] {
                let copy = try Database(path: base + suffix, rawKey: copyKey)
                let bodies = try await copy.query("SELECT body FROM notes ORDER BY id").map { $0.get(0, as: String.self) }
                await copy.close()
                try expect(bodies == expected, "files-default-main-actor-class", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-default-main-actor-class", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-default-main-actor-class", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-default-main-actor-class", "verifyIntegrity \(report) \(integrityLog.steps)")
            // A progress closure that updates the model: it hops to the main actor in a task of its own.
            fraction = 0
            _ = try await db.verifyIntegrity(progress: { progress in
                Task { @MainActor in self.fraction = progress.fraction }
            })
            try await waitUntil("files-default-main-actor-class", "the progress on the model") { self.fraction == 1 }
            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-default-main-actor-class", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-default-main-actor-class", "rows after rekey \(String(describing: count))")
            finished.append("files-default-main-actor-class")
            print("ok files-default-main-actor-class")
        }
        // a DatabasePool
        do {
            let base = directory + "/files-default-main-actor-class-pool"
            let db = try DatabasePool(path: directory + "/files-default-main-actor-class-pool.db", key: "my-passphrase")
            let marker = self.marker
            try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            let expected: [String] = ["a", "b", "c"].map { $0 + marker }
            try await db.execute("INSERT INTO notes(body) VALUES (?), (?), (?)", expected[0], expected[1], expected[2])
            // The copies take a raw key: no key derivation, which keeps the example quick.
            let copyKey = Data(repeating: 0x11, count: 32)
            let backupLog = ProgressLog()
            try await db.backup(to: base + "-backup.db", key: .rawKey(copyKey), pagesPerStep: 1, progress: { progress in
                backupLog.record(progress)
            })
            let exportLog = ProgressLog()
            try await db.export(to: base + "-export.db", key: .rawKey(copyKey), progress: { exportLog.record($0) })
            let decryptLog = ProgressLog()
            try await db.exportDecrypted(to: base + "-plain.db", progress: { decryptLog.record($0) })
            let header = FileManager.default.contents(atPath: base + "-plain.db")?.prefix(16)
            try expect(header == Data("SQLite format 3\0".utf8), "files-default-main-actor-class-pool", "exportDecrypted's header")
            let encryptLog = ProgressLog()
            try Database.encrypt(plaintextAt: base + "-plain.db", to: base + "-encrypted.db", key: .rawKey(copyKey),
                                 progress: { encryptLog.record($0) })
            try await db.exportDecrypted(to: base + "-in-place.db")
            let inPlaceLog = ProgressLog()
            try Database.encryptInPlace(path: base + "-in-place.db", key: .rawKey(copyKey), progress: { inPlaceLog.record($0) })
            for suffix in ["-backup.db", "-export.db", "-encrypted.db", "-in-place.db"] {
                let copy = try Database(path: base + suffix, rawKey: copyKey)
                let bodies = try await copy.query("SELECT body FROM notes ORDER BY id").map { $0.get(0, as: String.self) }
                await copy.close()
                try expect(bodies == expected, "files-default-main-actor-class-pool", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-default-main-actor-class-pool", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-default-main-actor-class-pool", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-default-main-actor-class-pool", "verifyIntegrity \(report) \(integrityLog.steps)")
            // A progress closure that updates the model: it hops to the main actor in a task of its own.
            fraction = 0
            _ = try await db.verifyIntegrity(progress: { progress in
                Task { @MainActor in self.fraction = progress.fraction }
            })
            try await waitUntil("files-default-main-actor-class-pool", "the progress on the model") { self.fraction == 1 }
            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-default-main-actor-class-pool", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-default-main-actor-class-pool", "rows after rekey \(String(describing: count))")
            finished.append("files-default-main-actor-class-pool")
            print("ok files-default-main-actor-class-pool")
        }
    }
}
