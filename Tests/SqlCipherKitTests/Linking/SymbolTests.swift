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
        // Only the objects of sources the target has now: an incremental build leaves the object of
        // a deleted or renamed source behind, which would define its symbols a second time.
        let sources = try sourceFileNames(of: target)
        return files.filter { $0.hasSuffix(".o") && sources.contains(String($0.dropLast(2))) }
            .map { folder.appendingPathComponent($0).path }.sorted()
    }

    /// The names of the target's source files (`Database.swift`, `loader.c`), found from this
    /// file's path in the checkout.
    private func sourceFileNames(of target: String) throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("Sources/\(target)")
        guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        return Set(walker.compactMap { ($0 as? String).map { ($0 as NSString).lastPathComponent } })
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

    // MARK: The bridge's scb_* functions stay inside the image that embeds them

    /// The scb_* names an ELF file exports in its dynamic symbol table (what other objects can bind to).
    private func exportedBridgeSymbols(_ path: String) throws -> [String] {
        try Linking.tool("nm", ["-D", "--defined-only", path]).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && fields[2].hasPrefix("scb_") ? String(fields[2]) : nil
        }
    }

    /// The type letter `nm` gives `name` in the file's full symbol table (`T` global, `t` local).
    private func symbolType(_ name: String, in path: String) throws -> String? {
        try Linking.tool("nm", ["--defined-only", path]).split(separator: "\n").lazy.compactMap { line -> String? in
            let fields = line.split(separator: " ")
            return fields.count == 3 && fields[2] == name ? String(fields[1]) : nil
        }.first
    }

    /// swiftc from the toolchain that runs the tests.
    private func swiftc() throws -> String {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/opt/swift/usr/bin", "/usr/bin"]
        return try #require(folders.map { $0 + "/swiftc" }.first { FileManager.default.isExecutableFile(atPath: $0) },
                            "swiftc is not on PATH")
    }

    @Test(arguments: ["sqlcipher-doctor", "sqlcipherkit-test-helper", "sqlcipherkit-bench"])
    func theExecutablesLinkTheBridgeButExportNone(product: String) throws {
        let path = productPath(product)
        #expect(try exportedBridgeSymbols(path).isEmpty)
        // The functions are in the executable, as local symbols: hidden visibility made them so.
        #expect(try symbolType("scb_load", in: path) == "t")
        #expect(try symbolType("scb_step", in: path) == "t")
    }

    @Test func aSharedLibraryThatEmbedsThePackageExportsNoBridgeFunction() throws {
        // What a `.dynamic` library product of SqlCipherKit is: the package's own object files
        // (Swift and the C bridge) linked into one shared object.
        let directory = TemporaryDirectory()
        let library = directory.path("libSqlCipherKitEmbedded.so")
        let objects = try objects(of: "SqlCipherKit") + objects(of: "CSqlCipherBridge")
        let link = try runChild(try swiftc(), ["-emit-library", "-o", library] + objects)
        #expect(link.status == 0, "\(link.stderr)")
        let exported = try exportedBridgeSymbols(library)
        #expect(exported.isEmpty, "exported: \(exported.prefix(10))")
        #expect(try symbolType("scb_load", in: library) == "t")
        // The Swift API is exported: the listing is real, not empty for another reason.
        let swiftSymbols = try Linking.tool("nm", ["-D", "--defined-only", library]).split(separator: "\n")
            .filter { $0.contains("12SqlCipherKit") }
        #expect(swiftSymbols.count > 100)

        // A client program linked against it loads and proves the library: the hidden functions
        // are reached from the Swift code inside the same shared object.
        let source = directory.path("main.swift"), client = directory.path("client")
        try Data("""
            import SqlCipherKit
            let library = try SqlCipherLibrary.shared
            print(library.cipherVersion)
            print(library.bindingAudit.checked)

            """.utf8).write(to: URL(fileURLWithPath: source))
        let products = buildProductsDirectory()
        let compile = try runChild(try swiftc(), [
            source, "-I", products.appendingPathComponent("Modules").path,
            "-Xcc", "-fmodule-map-file=" + products.appendingPathComponent("CSqlCipherBridge.build/module.modulemap").path,
            "-L", directory.url.path, "-lSqlCipherKitEmbedded", "-o", client,
        ])
        #expect(compile.status == 0, "\(compile.stderr)")
        #expect(try exportedBridgeSymbols(client).isEmpty)
        let run = try runChild(client, [], environment: try Linking.childEnvironment(["LD_LIBRARY_PATH": directory.url.path]))
        let loaded = try SqlCipherLibrary.shared
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout == "\(loaded.cipherVersion)\n\(loaded.bindingAudit.checked)\n")
    }

    @Test func theBridgeCompiledIntoASharedObjectByAnyCompilerExportsNothing() throws {
        // The hidden visibility comes from the header itself, not from build flags: gcc building
        // the bridge's C files into a shared object exports no scb_ name either, and the package's
        // other C targets, which call scb_* functions, still link into the same image.
        let directory = TemporaryDirectory()
        let library = directory.path("libbridge.so")
        try Linking.compile(Linking.bridgeCFiles, output: library, flags: ["-shared", "-fPIC"], libraries: ["-ldl", "-lpthread"])
        #expect(try exportedBridgeSymbols(library).isEmpty)
        #expect(try symbolType("scb_load", in: library) == "t")
        let vfs = Linking.root.appendingPathComponent("Sources/CSqlCipherTestVFS")
        let withVFS = directory.path("libbridge-vfs.so")
        try Linking.compile(Linking.bridgeCFiles + [vfs.appendingPathComponent("faultvfs.c").path], output: withVFS,
                            flags: ["-shared", "-fPIC", "-D_GNU_SOURCE", "-I", vfs.appendingPathComponent("include").path,
                                    "-Wl,--no-undefined"],
                            libraries: ["-ldl", "-lpthread"])
        #expect(try exportedBridgeSymbols(withVFS).isEmpty)
    }
}
