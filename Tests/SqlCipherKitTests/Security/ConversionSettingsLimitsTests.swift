import Foundation
import SqlCipherKit
import Testing

/// The limits on cipher settings hold for the conversions that write a new encrypted file, not
/// only for the initialisers: a KDF count past `Int32.max` (SQLCipher would keep its low 32 bits:
/// 4294967297 runs 1 iteration) and a plaintext header past byte 96 (the schema would be readable
/// on disk) are refused with a typed error, and no target is left.
@Suite struct ConversionSettingsLimitsTests {
    static func weakSettings() -> [CipherSettings] {
        var settings = [CipherSettings(kdfIterations: 4_294_967_297), CipherSettings(kdfIterations: 0)]
        if isSQLCipher4() { settings.append(CipherSettings(plaintextHeaderSize: 2048)) }
        return settings
    }

    private static func isRefusal(_ error: any Error) -> Bool {
        guard let error = error as? SqlCipherError else { return false }
        switch error {
        case .invalidQuery, .unsupported: return true
        default: return false
        }
    }

    private static func makePlaintext(_ path: String) async throws {
        let db = try Database(unencryptedPath: path)
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES ('plain row')")
        await db.close()
    }

    @Test func encryptingAPlaintextFileRefusesWeakSettings() async throws {
        for cipher in Self.weakSettings() {
            let dir = TemporaryDirectory()
            let source = dir.path("plain.db"), target = dir.path("enc.db")
            try await Self.makePlaintext(source)
            do {
                try Database.encrypt(plaintextAt: source, to: target, key: "conversion pass", cipher: cipher)
                Issue.record("\(cipher) was accepted")
            } catch {
                #expect(Self.isRefusal(error), "\(cipher): \(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: target), "\(cipher)")
        }
    }

    @Test func encryptingInPlaceRefusesWeakSettingsAndKeepsThePlaintextFile() async throws {
        for cipher in Self.weakSettings() {
            let dir = TemporaryDirectory()
            let path = dir.path("plain.db")
            try await Self.makePlaintext(path)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            do {
                try Database.encryptInPlace(path: path, key: "conversion pass", cipher: cipher)
                Issue.record("\(cipher) was accepted")
            } catch {
                #expect(Self.isRefusal(error), "\(cipher): \(error)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
            #expect(left == ["plain.db"], "\(left)")
        }
    }

    @Test func exportingRefusesWeakSettings() async throws {
        for cipher in Self.weakSettings() {
            let dir = TemporaryDirectory()
            let db = try Database(path: dir.path("source.db"), rawKey: rawKey())
            try await db.execute("CREATE TABLE t(x)")
            let target = dir.path("copy.db")
            do {
                try await db.export(to: target, key: "conversion pass", cipher: cipher)
                Issue.record("\(cipher) was accepted")
            } catch {
                #expect(Self.isRefusal(error), "\(cipher): \(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: target), "\(cipher)")
            await db.close()
        }
    }
}
