import Foundation
import SqlCipherKit
import Synchronization

/// Creates `FOLDER/db.db` (WAL, passphrase `k`, 100 rows), then, with the process's descriptor
/// limit lowered so that only a few remain (the gaps below it filled with `/dev/null`), opens
/// that file, creates a new one, opens a pool and reads through more readers than the
/// descriptors allow, and backs up; then reads through a pool that has one reader open when no
/// descriptor is left (`pool-readers N` after). Prints one line per step, `STEP ok` or
/// `STEP error CASE: MESSAGE`; then, with the limit restored, `db.db rows N` (the file read back)
/// and, for the new file, `new.db absent` or `new.db opens` (or `new.db broken: ...`).
/// A process of its own: the limit is the whole process's.
let openWithoutDescriptorsCommand = HelperCommand(
    name: "open-without-descriptors",
    usage: "open-without-descriptors FOLDER: opens, creates, reads through a pool and backs up with no descriptor left"
) { arguments in
    guard arguments.count == 1 else { throw DatabaseHelperError(message: "usage: open-without-descriptors FOLDER") }
    let folder = arguments[0]
    let cipher = CipherSettings(kdfIterations: 1000)
    let path = folder + "/db.db"
    try runBlocking {
        let db = try Database(path: path, key: "k", journalMode: .wal, cipher: cipher)
        try await db.execute("CREATE TABLE t(x)")
        try await db.transaction { conn in for value in 0..<100 { try conn.execute("INSERT INTO t VALUES (?)", value) } }
        await db.close()
        func step(_ name: String, _ body: () async throws -> Void) async {
            do {
                try await body()
                report("\(name) ok")
            } catch {
                report("\(name) error \(errorCaseName(error)): \(error)".replacingOccurrences(of: "\n", with: " "))
            }
        }
        for spare in 0...2 {
            let limit = DescriptorLimit(spare: spare)
            await step("open-\(spare)") { _ = try Database(path: path, key: "k", cipher: cipher) }
            await step("create-\(spare)") { _ = try Database(path: folder + "/new.db", key: "k", cipher: cipher) }
            limit.restore()
        }
        // The writer opens (three descriptors); readers beyond them cannot.
        let limit = DescriptorLimit(spare: 3)
        var pool: DatabasePool?
        await step("pool-open") { pool = try DatabasePool(path: path, key: "k", cipher: cipher) }
        if let pool {
            await step("pool-reads") {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<4 { group.addTask { _ = try await pool.query("SELECT count(*) FROM t") } }
                    try await group.waitForAll()
                }
            }
            await step("pool-backup") { try await pool.backup(to: folder + "/backup.db", key: "b") }
            await pool.close()
        }
        limit.restore()
        // A pool with one reader open, then no descriptor left: reads beyond it wait for it.
        let served = try DatabasePool(path: path, key: "k", cipher: cipher)
        _ = try await served.query("SELECT count(*) FROM t")
        let none = DescriptorLimit(spare: 0)
        // The one reader is held by a read; a second read cannot open another.
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let holder = Task { try await served.read { _ in entered.signal(); release.wait() } }
        await withCheckedContinuation { continuation in
            Thread { entered.wait(); continuation.resume() }.start()
        }
        let second = Task { try await served.query("SELECT count(*) FROM t") }
        // Until the second read waits for the held reader, or has ended (with an error): watched
        // from a thread of its own, without a timer (with no descriptor left, libdispatch cannot
        // create the timer a Task.sleep needs, and traps).
        let ended = EndedFlag()
        Task { _ = try? await second.value; ended.set() }
        await withCheckedContinuation { continuation in
            Thread {
                while served.pendingReaderWaits.calls == 0 && !ended.isSet { usleep(1000) }
                continuation.resume()
            }.start()
        }
        release.signal()
        try await holder.value
        await step("pool-reads-one-reader") { _ = try await second.value }
        none.restore()
        report("pool-readers \(served.openReaderCount)")
        // With descriptors again, the pool opens readers again.
        await step("pool-reads-after") {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await served.query("SELECT count(*) FROM t") } }
                try await group.waitForAll()
            }
        }
        await served.close()
        let reopened = try Database(path: path, key: "k", cipher: cipher)
        report("db.db rows \(try await reopened.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) ?? -1)")
        await reopened.close()
        for name in ["new.db", "backup.db"] {
            guard FileManager.default.fileExists(atPath: folder + "/" + name) else {
                report("\(name) absent")
                continue
            }
            do {
                let opened = try Database(path: folder + "/" + name, key: name == "new.db" ? "k" : "b", cipher: cipher)
                _ = try await opened.query("SELECT count(*) FROM sqlite_master")
                await opened.close()
                report("\(name) opens")
            } catch {
                report("\(name) broken: \(errorCaseName(error)): \(error)")
            }
        }
    }
    return 0
}

/// The process's descriptor limit lowered so that only `spare` descriptors remain free: the limit
/// set to the highest descriptor in use plus one, the gaps below it filled with `/dev/null`, and
/// `spare` of those closed again.
struct DescriptorLimit {
    private var fillers: [Int32] = []
    private var saved = rlimit()

    init(spare: Int) {
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap { Int($0) } ?? []
        var lowered = saved
        lowered.rlim_cur = rlim_t((open.max() ?? 2) + 1 + spare)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered)
        while true {
            let descriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
            if descriptor < 0 { break }
            fillers.append(descriptor)
        }
        for _ in 0..<min(spare, fillers.count) { Glibc.close(fillers.removeLast()) }
    }

    /// Closes the fillers and restores the limit.
    func restore() {
        for descriptor in fillers { Glibc.close(descriptor) }
        var saved = saved
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
    }
}

/// Set once, read from any thread.
final class EndedFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
