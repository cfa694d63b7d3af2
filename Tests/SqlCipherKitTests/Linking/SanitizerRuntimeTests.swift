import Foundation
import Testing
@testable import SqlCipherKit

/// `unsupportedRuntime` says what the cause is and what to do: a sanitizer runtime on glibc is
/// told to run without the sanitizer (never to move to glibc); a platform without RTLD_DEEPBIND
/// keeps the platform advice.
@Suite struct SanitizerRuntimeTests {
    /// The shared runtime gcc links for `-fsanitize=<name>` (libasan.so.8, libtsan.so.2 on Debian 12).
    private func runtime(_ name: String) throws -> String {
        let path = try Linking.tool("gcc", ["-print-file-name=lib\(name).so"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        try #require(resolved.hasPrefix("/") && FileManager.default.fileExists(atPath: resolved),
                     "gcc has no lib\(name).so: run scripts/install-deps.sh")
        return resolved
    }

    @Test(arguments: [("asan", "AddressSanitizer"), ("tsan", "ThreadSanitizer")])
    func aPreloadedSanitizerRuntimeIsNamedAsTheCause(runtime name: String, sanitizer: String) throws {
        // The Swift helper, not instrumented, with the sanitizer's runtime preloaded: the runtime
        // (and its dlopen interceptor) is in the process, exactly as in a -fsanitize build.
        let result = try runHelper(["load-library", try Linking.libraryUnderTest()], environment: [
            "LD_PRELOAD": try runtime(name), "ASAN_OPTIONS": "detect_leaks=0", "TSAN_OPTIONS": "report_bugs=0",
            SqlCipherLibrary.environmentVariable: nil,
        ])
        #expect(!result.signaled, "the child crashed: \(result.stderr)")
        #expect(!result.stderr.contains("incompatible with sanitizer runtime"), "\(result.stderr)")
        let outcome = try #require(try Linking.jsonLines(result.stdout).first, "\(result.stdout)\n\(result.stderr)")
        #expect(outcome["case"] as? String == "unsupportedRuntime", "\(outcome)")
        let reason = outcome["reason"] as? String ?? ""
        #expect(reason.contains("sanitizer runtime (\(sanitizer))"), "\(reason)")
        let description = outcome["description"] as? String ?? ""
        #expect(description.contains("The sanitizer is the cause"), "\(description)")
        #expect(description.contains("without the sanitizer"), "\(description)")
        #expect(description.contains("separate process"), "\(description)")
        // The process already runs on glibc: moving there is not the advice.
        #expect(!description.contains("glibc"), "\(description)")
        #expect(!description.contains("platform with RTLD_DEEPBIND"), "\(description)")
    }

    @Test func theDoctorGivesTheSameAdviceUnderASanitizer() throws {
        let result = try runChild(productPath("sqlcipher-doctor"), ["--json"], environment: try Linking.childEnvironment([
            "LD_PRELOAD": try runtime("asan"), "ASAN_OPTIONS": "detect_leaks=0",
        ]))
        #expect(!result.signaled, "the doctor crashed: \(result.stderr)")
        #expect(result.status == 1)
        let error = try Linking.jsonObject(result.stdout)["error"] as? String ?? ""
        #expect(error.contains("AddressSanitizer") && error.contains("without the sanitizer"), "\(error)")
        #expect(!error.contains("glibc"), "\(error)")
    }

    @Test func theAdviceFollowsTheCause() {
        // The bridge's own reasons, one per cause.
        for sanitizer in ["AddressSanitizer", "ThreadSanitizer", "MemorySanitizer", "HWAddressSanitizer"] {
            let reason = "a sanitizer runtime (\(sanitizer)) is in this process, and its interceptors abort the process "
                + "on the RTLD_DEEPBIND load that isolates SQLCipher from other SQLite copies"
            let advice = SqlCipherError.unsupportedRuntimeAdvice(for: reason)
            #expect(advice.contains("The sanitizer is the cause") && !advice.contains("glibc"), "\(advice)")
            let description = SqlCipherError.unsupportedRuntime(reason: reason).description
            #expect(description.contains(sanitizer) && description.hasSuffix(advice))
        }
        let musl = "the binding audit could not read the library: the library uses REL relocations, which the audit "
            + "does not read; this C library has no RTLD_DEEPBIND (musl), so the audit is the only isolation check there"
        #expect(SqlCipherError.unsupportedRuntimeAdvice(for: musl).contains("RTLD_DEEPBIND (glibc)"))
        let unreadable = "the binding audit could not read the library: the library's dynamic section has no symbol table"
        let advice = SqlCipherError.unsupportedRuntimeAdvice(for: unreadable)
        #expect(advice.contains("libsqlcipher1") && advice.contains("sqlcipher-doctor"), "\(advice)")
        #expect(!advice.contains("sanitizer"))
    }
}
