import Foundation
import Testing
@testable import SqlCipherKit

/// The relocation audit covers every slot whose symbol the library defines itself, not only its
/// `sqlite3_*` API: SQLCipher's own `sqlcipher_*` functions and its other exported names too,
/// counted per family and shown by the doctor.
@Suite struct AuditFamilyTests {
    /// The families' counts as the ELF file itself states them: relocations of the kinds that
    /// hold a symbol's address, against symbols the file defines (IFUNC excepted), by name.
    private func countsFromTheFile(_ path: String) throws -> (sqlite3: Int, sqlcipher: Int, other: Int) {
        var defined = Set<String>()
        for line in try Linking.tool("nm", ["-D", "--defined-only", path]).split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 3 && fields[1] != "i" { defined.insert(String(fields[2])) }
        }
        let slotKinds: Set<String> = ["R_X86_64_64", "R_X86_64_GLOB_DAT", "R_X86_64_JUMP_SLOT",
                                      "R_AARCH64_ABS64", "R_AARCH64_GLOB_DAT", "R_AARCH64_JUMP_SLOT"]
        var counts = (sqlite3: 0, sqlcipher: 0, other: 0)
        for line in try Linking.tool("readelf", ["-rW", path]).split(separator: "\n") {
            // "<offset> <info> <type> <symbol value> <name>[@version] + <addend>"
            let fields = line.split(separator: " ")
            guard fields.count >= 5, slotKinds.contains(String(fields[2])) else { continue }
            let name = String(fields[4].split(separator: "@").first ?? fields[4])
            guard defined.contains(name) else { continue }
            if name.hasPrefix("sqlite3_") { counts.sqlite3 += 1 } else if name.hasPrefix("sqlcipher_") { counts.sqlcipher += 1 } else { counts.other += 1 }
        }
        return counts
    }

    @Test func theAuditChecksEveryRelocationOfEveryFamily() throws {
        let library = try SqlCipherLibrary.shared
        let audit = library.bindingAudit
        let expected = try countsFromTheFile(library.path)
        #expect(audit.sqlite3Checked == expected.sqlite3)
        #expect(audit.sqlcipherChecked == expected.sqlcipher)
        #expect(audit.otherChecked == expected.other)
        #expect(audit.checked == audit.sqlite3Checked + audit.sqlcipherChecked + audit.otherChecked)
        // Both Debian builds call into every family through slots (4.6.1: 435, 15, 8; 3.4.1: 355, 50, 5).
        #expect(audit.sqlite3Checked > 300)
        #expect(audit.sqlcipherChecked > 0)
        #expect(audit.otherChecked > 0)
        #expect(audit.foreign.isEmpty)
    }

    @Test(arguments: [false, true])
    func aChildWithLibsqlite3AlreadyInItReportsEveryFamilyLocal(preload: Bool) throws {
        // The helper links libsqlite3, so it is in the global scope before the bridge loads;
        // preloading it puts it first of all. Every family still binds inside libsqlcipher.
        let audit = try SqlCipherLibrary.shared.bindingAudit
        let environment: [String: String?] = preload ? ["LD_PRELOAD": Linking.libsqlite3] : [:]
        let result = try runHelper(["load-library", try Linking.libraryUnderTest()], environment: environment)
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        let outcome = try #require(try Linking.jsonLines(result.stdout).first, "\(result.stdout)\n\(result.stderr)")
        #expect(outcome["outcome"] as? String == "loaded", "\(outcome)")
        #expect((outcome["other_libraries"] as? [String] ?? []).contains { $0.hasSuffix("/libsqlite3.so.0") })
        #expect(outcome["checked"] as? Int == audit.checked)
        #expect(outcome["checked_sqlite3"] as? Int == audit.sqlite3Checked)
        #expect(outcome["checked_sqlcipher"] as? Int == audit.sqlcipherChecked)
        #expect(outcome["checked_other"] as? Int == audit.otherChecked)
    }

    /// A function libsqlcipher defines and calls through a relocation, of the given family.
    private func calledSymbol(family: String, in library: String) throws -> String {
        if family == "sqlcipher" { return "sqlcipher_codec_pragma" }   // in both 4.6.1 and 3.4.1
        let relocated = Set(try Linking.tool("readelf", ["-rW", library]).split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            return fields.count >= 5 ? String(fields[4].split(separator: "@").first ?? fields[4]) : nil
        })
        let names = try Linking.tool("nm", ["-D", "--defined-only", library]).split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            return fields.count == 3 && fields[1] == "T" ? String(fields[2]) : nil
        }
        return try #require(names.first { !$0.hasPrefix("sqlite3_") && !$0.hasPrefix("sqlcipher_") && relocated.contains($0) })
    }

    @Test(arguments: ["sqlcipher", "other"])
    func aForeignDefinitionOfANonSQLiteFunctionIsABindingConflict(family: String) throws {
        // A preloaded library defines one of libsqlcipher's own non-sqlite3 functions, and
        // libsqlcipher is preloaded after it, so it is already loaded, without isolation, when the
        // bridge asks for it: its slot for that function points into the impostor. The sqlite3_*
        // slots are all local; only the audit of the other families can see this.
        let directory = TemporaryDirectory()
        let library = try Linking.libraryUnderTest()
        let symbol = try calledSymbol(family: family, in: library)
        let source = directory.path("impostor.c"), impostor = directory.path("libimpostor.so")
        try Data("""
            #include <stdlib.h>
            void \(symbol)(void) { abort(); }   /* never reached: the bridge refuses first */

            """.utf8).write(to: URL(fileURLWithPath: source))
        try Linking.compile([source], output: impostor, flags: ["-shared", "-fPIC"])
        let result = try runHelper(["load-library", library],
                                   environment: ["LD_PRELOAD": "\(impostor) \(library)",
                                                 SqlCipherLibrary.environmentVariable: nil])
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        let outcome = try #require(try Linking.jsonLines(result.stdout).first, "\(result.stdout)\n\(result.stderr)")
        #expect(outcome["case"] as? String == "bindingConflict", "\(outcome)")
        #expect(outcome["symbol"] as? String == symbol)
        #expect(outcome["foreign"] as? Int == 1)
        #expect(outcome["checked"] as? Int == (try SqlCipherLibrary.shared).bindingAudit.checked)
        #expect((outcome["boundTo"] as? String)?.hasSuffix("/libimpostor.so") == true)
        #expect((outcome["description"] as? String)?.contains("sqlcipher_* and others") == true)
    }

    @Test func theDoctorShowsTheCountsPerFamily() throws {
        let audit = try SqlCipherLibrary.shared.bindingAudit
        let environment = try Linking.childEnvironment()
        let json = try runChild(productPath("sqlcipher-doctor"), ["--json"], environment: environment)
        #expect(json.status == 0, "\(json.stdout)\n\(json.stderr)")
        let section = try #require(try Linking.jsonObject(json.stdout)["binding_audit"] as? [String: Any])
        // The existing keys keep their place and meaning; the families come after them.
        #expect(section["checked"] as? Int == audit.checked)
        #expect(section["checked_sqlite3"] as? Int == audit.sqlite3Checked)
        #expect(section["checked_sqlcipher"] as? Int == audit.sqlcipherChecked)
        #expect(section["checked_other"] as? Int == audit.otherChecked)
        let keys = try #require(String(json.stdout.split(separator: "\n").joined())
            .range(of: "\"binding_audit\"")).upperBound
        let order = ["\"status\"", "\"supported\"", "\"checked\"", "\"foreign_count\"", "\"foreign\"",
                     "\"checked_sqlite3\"", "\"checked_sqlcipher\"", "\"checked_other\""]
        let text = String(json.stdout.split(separator: "\n").joined())
        let positions = order.compactMap { text.range(of: $0, range: keys..<text.endIndex)?.lowerBound }
        #expect(positions.count == order.count)  // JSON keys are sorted (docs/doctor.md)

        let report = try runChild(productPath("sqlcipher-doctor"), [], environment: environment)
        #expect(report.stdout.contains("\(audit.checked) relocations against the library's own functions checked "
            + "(\(audit.sqlite3Checked) sqlite3_*, \(audit.sqlcipherChecked) sqlcipher_*, \(audit.otherChecked) other)"),
            "\(report.stdout)")
    }
}
