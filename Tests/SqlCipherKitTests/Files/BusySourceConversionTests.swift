import Foundation
import Testing
@testable import SqlCipherKit

/// A conversion whose source another process holds locked (an exclusive transaction left open,
/// in a child that says `held` before the conversion starts): the conversion changes nothing and
/// says what is happening and what to do. It used to fail with SQLite's bare "database is locked"
/// (`SqlCipherError.sqlite`, code 5) from its opening, after the busy timeout.
@Suite(.serialized) struct BusySourceConversionTests {
    @Test(arguments: ["encryptInPlace", "encrypt"])
    func aSourceLockedByAnotherProcessIsNamedAsSuch(_ how: String) async throws {
        let dir = TemporaryDirectory()
        let path = dir.path("held.db"), copy = dir.path("copy.db")
        try await ConversionTests().makePlaintext(path, rows: 5)
        let child = try KillableChild(helperArguments: ["hold-lock", path, "none", "exclusive"])
        #expect(child.waitForLine(startingWith: "held", timeout: 60) != nil, "the child took no lock: \(child.lines)")
        do {
            if how == "encrypt" {
                try Database.encrypt(plaintextAt: path, to: copy, key: "k", cipher: fastCipher)
            } else {
                try Database.encryptInPlace(path: path, key: "k", cipher: fastCipher)
            }
            Issue.record("the conversion ran on a file another process holds locked")
        } catch SqlCipherError.conversionFailed(_, _, let reason) {
            #expect(reason.contains("holds a lock on the file"), "\(reason)")
            #expect(reason.contains("close every connection"), "\(reason)")
        } catch {
            Issue.record("not a conversionFailed that says what is happening: \(error)")
        }
        #expect(child.killAndCollect())
        // Nothing changed: the original is the plaintext it was, with no leftovers.
        let db = try Database(unencryptedPath: path)
        #expect(try await db.query("SELECT count(*) FROM items")[0].get(0, as: Int.self) == 5)
        await db.close()
        for leftover in [copy, path + ".sqlcipherkit-encrypting", path + ".sqlcipherkit-converting"] {
            #expect(!FileManager.default.fileExists(atPath: leftover), "\(leftover)")
        }
    }
}
