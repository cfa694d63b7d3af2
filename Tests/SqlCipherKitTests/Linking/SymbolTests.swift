import Foundation
import Testing
@testable import SqlCipherKit

/// What the static linker saw: no product of the package binds an sqlite3_* symbol at link time
/// or needs libsqlite3 / libsqlcipher, except the test helper and the test binary, which link
/// libsqlite3 on purpose.
@Suite struct SymbolTests {
    /// The object files of a target in the build folder.
    private func objects(of target: String) throws -> [String] {
        let folder = buildProductsDirectory().appendingPathComponent("\(target).build")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        return files.filter { $0.hasSuffix(".o") }.map { folder.appendingPathComponent($0).path }.sorted()
    }

    @Test func theLibraryObjectsReferenceNoSQLiteSymbol() throws {
        let bridge = try objects(of: "CSqlCipherBridge")
        let swift = try objects(of: "SqlCipherKit")
        #expect(bridge.count >= 3)
        #expect(swift.count >= 10)
        for object in bridge + swift {
            #expect(try Linking.undefinedSymbols(object).isEmpty, "\(object)")
            // Nor does the package define sqlite3_* names that could interpose on a real SQLite.
            #expect(try Linking.definedSymbols(object).isEmpty, "\(object)")
        }
        // The bridge does reach libc's loader: the objects are real, the check is not vacuous.
        #expect(try bridge.contains { try !Linking.undefinedSymbols($0, prefix: "dlopen").isEmpty })
    }

    @Test func theBridgeHeaderDeclaresNoSQLiteName() throws {
        // What Swift imports is the header after preprocessing: comments gone, includes expanded.
        let header = Linking.bridgeSources.appendingPathComponent("include/CSqlCipherBridge.h").path
        let preprocessed = try Linking.tool("gcc", ["-std=c11", "-E", "-P", header])
        #expect(preprocessed.contains("scb_load"))
        #expect(!preprocessed.contains("sqlite3"))
    }

    @Test func theDoctorNeedsNoSQLiteLibrary() throws {
        let doctor = productPath("sqlcipher-doctor")
        let needed = try Linking.neededLibraries(doctor)
        #expect(needed.contains { $0.hasPrefix("libc.so") }, "NEEDED: \(needed)")
        #expect(!needed.contains { $0.hasPrefix("libsqlite3") || $0.hasPrefix("libsqlcipher") }, "NEEDED: \(needed)")
        #expect(try Linking.undefinedSymbols(doctor).isEmpty)
        #expect(try Linking.definedSymbols(doctor).isEmpty)
    }

    @Test func theTestHelperLinksLibsqlite3OnPurpose() throws {
        let helper = productPath("sqlcipherkit-test-helper")
        let needed = try Linking.neededLibraries(helper)
        #expect(needed.contains("libsqlite3.so.0"), "NEEDED: \(needed)")
        #expect(!needed.contains { $0.hasPrefix("libsqlcipher") })
        let undefined = try Linking.undefinedSymbols(helper)
        #expect(undefined.contains("sqlite3_libversion"))
        // Only plaintext SQLite functions: nothing SQLCipher adds.
        #expect(!undefined.contains { $0 == "sqlite3_key" || $0 == "sqlite3_rekey" || $0.hasPrefix("sqlite3_key_v2") })
    }
}
