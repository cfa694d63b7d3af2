import Foundation
import SqlCipherKit
import Synchronization

/// Holds a `DatabasePool` open on PATH (plaintext with `none`) while three tasks read table `t`
/// (`count(*)` and the total length of `body`) in a loop, until the file STOPFILE exists. Prints
/// `reading COUNT LENGTH` after the first read, then at the end one line:
/// `reads N errors E distinct <answers> first-error <message>`: what a process that keeps its
/// pool open saw while another process converted (or was killed converting) the file.
let poolReadCommand = HelperCommand(
    name: "pool-read",
    usage: "pool-read PATH pass:<text>|raw:<hex>|none STOPFILE: reads through a pool until STOPFILE exists"
) { arguments in
    guard arguments.count == 3 else { throw DatabaseHelperError(message: "usage: pool-read PATH KEY STOPFILE") }
    let (path, stopFile) = (arguments[0], arguments[2])
    let pool: DatabasePool
    switch try HelperKey(arguments[1]) {
    case .none: pool = try DatabasePool(unencryptedPath: path)
    case .passphrase(let text): pool = try DatabasePool(path: path, key: text)
    case .raw(let bytes): pool = try DatabasePool(path: path, rawKey: bytes)
    }
    let tally = ReadTally()
    try runBlocking {
        guard let first = await tally.readOnce(pool) else {
            report("error \(tally.state.withLock { $0.firstError ?? "" })")
            return
        }
        report("reading \(first)")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    while !FileManager.default.fileExists(atPath: stopFile) { _ = await tally.readOnce(pool) }
                }
            }
        }
        await pool.close()
    }
    let final = tally.state.withLock { $0 }
    report("reads \(final.reads) errors \(final.errors) distinct \(final.answers.sorted().joined(separator: ",")) "
        + "first-error \(final.firstError ?? "none")")
    return 0
}

/// What the readers of `pool-read` saw, shared between them.
final class ReadTally: Sendable {
    struct State {
        var reads = 0, errors = 0
        var answers: Set<String> = []
        var firstError: String?
    }
    let state = Mutex(State())

    /// One read of `t`; its answer (`COUNT LENGTH`), or nil after counting the error.
    func readOnce(_ pool: DatabasePool) async -> String? {
        do {
            let row = try await pool.query("SELECT count(*), total(length(body)) FROM t")[0]
            let answer = "\(row.get(0, as: Int.self) ?? -1) \(Int(row.get(1, as: Double.self) ?? -1))"
            state.withLock { $0.reads += 1; $0.answers.insert(answer) }
            return answer
        } catch {
            state.withLock {
                $0.errors += 1
                if $0.firstError == nil { $0.firstError = "\(errorCaseName(error)): \(error)" }
            }
            return nil
        }
    }
}
