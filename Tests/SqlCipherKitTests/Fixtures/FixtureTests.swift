import Foundation
import Testing
@testable import SqlCipherKit

/// Opens every file of Fixtures/ (made by the real sqlcipher 3.4.1 and 4.6.1 CLIs) with the package
/// under the loaded library: full content where the format allows it, the exact typed error where
/// it does not. Every file is copied to a temporary directory first; the checked-in files are
/// never opened.
@Suite struct FixtureTests {
    @Test func manifestIsCompleteAndFilesAreUnchanged() throws {
        let manifest = try FixtureManifest.shared.get()
        // 19 database files plus the two -wal files: 21 files made by the real tools.
        #expect(manifest.files.count == 19)
        #expect(manifest.files.count + manifest.files.filter { $0.walFile != nil }.count == 21)
        #expect(manifest.content.items.count == manifest.content.itemsRows)
        for file in manifest.files {
            let url = FixtureManifest.directory.appendingPathComponent(file.file)
            let data = try #require(FileManager.default.contents(atPath: url.path), "\(file.file) is missing")
            #expect(data.count == file.size, "\(file.file) changed size")
            #expect(try sha256(url.path) == file.sha256, "\(file.file) changed: was a fixture opened in place?")
            if let wal = file.walFile {
                #expect(FileManager.default.fileExists(atPath: FixtureManifest.directory.appendingPathComponent(wal).path),
                        "\(wal) is missing: a fixture was opened in place and checkpointed")
            }
        }
    }

    @Test(arguments: FixtureManifest.fileNames)
    func fixture(_ name: String) async throws {
        let manifest = try FixtureManifest.shared.get()
        let file = try #require(manifest.file(named: name))
        let library = try SqlCipherLibrary.shared
        var record = ScenarioRecord(suite: "Fixtures", scenario: name)
        var tally = Tally()
        defer {
            record.notes = tally.summary
            record.record()
        }

        // The settings the package derives must be the pragmas the real CLI needed.
        if file.isReadableByLoadedLibrary, file.keyKind != "none" {
            let pragmas = try file.cipherSettings.pragmas(for: library)
            // A later SQLCipher 4 release (not in the manifest) needs what 4.6.1 needed.
            let release = file.openPragmas[Reliability.libraryVersion] != nil ? Reliability.libraryVersion : "4.6.1"
            let expected = (file.openPragmas[release] ?? []).map { $0.replacingOccurrences(of: ";", with: "") }
            #expect(pragmas == expected, "\(name): derived settings differ from the CLI's pragmas")
        }

        switch (file.isReadableByLoadedLibrary, file.expectedError, file.damage?.kind) {
        case (true, nil, _):
            try await checkReadable(file, manifest: manifest, record: &record, tally: &tally)
        case (true, "notADatabase"?, _):
            // Damaged page 1: SQLCipher cannot tell it from a wrong key.
            let dir = TemporaryDirectory()
            let path = try file.copy(into: dir)
            record.rounds += 1
            let error = #expect(throws: SqlCipherError.self) { try file.open(at: path) }
            tally.add(error.map(errorKind) ?? "no error")
            guard case .keyFailed(let failedPath, _)? = error else {
                Issue.record("\(name): expected keyFailed, got \(String(describing: error))")
                record.failures += 1
                return
            }
            #expect(failedPath == path)
        case (true, "corrupt"?, "truncate"?):
            let dir = TemporaryDirectory()
            let path = try file.copy(into: dir)
            record.rounds += 1
            // SQLCipher reads page 1 fine; the error comes from the open's first read of the
            // schema (or, at the latest, from reading the cut table).
            var stage = "open"
            let error = await #expect(throws: SqlCipherError.self) {
                let db = try file.open(at: path)
                stage = "first read"
                _ = try await db.query("SELECT * FROM filler")
            }
            tally.add("\(stage): " + (error.map(errorKind) ?? "no error"))
            if !isCorrupt(error) {
                Issue.record("\(name): expected SQLITE_CORRUPT, got \(String(describing: error))")
                record.failures += 1
            }
        case (true, "corrupt"?, _):
            // A damaged middle or last page: the schema and `items` read in full; `filler` fails.
            let dir = TemporaryDirectory()
            let path = try file.copy(into: dir)
            record.rounds += 1
            let db = try file.open(at: path)
            try await checkItems(db, manifest: manifest, name: name)
            #expect(try await userVersion(db) == file.userVersion)
            let error = await #expect(throws: SqlCipherError.self) {
                _ = try await db.query("SELECT count(*), sum(length(body)), min(body), max(body) FROM filler")
            }
            tally.add(error.map(errorKind) ?? "no error")
            if !isCorrupt(error) {
                Issue.record("\(name): expected SQLITE_CORRUPT when filler is read, got \(String(describing: error))")
                record.failures += 1
            }
        case (false, _, _):
            try checkUnreadable(file, record: &record, tally: &tally)
        default:
            Issue.record("\(name): the manifest has an expected error this test does not know: \(String(describing: file.expectedError))")
        }
    }

    /// Opens a readable file and checks everything in it, then the wrong-key and wrong-mode errors.
    private func checkReadable(_ file: FixtureManifest.File, manifest: FixtureManifest,
                               record: inout ScenarioRecord, tally: inout Tally) async throws {
        let name = file.file
        let dir = TemporaryDirectory()
        let path = try file.copy(into: dir)
        do {
            let db = try file.open(at: path)
            record.rounds += 1
            try await checkContent(db, file: file, manifest: manifest, rows: file.rows, userVersion: file.userVersion)
            #expect(db.isEncrypted == (file.keyKind != "none"))
            #expect(db.journalMode == (file.settings.journalMode == "wal" ? .wal : .rollback))
            tally.add("full content")
        }
        // Closed and checkpointed: the marker must still be nowhere on disk.
        if file.keyKind != "none" {
            for (entry, data) in dir.allFileContents() {
                #expect(data.range(of: Data(manifest.content.marker.utf8)) == nil, "\(name): marker readable in \(entry)")
            }
        }

        // A WAL file without its -wal: the five rows kept only in the -wal are not there.
        if file.walFile != nil {
            let bare = TemporaryDirectory()
            let barePath = try file.copy(into: bare, withWAL: false)
            let db = try file.open(at: barePath)
            record.rounds += 1
            let rows = try await db.query("SELECT count(*) AS n FROM items")
            #expect(rows.first?.get("n", as: Int.self) == file.rowsWithoutWal)
            #expect(try await userVersion(db) == file.userVersionWithoutWal)
            tally.add("without -wal: \(file.rowsWithoutWal ?? -1) rows")
        }

        // The wrong key of the same kind.
        let wrongDir = TemporaryDirectory()
        let wrongPath = try file.copy(into: wrongDir)
        record.inputs += 1
        let wrong = #expect(throws: SqlCipherError.self) { try file.openWithWrongKey(at: wrongPath) }
        tally.add("wrong key: " + (wrong.map(errorKind) ?? "no error"))
        if case .keyFailed? = wrong {} else {
            Issue.record("\(name): a wrong key must throw keyFailed, got \(String(describing: wrong))")
            record.failures += 1
        }

        if file.keyKind != "none" {
            // An encrypted file opened as plaintext.
            record.inputs += 1
            let plain = #expect(throws: SqlCipherError.self) { try Database(unencryptedPath: wrongPath) }
            tally.add("as plaintext: " + (plain.map(errorKind) ?? "no error"))
            if case .notPlaintextDatabase? = plain {} else {
                Issue.record("\(name): opening it without a key must throw notPlaintextDatabase, got \(String(describing: plain))")
                record.failures += 1
            }
        }

        // A 3.x file on 4.x without compatibility 3 (the 4.x defaults): refused as a wrong key.
        if file.format == "sqlcipher3", isSQLCipher4() {
            record.inputs += 1
            var settings = file.cipherSettings
            settings.compatibility = nil
            let error = #expect(throws: SqlCipherError.self) { try file.open(at: wrongPath, cipher: settings) }
            tally.add("4.x defaults: " + (error.map(errorKind) ?? "no error"))
            if case .keyFailed? = error {} else {
                Issue.record("\(name): 4.x defaults on a 3.x file must throw keyFailed, got \(String(describing: error))")
                record.failures += 1
            }
        }
        if file.walFile == nil || sqliteVersionIsAtLeast(3_016_000) {
            // The failed opens left the copy as it was, byte for byte, its -wal included: a failed
            // opening closes without checkpointing (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE).
            #expect(try sha256(wrongPath) == file.sha256, "\(name): a failed open changed the file")
            if file.walFile != nil {
                #expect(FileManager.default.fileExists(atPath: wrongPath + "-wal"), "\(name): a failed open removed the -wal")
                tally.add("failed open left the files alone")
            }
        } else {
            // SQLite 3.15.2 (SQLCipher 3.4.1) has no way to close without a checkpoint: closing the
            // failed connection (the last one) copies the frames as they are, still encrypted, and
            // deletes the -wal. The bytes change; the content must not.
            let changed = try sha256(wrongPath) != file.sha256
            tally.add(changed ? "failed open checkpointed the -wal" : "failed open left the files alone")
            let db = try file.open(at: wrongPath)
            try await checkContent(db, file: file, manifest: manifest, rows: file.rows, userVersion: file.userVersion)
        }
    }

    /// A format the loaded library cannot read (4.x files on 3.4.1): the exact typed error.
    private func checkUnreadable(_ file: FixtureManifest.File, record: inout ScenarioRecord, tally: inout Tally) throws {
        let name = file.file
        let dir = TemporaryDirectory()
        let path = try file.copy(into: dir)
        record.rounds += 1
        let error = #expect(throws: SqlCipherError.self) { try file.open(at: path) }
        tally.add(error.map(errorKind) ?? "no error")
        if file.settings.plaintextHeaderSize ?? 0 > 0 {
            // The setting itself needs 4.x: refused before the file is touched.
            guard case .unsupported? = error else {
                Issue.record("\(name): a plaintext header on 3.4.1 must throw unsupported, got \(String(describing: error))")
                record.failures += 1
                return
            }
        } else if case .keyFailed(let failedPath, _)? = error {
            #expect(failedPath == path)
        } else {
            Issue.record("\(name): 3.4.1 must refuse a 4.x file with keyFailed, got \(String(describing: error))")
            record.failures += 1
        }
        // Asking for the 4.x format explicitly is refused as unsupported, naming what it needs.
        record.inputs += 1
        var explicitSettings = file.cipherSettings
        explicitSettings.compatibility = 4
        let explicit = #expect(throws: SqlCipherError.self) { try file.open(at: path, cipher: explicitSettings) }
        tally.add("compatibility 4: " + (explicit.map(errorKind) ?? "no error"))
        if case .unsupported? = explicit {} else {
            Issue.record("\(name): compatibility 4 on 3.4.1 must throw unsupported, got \(String(describing: explicit))")
            record.failures += 1
        }
        #expect(try sha256(path) == file.sha256, "\(name): a refused open changed the file")
    }

    private func checkContent(_ db: Database, file: FixtureManifest.File, manifest: FixtureManifest,
                              rows: Int, userVersion expectedVersion: Int) async throws {
        let name = file.file
        #expect(try await userVersion(db) == expectedVersion, "\(name): user_version")
        let schema = try await db.query("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
        #expect(schema.compactMap { $0.get("sql", as: String.self) } == manifest.content.schema, "\(name): schema")
        try await checkItems(db, manifest: manifest, name: name)
        let filler = try await db.query("""
            SELECT count(*) AS n,
                   sum(body = substr(printf('filler-%03d-', id) || replace(hex(zeroblob(100)), '00', printf('%02d', id % 100)), 1, 200)) AS good,
                   min(length(body)) AS lo, max(length(body)) AS hi
            FROM filler
            """)
        #expect(filler.first?.get("n", as: Int.self) == manifest.content.fillerRows, "\(name): filler rows")
        #expect(filler.first?.get("good", as: Int.self) == manifest.content.fillerRows, "\(name): filler bodies")
        #expect(filler.first?.get("lo", as: Int.self) == manifest.content.fillerBodyLength)
        #expect(filler.first?.get("hi", as: Int.self) == manifest.content.fillerBodyLength)
        let marker = try await db.query("SELECT name FROM items WHERE id = ?", manifest.content.markerRowId)
        #expect(marker.first?.get("name", as: String.self) == manifest.content.marker)
        let integrity = try await db.query("PRAGMA integrity_check")
        #expect(integrity.map { $0.get(0, as: String.self) } == ["ok"], "\(name): integrity_check")
        if isSQLCipher4(), file.keyKind != "none" {
            let problems = try await db.query("PRAGMA cipher_integrity_check")
            #expect(problems.isEmpty, "\(name): cipher_integrity_check reports \(problems)")
        }
    }

    private func checkItems(_ db: Database, manifest: FixtureManifest, name: String) async throws {
        let rows = try await db.query("SELECT id, name, qty, price, data, typeof(data) AS kind FROM items ORDER BY id")
        #expect(rows.count == manifest.content.itemsRows, "\(name): items rows")
        for (row, item) in zip(rows, manifest.content.items) {
            #expect(row.get("id", as: Int64.self) == item.id)
            #expect(row.get("name", as: String.self) == item.name, "\(name): item \(item.id) name")
            #expect(row.get("qty", as: Int64.self) == item.qty, "\(name): item \(item.id) qty")
            #expect(row.get("price", as: Double.self) == item.price, "\(name): item \(item.id) price")
            if let expected = item.dataHex {
                #expect(row.get("kind", as: String.self) == "blob")
                #expect(row.get("data", as: Data.self).map(hex) == expected.lowercased(), "\(name): item \(item.id) data")
            } else {
                #expect(row["data"] == .null, "\(name): item \(item.id) data should be NULL")
            }
        }
    }
}

private func userVersion(_ db: Database) async throws -> Int? {
    try await db.query("PRAGMA user_version").first?.get(0, as: Int.self)
}

/// Whether `error` is SQLite's "database disk image is malformed" (SQLITE_CORRUPT, 11).
func isCorrupt(_ error: SqlCipherError?) -> Bool {
    if case .sqlite(11, _, _, _)? = error { return true }
    return false
}

/// The SHA-256 of a file, by the system's sha256sum (Foundation on Linux has no SHA-256).
func sha256(_ path: String) throws -> String {
    let result = try runChild("/usr/bin/sha256sum", [path])
    return String(result.stdout.prefix(64))
}
