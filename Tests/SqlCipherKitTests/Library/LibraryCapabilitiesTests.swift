import Foundation
import SqlCipherKit
import Testing

/// `SqlCipherLibrary.capabilities` matches what actually works through `Database` on the loaded
/// library, and `require` refuses an older library with a typed error.
@Suite struct LibraryCapabilitiesTests {
    /// A statement that uses each feature, run through the public API on `items(id, name, extra)`.
    static func use(_ feature: LibraryCapabilities.Feature, _ db: Database) async throws {
        switch feature {
        case .upsert:
            try await db.execute("INSERT INTO items(id, name) VALUES (1, 'a') ON CONFLICT(id) DO UPDATE SET name = 'b'")
        case .returning:
            _ = try await db.query("INSERT INTO items(name) VALUES ('r') RETURNING id")
        case .dropColumn:
            try await db.execute("ALTER TABLE items DROP COLUMN extra")
        case .renameColumn:
            try await db.execute("ALTER TABLE items RENAME COLUMN name TO title")
        case .windowFunctions:
            _ = try await db.query("SELECT row_number() OVER (ORDER BY id) FROM items")
        case .json:
            _ = try await db.query("SELECT json_extract('{\"k\":1}', '$.k')")
        case .jsonOperators:
            _ = try await db.query("SELECT '{\"k\":1}' -> '$.k', '{\"k\":1}' ->> 'k'")
        case .fts5:
            try await db.execute("CREATE VIRTUAL TABLE notes USING fts5(body)")
        case .cipherCompatibility:
            // The SQLCipher 4 format named explicitly: `unsupported` on a library without the pragma.
            _ = try Database(path: ":memory:", rawKey: rawKey(), cipher: .sqlcipher4)
        case .cipherPlaintextHeader:
            _ = try Database(path: ":memory:", key: .rawKey(rawKey(), salt: Data(repeating: 7, count: 16)),
                             cipher: CipherSettings(plaintextHeaderSize: 32))
        case .cipherSettings:
            guard !(try await db.query("PRAGMA cipher_settings")).isEmpty else {
                throw SqlCipherError.unsupported(feature: "PRAGMA cipher_settings", requires: "SQLCipher 4.1",
                                                 loaded: (try loadedLibrary()).cipherVersion)
            }
        }
    }

    @Test(arguments: LibraryCapabilities.Feature.allCases)
    func aFeatureIsReportedExactlyWhenItWorks(_ feature: LibraryCapabilities.Feature) async throws {
        let library = try loadedLibrary()
        let db = try Database(path: ":memory:", rawKey: rawKey())
        try await db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, extra TEXT)")
        var worked = true
        do { try await Self.use(feature, db) } catch is SqlCipherError { worked = false }
        #expect(library.capabilities.features.contains(feature) == worked, "\(feature) on \(library.cipherVersion)")
        #expect(library.capabilities.missing.contains(feature) == !worked)
    }

    @Test func version4HasEveryProbedFeatureAnd3HasNone() throws {
        let library = try loadedLibrary()
        // Debian's builds: 4.6.1 on SQLite 3.46.1 with JSON and FTS5; 3.4.1 on SQLite 3.15.2 without.
        if isSQLCipher4() {
            #expect(library.capabilities.missing.isEmpty)
        } else {
            #expect(library.capabilities.features.isEmpty)
        }
    }

    @Test func aVersionFloorRefusesAnOlderLibrary() throws {
        let library = try loadedLibrary()
        #expect(try library.require() === library)
        if isSQLCipher4() {
            #expect(try library.require(minimumCipherVersion: "4.0", .json, .upsert) === library)
            #expect(throws: SqlCipherError.self) { try library.require(minimumCipherVersion: "99") }
        } else {
            #expect {
                try library.require(minimumCipherVersion: "4.0")
            } throws: { error in
                guard case SqlCipherError.libraryTooOld(_, let required, let missing) = error else { return false }
                return required == "SQLCipher 4.0" && missing == ["SQLCipher 4.0 or later"]
                    && String(describing: error).contains("libsqlcipher1")
            }
            #expect(throws: SqlCipherError.libraryTooOld(
                loaded: "SQLCipher \(library.cipherVersion) (SQLite \(library.sqliteVersion)) at \(library.path)",
                required: "json", missing: ["json"])) {
                try library.require(.json)
            }
        }
    }

    @Test func theDoctorShowsTheFeaturesAndWarnsOnSQLCipher3() throws {
        let result = try runChild(productPath("sqlcipher-doctor"), ["--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let library = try #require(report["library"] as? [String: Any])
        let features = try #require(library["features"] as? [String])
        let missing = try #require(library["missing_features"] as? [String])
        let capabilities = try loadedLibrary().capabilities
        #expect(Set(features) == Set(capabilities.features.map(\.rawValue)))
        #expect(missing == capabilities.missing.map(\.rawValue))
        let warnings = try #require(report["warnings"] as? [String])
        #expect(warnings.isEmpty == isSQLCipher4())
        // The warning explains how to install SQLCipher 4.
        #expect(warnings.allSatisfy { $0.contains("apt-get install -t bookworm-backports libsqlcipher1") })
        let text = try runChild(productPath("sqlcipher-doctor"), [])
        #expect(text.stdout.contains("features"))
        #expect(text.stdout.contains("warning: SQLCipher 3") == !isSQLCipher4())
        #expect(text.stdout.contains("libsqlcipher1") == !isSQLCipher4())
    }
}
