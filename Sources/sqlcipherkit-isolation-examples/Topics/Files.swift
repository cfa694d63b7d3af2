import Foundation
import SqlCipherKit

// Backups, rekeys, exports, conversions, integrity and plaintext import, each with a progress
// closure formed here, written as a user writes them in each isolation context: top-level code is
// in main.swift; here a @MainActor class, the caller's own actor and Task.detached. Each is written
// out in full on purpose: the closures must be formed in the context under test, so no shared
// helper can stand in for them.

@MainActor
final class FilesModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let base = directory + "/files-main-actor"
            let db = try Database(path: directory + "/files-main-actor.db", key: "my-passphrase")
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
            try expect(header == Data("SQLite format 3\0".utf8), "files-main-actor", "exportDecrypted's header")
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
                try expect(bodies == expected, "files-main-actor", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-main-actor", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-main-actor", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-main-actor", "verifyIntegrity \(report) \(integrityLog.steps)")
            // A progress closure that updates the model: it hops to the main actor in a task of its own.
            fraction = 0
            _ = try await db.verifyIntegrity(progress: { progress in
                Task { @MainActor in self.fraction = progress.fraction }
            })
            try await waitUntil("files-main-actor", "the progress on the model") { self.fraction == 1 }
            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-main-actor", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-main-actor", "rows after rekey \(String(describing: count))")
            finished.append("files-main-actor")
            print("ok files-main-actor")
        }
        // a DatabasePool
        do {
            let base = directory + "/files-pool-main-actor"
            let db = try DatabasePool(path: directory + "/files-pool-main-actor.db", key: "my-passphrase")
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
            try expect(header == Data("SQLite format 3\0".utf8), "files-pool-main-actor", "exportDecrypted's header")
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
                try expect(bodies == expected, "files-pool-main-actor", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-pool-main-actor", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-pool-main-actor", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-pool-main-actor", "verifyIntegrity \(report) \(integrityLog.steps)")
            // A progress closure that updates the model: it hops to the main actor in a task of its own.
            fraction = 0
            _ = try await db.verifyIntegrity(progress: { progress in
                Task { @MainActor in self.fraction = progress.fraction }
            })
            try await waitUntil("files-pool-main-actor", "the progress on the model") { self.fraction == 1 }
            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-pool-main-actor", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-pool-main-actor", "rows after rekey \(String(describing: count))")
            finished.append("files-pool-main-actor")
            print("ok files-pool-main-actor")
        }
    }
}

actor FilesService {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let base = directory + "/files-actor"
            let db = try Database(path: directory + "/files-actor.db", key: "my-passphrase")
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
            try expect(header == Data("SQLite format 3\0".utf8), "files-actor", "exportDecrypted's header")
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
                try expect(bodies == expected, "files-actor", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-actor", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-actor", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-actor", "verifyIntegrity \(report) \(integrityLog.steps)")
            // A progress closure that updates the actor: it hops to it in a task of its own.
            fraction = 0
            _ = try await db.verifyIntegrity(progress: { progress in
                Task { await self.report(progress.fraction) }
            })
            let waitingSince = ContinuousClock.now
            while fraction != 1 {
                try expect(ContinuousClock.now - waitingSince < .seconds(20), "files-actor", "no progress on the actor")
                try await Task.sleep(for: .milliseconds(5))
            }
            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-actor", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-actor", "rows after rekey \(String(describing: count))")
            finished.append("files-actor")
            print("ok files-actor")
        }
        // a DatabasePool
        do {
            let base = directory + "/files-pool-actor"
            let db = try DatabasePool(path: directory + "/files-pool-actor.db", key: "my-passphrase")
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
            try expect(header == Data("SQLite format 3\0".utf8), "files-pool-actor", "exportDecrypted's header")
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
                try expect(bodies == expected, "files-pool-actor", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-pool-actor", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-pool-actor", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-pool-actor", "verifyIntegrity \(report) \(integrityLog.steps)")
            // A progress closure that updates the actor: it hops to it in a task of its own.
            fraction = 0
            _ = try await db.verifyIntegrity(progress: { progress in
                Task { await self.report(progress.fraction) }
            })
            let waitingSince = ContinuousClock.now
            while fraction != 1 {
                try expect(ContinuousClock.now - waitingSince < .seconds(20), "files-pool-actor", "no progress on the actor")
                try await Task.sleep(for: .milliseconds(5))
            }
            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-pool-actor", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-pool-actor", "rows after rekey \(String(describing: count))")
            finished.append("files-pool-actor")
            print("ok files-pool-actor")
        }
    }

    func report(_ fraction: Double) {
        self.fraction = fraction
    }
}

func filesDetached(directory: String) async throws {
    try await Task.detached {
        // a Database
        do {
            let base = directory + "/files-detached"
            let db = try Database(path: directory + "/files-detached.db", key: "my-passphrase")
            let marker = "!"
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
            try expect(header == Data("SQLite format 3\0".utf8), "files-detached", "exportDecrypted's header")
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
                try expect(bodies == expected, "files-detached", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-detached", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-detached", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-detached", "verifyIntegrity \(report) \(integrityLog.steps)")

            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-detached", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-detached", "rows after rekey \(String(describing: count))")
            print("ok files-detached")
        }
        // a DatabasePool
        do {
            let base = directory + "/files-pool-detached"
            let db = try DatabasePool(path: directory + "/files-pool-detached.db", key: "my-passphrase")
            let marker = "!"
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
            try expect(header == Data("SQLite format 3\0".utf8), "files-pool-detached", "exportDecrypted's header")
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
                try expect(bodies == expected, "files-pool-detached", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-pool-detached", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-pool-detached", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-pool-detached", "verifyIntegrity \(report) \(integrityLog.steps)")

            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-pool-detached", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-pool-detached", "rows after rekey \(String(describing: count))")
            print("ok files-pool-detached")
        }
    }.value
}
