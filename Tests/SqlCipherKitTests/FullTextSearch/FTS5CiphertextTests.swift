import Foundation
import Testing
@testable import SqlCipherKit

/// Proof on disk: the words an FTS5 index holds are encrypted like every other page. A marker word
/// indexed in an encrypted database appears in none of its files, open or closed; the same word
/// indexed in a plaintext database does, which shows the search for it works.
@Suite struct FTS5CiphertextTests {
    enum Kind: String, CaseIterable {
        case defaultSettings, plaintextHeader, unencrypted
    }

    /// 20 random lowercase letters: a word no page holds by chance.
    static func markerWord() -> String {
        String((0..<20).map { _ in Character(Unicode.Scalar(UInt8.random(in: 97...122))) })
    }

    static func open(_ kind: Kind, _ path: String) throws -> Database {
        switch kind {
        case .defaultSettings:
            return try Database(path: path, rawKey: rawKey(11))
        case .plaintextHeader:
            return try Database(path: path, key: .rawKey(rawKey(11), salt: Data("fts-header-salt!".utf8)),
                                cipher: CipherSettings(plaintextHeaderSize: 32))
        case .unencrypted:
            return try Database(unencryptedPath: path)
        }
    }

    /// The files of the directory that hold `marker`'s bytes, by name.
    static func filesHolding(_ marker: String, in dir: TemporaryDirectory) -> [String] {
        let bytes = Data(marker.utf8)
        return dir.allFileContents().filter { $0.1.range(of: bytes) != nil }.map { ($0.0 as NSString).lastPathComponent }.sorted()
    }

    @Test(.enabled(if: libraryHasFTS5() && isSQLCipher4(), "needs FTS5"), arguments: Kind.allCases)
    func theIndexedMarkerIsInNoEncryptedFile(kind: Kind) async throws {
        let dir = TemporaryDirectory("fts-disk-\(kind.rawValue)")
        let path = dir.path("search.db")
        let marker = Self.markerWord()
        let db = try Self.open(kind, path)
        try await db.migrate([
            FTSMigration("search") { ctx in
                try ctx.execute(CreateTable(TableName("docs")).column("id", .integer, .primaryKey).column("body", .text))
                try ctx.execute(CreateFTS5Table(TableName("docs_fts")).column("body").externalContent(TableName("docs"), rowid: "id"))
                // The index alone: the word reaches the files only as an FTS5 term.
                try ctx.execute(CreateFTS5Table(TableName("terms")).column("body").contentless())
            },
        ])
        try await db.execute("INSERT INTO docs(body) VALUES (?)", "confidential \(marker) memo")
        try await db.execute("INSERT INTO terms(rowid, body) VALUES (1, ?)", marker)
        let found = try await db.query(
            Select(col("rowid")).from(TableName("terms")).where(TableName("terms").match(FTS5Pattern(matchingAllTokensIn: marker)!)))
        #expect(found.count == 1)
        #expect(try await db.query(Select(col("rowid")).from(TableName("docs_fts"))
            .where(TableName("docs_fts").match(FTS5Pattern(matchingPhrase: "confidential \(marker)")!))).count == 1)

        // Open, before any checkpoint: the pages are in the -wal file.
        let whileOpen = Self.filesHolding(marker, in: dir)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        // Then merged into the main file, and closed.
        _ = try await db.query("PRAGMA wal_checkpoint(TRUNCATE)")
        let afterCheckpoint = Self.filesHolding(marker, in: dir)
        await db.close()
        let afterClose = Self.filesHolding(marker, in: dir)

        switch kind {
        case .defaultSettings, .plaintextHeader:
            #expect(whileOpen.isEmpty, "marker found in \(whileOpen)")
            #expect(afterCheckpoint.isEmpty, "marker found in \(afterCheckpoint)")
            #expect(afterClose.isEmpty, "marker found in \(afterClose)")
        case .unencrypted:
            // The control: the same search finds the word where nothing encrypts it.
            #expect(whileOpen.contains("search.db-wal"))
            #expect(afterCheckpoint.contains("search.db"))
            #expect(afterClose == ["search.db"])
        }
    }

    @Test(.enabled(if: libraryHasFTS5(), "needs FTS5")) func encryptingAPlaintextStoreEncryptsItsIndex() async throws {
        let dir = TemporaryDirectory()
        let marker = Self.markerWord()
        let plain = try Database(unencryptedPath: dir.path("plain.db"))
        try await plain.migrate([
            FTSMigration("search") { ctx in try ctx.execute(CreateFTS5Table(TableName("memo")).column("text")) },
        ])
        try await plain.execute("INSERT INTO memo(text) VALUES (?)", "a \(marker) memo")
        await plain.close()
        #expect(Self.filesHolding(marker, in: dir) == ["plain.db"])

        try Database.encrypt(plaintextAt: dir.path("plain.db"), to: dir.path("secret.db"), key: .rawKey(rawKey(12)))
        try FileManager.default.removeItem(atPath: dir.path("plain.db"))
        let db = try Database(path: dir.path("secret.db"), rawKey: rawKey(12))
        let memo = TableName("memo")
        #expect(try await db.query(Select(col("text")).from(memo).where(memo.match(FTS5Pattern(matchingAllTokensIn: marker)!)))
            .first?.get(0, as: String.self) == "a \(marker) memo")
        try await db.execute(FTS5Command.integrityCheck(memo))
        await db.close()
        #expect(Self.filesHolding(marker, in: dir).isEmpty)
    }
}
