import Foundation
import SqlCipherKit

/// Opens `FOLDER/db.db` in WAL mode (passphrase `old`), then takes every file descriptor the
/// process may still open (the soft limit lowered to the descriptors in use, the gaps below it
/// filled with `/dev/null`), so that a rekey's rewrite, which writes only to files already open,
/// commits and the proof on a fresh connection cannot open the file. Prints `rekey ok` or
/// `rekey error <case>: <description>`. A process of its own: the limit is the whole process's.
let rekeyWithoutDescriptorsCommand = HelperCommand(
    name: "rekey-without-descriptors",
    usage: "rekey-without-descriptors FOLDER: rekeys with no file descriptor left for its proof"
) { arguments in
    guard arguments.count == 1 else { throw DatabaseHelperError(message: "usage: rekey-without-descriptors FOLDER") }
    let cipher = CipherSettings(kdfIterations: 1000)
    try runBlocking {
        let db = try Database(path: arguments[0] + "/db.db", key: "old", journalMode: .wal, cipher: cipher)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap { Int($0) } ?? []
        var lowered = saved
        lowered.rlim_cur = rlim_t((open.max() ?? 2) + 1)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered)
        var fillers: [Int32] = []
        while true {
            let descriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
            if descriptor < 0 { break }
            fillers.append(descriptor)
        }
        let outcome: String
        do {
            try await db.rekey("new")
            outcome = "rekey ok"
        } catch {
            outcome = "rekey error \(errorCaseName(error)): \(error)"
        }
        for descriptor in fillers { Glibc.close(descriptor) }
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        report(outcome)
        await db.close()
    }
    return 0
}
