import Foundation
import SqlCipherKit
import Testing

/// A fresh temporary directory for one test, removed when the value is released.
/// A filesystem that fills: a tmpfs of a few hundred kilobytes mounted on a temporary folder of its
/// own, unmounted when the value goes. Only a process that may mount (root with `CAP_SYS_ADMIN`)
/// gets one; tests that need it are enabled by ``isAvailable``.
final class SmallFilesystem: @unchecked Sendable {
    let folder = TemporaryDirectory()

    init?(kilobytes: Int) {
        guard getuid() == 0,
              let mounted = try? runChild("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0700", "tmpfs",
                                                              folder.url.path]),
              mounted.status == 0 else { return nil }
    }

    deinit {
        _ = try? runChild("/usr/bin/umount", [folder.url.path])
    }

    /// Whether this process can mount one (checked once).
    static let isAvailable: Bool = SmallFilesystem(kilobytes: 64) != nil

    /// A path on the filesystem.
    func path(_ name: String) -> String { folder.path(name) }
}

final class TemporaryDirectory: @unchecked Sendable {
    let url: URL

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }.prefix(40)
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sqlcipherkit-\(safe)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Every file of the directory and their contents.
    func allFileContents() -> [(String, Data)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.compactMap { name in
            let file = path(name)
            return FileManager.default.contents(atPath: file).map { (file, $0) }
        }
    }

    /// Each file of the directory by name, with its contents and modification date: taken before
    /// and after an operation that must write nothing, to prove that no file changed, appeared or
    /// disappeared.
    func snapshot() throws -> [String: (Data, Date)] {
        var state: [String: (Data, Date)] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
            let file = path(name)
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            let modified = try #require(attributes[.modificationDate] as? Date)
            state[name] = (try Data(contentsOf: URL(fileURLWithPath: file)), modified)
        }
        return state
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The processor time the calling thread has used, in seconds (`CLOCK_THREAD_CPUTIME_ID`): the
/// measure for tests that bound the work of a call (a quadratic loop, a key derivation that must
/// not run), which, unlike the wall clock, does not grow while the thread waits for a processor
/// that other tests and processes hold.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
}

/// The library under test, as selected by SQLCIPHERKIT_LIBRARY (or discovery).
func loadedLibrary() throws -> SqlCipherLibrary { try SqlCipherLibrary.shared }

/// Whether the loaded library is SQLCipher 4 or later.
func isSQLCipher4() -> Bool { ((try? loadedLibrary())?.cipherMajorVersion ?? 0) >= 4 }

/// Whether the loaded library's SQLite is at least `number` (3_027_000 for 3.27.0): for
/// `.enabled(if:)` traits of tests of SQL that older SQLite rejects.
func sqliteVersionIsAtLeast(_ number: Int) -> Bool { ((try? loadedLibrary())?.sqliteVersionNumber ?? 0) >= number }

/// 32 deterministic key bytes.
func rawKey(_ seed: UInt8 = 1) -> Data { Data((0..<32).map { UInt8($0) &* 7 &+ seed }) }
