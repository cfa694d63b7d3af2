import Foundation
import SqlCipherKit
import Testing

/// On both libraries, the plaintext entry points not covered by ``PlaintextHeaderDetectionTests``: a pool opened with
/// `unencryptedPath:`, a read-only `Database(unencryptedPath:)`, and a keyed pool without the
/// header setting. A SQLCipher file with a plaintext header longer than 100 bytes (bytes 0–100
/// look exactly like plain SQLite) is told apart from plain SQLite by each, and left unchanged.
@Suite struct PlaintextHeaderEntryPointsTests {
    @Test(arguments: [112, 1024])
    func poolsAndReadOnlyOpensSeeAPlaintextHeaderFile(headerSize: Int) throws {
        let dir = TemporaryDirectory()
        let path = dir.path("header.db")
        try PlaintextHeaderDetectionTests.makeFile(path, headerSize: headerSize)
        let before = try #require(FileManager.default.contents(atPath: path))
        func isNotPlaintext(_ error: any Error) -> Bool {
            if case SqlCipherError.notPlaintextDatabase = error { return true }
            return false
        }
        #expect { try DatabasePool(unencryptedPath: path) } throws: { isNotPlaintext($0) }
        #expect { try Database(unencryptedPath: path, readOnly: true) } throws: { isNotPlaintext($0) }
        // Keyed, but without the header setting: a key failure that names the plaintext header,
        // not advice to open it as plain SQLite (3.4.1 cannot read a SQLCipher 4 file at all).
        if isSQLCipher4() { #expect {
            try DatabasePool(path: path, key: "header-key", cipher: fastCipher)
        } throws: { error in
            guard case SqlCipherError.keyFailed(_, let reason) = error else { return false }
            return reason.contains("plaintext header") && !reason.contains("unencryptedPath")
        } }
        #expect(FileManager.default.contents(atPath: path) == before)
        let companions = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0 != "header.db" }
        #expect(companions.isEmpty, "\(companions)")
    }
}
