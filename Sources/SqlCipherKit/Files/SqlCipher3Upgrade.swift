import CSqlCipherBridge
import Foundation

/// ``Database/upgradeFromSqlCipher3(path:key:progress:)``: `PRAGMA cipher_migrate`
/// on a copy beside the file, verified with SQLCipher 4's defaults, then renamed over the original
/// (the contract is documented there).
enum SqlCipher3Upgrade {
    /// The error for a key that does not open `path` with SQLCipher 3's (or 2's, 1's) defaults. The opener's
    /// reason points at `CipherSettings.sqlcipher3`, which the upgrade already uses: a file that is
    /// already in SQLCipher 4's format (an upgrade run at every launch) or that was made with a
    /// non-default page size or iteration count was reported as a wrong key, with nothing to do.
    /// The first is told apart by opening it read-only with SQLCipher 4's defaults; the second
    /// cannot be told from a wrong key, so the reason names both ways out.
    private static func notASqlCipher3DefaultsFile(_ path: String, reason: String, key: KeyMaterial,
                                                   conversion: ConversionLock) -> SqlCipherError {
        if let opened = try? DatabaseOpener.open(path: path, key: key, journalMode: .rollback, cipher: .sqlcipher4,
                                                   readOnly: true, conversion: conversion) {
            opened.connection.close()
            return .keyFailed(
                path: path,
                reason: "it is already in SQLCipher 4's format (the key opens it with SQLCipher 4's defaults), so there is "
                    + "nothing to upgrade; open it with Database(path:key:)")
        }
        return .keyFailed(
            path: path,
            reason: reason + ". upgradeFromSqlCipher3 reads files made with the default settings of SQLCipher 3 (1024-byte "
                + "pages, PBKDF2-HMAC-SHA1 with 64,000 iterations, page HMACs), 2 or 1 only: for a file made with another "
                + "page size or iteration count, or without page HMACs (PRAGMA cipher_use_hmac = OFF), "
                + "open it with CipherSettings(compatibility: 3, pageSize:, kdfIterations:, usesHMAC: false) and the values "
                + "it was made with, and copy it with export(to:key:cipher:)")
    }

    /// Refuses a file that has other names (hard links), as every opening that may write does
    /// (DatabaseOpener.refuseOtherNames) and encryptInPlace does: the upgraded file is renamed over
    /// this name only, so the others kept the SQLCipher 3 file, and a program that used one went
    /// on writing to a copy that this name no longer showed (found by the review: the upgrade,
    /// whose opening of the source is a conversion's, went ahead). Nothing has been changed when
    /// this throws.
    private static func refuseOtherNames(_ path: String) throws {
        let names = SnapshotFiles.nameCount(path)
        guard names > 1 else { return }
        throw SqlCipherError.conversionFailed(
            source: path, target: path,
            reason: "the file has \(names) names (hard links), and the upgraded file would replace this name only: "
                + "the others would keep the SQLCipher 3 file, and whatever is written through them would be missing "
                + "here. Remove the other links first (`find / -samefile \(path)` lists them), or give this name its "
                + "own copy with cp. The file was not changed")
    }

    /// Upgrades the SQLCipher 3 file at `path` to SQLCipher 4's format, in place.
    static func run(path: String, key: DatabaseKey, progress: (@Sendable (DatabaseProgress) -> Void)?) throws {
        try DatabasePath.refuseUnusable(path)
        let library = try SqlCipherLibrary.shared
        try library.require("Upgrading a SQLCipher 3 file (PRAGMA cipher_migrate)", cipher: 4)
        let material = try key.material()
        // Through a symbolic link, the file to upgrade is its target (see encryptInPlace).
        let path = SnapshotFiles.resolvedPath(path)
        // The opening below would create a missing file: an upgrade of a mistyped path made an
        // empty database there and reported success.
        guard let header = FileHeader(path: path), header.fileSize > 0 else {
            throw Exporter.noSource(path, expected: "the SQLCipher 3 database to upgrade")
        }
        let temporary = path + ".sqlcipherkit-upgrading"
        // cipher_migrate writes `<copy>-migrated` and its journal: a name with no room for them
        // failed midway with SQLite's bare "unable to open database file", naming the copy.
        if let tooLong = DatabasePath.nameTooLong(
            path, suffix: ".sqlcipherkit-upgrading-migrated" + DatabasePath.longestCompanionSuffix,
            files: "the upgrade writes its copy, the copy's migrated file and their -journal beside it") {
            throw SqlCipherError.conversionFailed(source: path, target: path, reason: tooLong + ". The file was not changed")
        }
        let lock = try ConversionLock(path: path)
        defer { lock.release() }
        try refuseOtherNames(path)
        // cipher_migrate writes the new file as `<copy>-migrated` (with a journal of its own)
        // before it moves it over the copy: a process killed meanwhile leaves it, and its hot
        // journal then failed the next migration with "cipher_migrate reported 26", which blamed
        // the file's settings. Every work file goes, under the lock that proves no upgrade runs.
        let migrated = temporary + "-migrated"
        try FileReplacement.removeDatabaseFiles(temporary)
        try FileReplacement.removeDatabaseFiles(migrated)

        // Open as a SQLCipher 3 file: proves the key, gathers what the result must hold, and takes
        // the file for itself (a WAL moves into the file), so that a copy of the file alone is
        // complete and nobody writes to the original until it is replaced.
        // SQLCipher 3's defaults first, then 2.x's and 1.x's, which cipher_migrate migrates too:
        // the source is opened with the format it was made in (opened read-only to gather what
        // the result must hold and to lock it; nothing is written in the old format).
        var opened: DatabaseOpener.Opened?
        var firstFailure: (path: String, reason: String)?
        for settings in [CipherSettings.sqlcipher3, .legacy(2), .legacy(1)] where opened == nil {
            do {
                if settings.allowsLegacyFormat {
                    // Proved read-only first. SQLCipher 1's pages have no HMAC, so a wrong key
                    // decrypts page 1 into random bytes; when byte 19 of them is 2 (one key in
                    // 256) SQLite takes the file for a WAL database, and a connection that may
                    // write made a -wal and a -shm beside it, left after the refusal. A read-only
                    // connection creates neither.
                    try DatabaseOpener.open(path: path, key: material, journalMode: .rollback, cipher: settings,
                                            readOnly: true, conversion: lock).connection.close()
                }
                opened = try SourceLock.describingBusy(path) {
                    try DatabaseOpener.open(path: path, key: material, journalMode: .rollback, cipher: settings,
                                            conversion: lock)
                }
            } catch SqlCipherError.keyFailed(let failedPath, let reason) where !reason.contains("plaintext SQLite database") {
                firstFailure = firstFailure ?? (failedPath, reason)
            } catch SqlCipherError.sqlite(let code, _, _, _) where settings.allowsLegacyFormat && [11, 26].contains(code & 0xFF) {
                // 1.x pages carry no HMAC: another key or format decrypts page 1 into bytes that are
                // no database, which is no proof about the key (SQLCipher 3's attempt decided that).
                continue
            }
        }
        guard let source = opened else {
            let failure = firstFailure ?? (path, "the key does not open it")
            throw notASqlCipher3DefaultsFile(failure.path, reason: failure.reason, key: material, conversion: lock)
        }
        let reporter: ProgressReporter?
        do {
            reporter = try SourceLock.describingBusy(path) { try Exporter.pageReporter(of: source.connection, progress) }
            reporter?.start()
            try Task.checkCancellation()
            try SourceLock.lockExclusively(source.connection, path: path, journalMode: source.journalMode, movingWAL: true)
            // Counted under the lock, from the file that is copied next: counted before it, a
            // commit of another process in between made the verification below fail a whole copy
            // ("ledger has 11 rows in the new file and 10 in the source").
            let expected = try Exporter.contents(of: source.connection, schema: "main")
            try SnapshotFiles.copyFile(path, to: temporary)
            let migrating = try SQLiteConnection(path: temporary)
            defer { migrating.close() }
            // PRAGMA cipher_migrate is the package's own (SQLiteConnection+Guards.swift).
            try migrating.asPackage {
                try migrating.applyKey(material)
                if library.cipherVersionIsAtLeast(4, 5, 1) { try migrating.execute("PRAGMA cipher_log = off") }
                // SQLCipher answers with the text "0" on success.
                let answer = try migrating.interruptGate.watching(cancellable: true, sample: nil) {
                    try migrating.scalar("PRAGMA cipher_migrate").flatMap { value -> Int? in
                        if case .text(let text) = value { return Int(text) }
                        return Int.fromDatabaseValue(value)
                    }
                }
                guard answer == 0 else {
                    throw SqlCipherError.conversionFailed(
                        source: path, target: temporary,
                        reason: "cipher_migrate reported \(answer.map(String.init) ?? "no result"); only files made "
                            + "with SQLCipher 3's default settings can be migrated")
                }
                // cipher_migrate carries user_version over but not application_id: set it as every
                // other conversion does, so that the verification below compares like with like.
                try migrating.execute("PRAGMA application_id = \(expected.applicationID)")
                if source.journalMode == .wal { _ = try migrating.query("PRAGMA journal_mode = WAL") }
            }
            migrating.close()
            try Task.checkCancellation()
            try Exporter.verify(temporary, promised: path, key: material, cipher: .default, expected: expected, source: path)
            // The last moment to stop: after it the original is replaced.
            try Task.checkCancellation()
        } catch {
            SourceLock.unlock(source.connection, journalMode: source.journalMode)
            source.connection.close()
            try? FileReplacement.removeDatabaseFiles(temporary)
            try? FileReplacement.removeDatabaseFiles(migrated)
            if error is SqlCipherError || error is CancellationError { throw error }
            throw SqlCipherError.conversionFailed(source: path, target: temporary, reason: "\(error)")
        }
        // The source's exclusive lock is let go only once the new file is in place, so that a
        // connection of another process left open on the original cannot commit to it between
        // the copy and the switch (InPlaceEncryption.run says why).
        defer { source.connection.close() }
        try FileReplacement.replace(path, with: temporary, backup: nil)
        reporter?.finish()
    }
}
