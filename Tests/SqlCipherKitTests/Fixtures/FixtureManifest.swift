import Foundation
import SqlCipherKit

/// Fixtures/fixtures.json: the files made by the real sqlcipher 3.4.1 and 4.6.1 CLIs and what each
/// must contain (see Fixtures/README.md).
struct FixtureManifest: Decodable, Sendable {
    struct Content: Decodable, Sendable {
        let schema: [String]
        let userVersion: Int
        let itemsRows: Int
        let items: [Item]
        let fillerRows: Int
        let fillerBodyLength: Int
        let marker: String
        let markerRowId: Int64
    }

    struct Item: Decodable, Sendable {
        let id: Int64
        let name: String
        let qty: Int64?
        let price: Double?
        let dataHex: String?
    }

    struct Settings: Decodable, Sendable {
        let pageSize: Int
        let journalMode: String
        let kdfIter: Int?
        let compatibility: Int?
        let plaintextHeaderSize: Int?
        let salt: String?
    }

    struct Damage: Decodable, Sendable {
        let kind: String
        let page: Int
    }

    struct File: Decodable, Sendable {
        let file: String
        let toolVersion: String
        let format: String
        let keyKind: String
        let key: String?
        let settings: Settings
        let userVersion: Int
        let rows: Int
        let expectedError: String?
        let wrongKeyError: String?
        let readableBy: [String]
        let openPragmas: [String: [String]]
        let size: Int
        let sha256: String
        let damage: Damage?
        let walFile: String?
        let rowsWithoutWal: Int?
        let userVersionWithoutWal: Int?
    }

    let content: Content
    let files: [File]

    /// The manifest's directory.
    static let directory = repositoryRoot().appendingPathComponent("Fixtures")

    /// The manifest, decoded once.
    static let shared: Result<FixtureManifest, any Error> = Result {
        let data = try Data(contentsOf: directory.appendingPathComponent("fixtures.json"))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(FixtureManifest.self, from: data)
    }

    /// The file names, for parameterized tests (empty when the manifest cannot be read, which
    /// ``FixtureTests/manifestIsComplete()`` reports).
    static var fileNames: [String] { (try? shared.get().files.map(\.file)) ?? [] }

    func file(named name: String) -> File? { files.first { $0.file == name } }
}

extension FixtureManifest.File {
    /// Whether the loaded library can decode this file's format.
    /// Whether the loaded library reads the file: the manifest names the two Debian releases; a
    /// later SQLCipher 4 release (run with SQLCIPHERKIT_LIBRARY) reads what 4.6.1 reads, since
    /// the 4.x file format has not changed since 4.0.
    var isReadableByLoadedLibrary: Bool {
        if readableBy.contains(Reliability.libraryVersion) { return true }
        let version = (try? SqlCipherLibrary.shared)?.cipherVersionComponents ?? []
        return version.first == 4 && !version.lexicographicallyPrecedes([4, 6, 1]) && readableBy.contains("4.6.1")
    }

    /// The cipher settings a reader needs, derived from the manifest's settings (not from its
    /// pragma list, which the tests compare against instead). A 4.x file gets no compatibility
    /// setting: that is how a user opens it, and how 3.4.1 must refuse it.
    var cipherSettings: CipherSettings {
        var cipher = CipherSettings()
        let formatDefaults: (page: Int, kdf: Int) = format == "sqlcipher3" ? (1024, 64_000) : (4096, 256_000)
        if format == "sqlcipher3" { cipher.compatibility = 3 }
        if settings.pageSize != formatDefaults.page { cipher.pageSize = settings.pageSize }
        if let kdf = settings.kdfIter, kdf != formatDefaults.kdf { cipher.kdfIterations = kdf }
        if let header = settings.plaintextHeaderSize, header > 0 { cipher.plaintextHeaderSize = header }
        return cipher
    }

    /// The raw key bytes of a `raw` or `raw+salt` file (the first 32 bytes of the hex).
    var rawKeyBytes: Data? {
        guard keyKind.hasPrefix("raw"), let key, let all = bytes(fromHex: key) else { return nil }
        return all.prefix(32)
    }

    /// The salt of a `raw+salt` file.
    var saltBytes: Data? {
        guard keyKind == "raw+salt", let key, let all = bytes(fromHex: key), all.count == 48 else { return nil }
        return all.suffix(16)
    }

    /// Opens the copy at `path` the way the manifest says, with `cipher` (or the derived settings).
    func open(at path: String, cipher: CipherSettings? = nil) throws -> Database {
        let cipher = cipher ?? cipherSettings
        switch keyKind {
        case "none":
            return try Database(unencryptedPath: path)
        case "raw":
            return try Database(path: path, rawKey: rawKeyBytes ?? Data(), cipher: cipher)
        case "raw+salt":
            return try Database(path: path, key: .rawKey(rawKeyBytes ?? Data(), salt: saltBytes ?? Data()), cipher: cipher)
        default:
            return try Database(path: path, key: key ?? "", cipher: cipher)
        }
    }

    /// Opens the copy at `path` with a wrong key of the same kind (the manifest's wrong keys:
    /// `wrong-passphrase`, 32 zero bytes, or 32 zero bytes with the right salt).
    func openWithWrongKey(at path: String) throws -> Database {
        switch keyKind {
        case "none":
            return try Database(path: path, key: "wrong-passphrase")
        case "raw":
            return try Database(path: path, rawKey: Data(count: 32), cipher: cipherSettings)
        case "raw+salt":
            return try Database(path: path, key: .rawKey(Data(count: 32), salt: saltBytes ?? Data()), cipher: cipherSettings)
        default:
            return try Database(path: path, key: "wrong-passphrase", cipher: cipherSettings)
        }
    }

    /// Copies the file (and its `-wal`, unless `withWAL` is false) into `directory` under the same
    /// base name: fixtures are never opened in place, because opening a WAL file checkpoints and
    /// deletes its `-wal`.
    func copy(into directory: TemporaryDirectory, withWAL: Bool = true) throws -> String {
        let source = FixtureManifest.directory.appendingPathComponent(file)
        let target = directory.path(file)
        try FileManager.default.copyItem(atPath: source.path, toPath: target)
        if withWAL, let walFile {
            try FileManager.default.copyItem(
                atPath: FixtureManifest.directory.appendingPathComponent(walFile).path, toPath: target + "-wal")
        }
        return target
    }
}
