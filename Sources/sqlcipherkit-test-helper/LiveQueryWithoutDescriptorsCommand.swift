import Foundation
import SqlCipherKit

/// Opens `FOLDER/live.db` (WAL) twice, then, with no file descriptor left, watches a count on
/// the first `Database` (`values(of:)`) while the second inserts a row, and prints `live N` for
/// each value seen (`live 0`, then `live 1`), then `live ok`.
///
/// The second value needs the first `Database`'s watch for other connections' commits, whose
/// timed wait is the first timer this process arms: libdispatch creates the descriptor behind a
/// clock's timers then, and trapped (SIGILL) when none was left. A process of its own: the limit
/// is the whole process's, and no earlier timer may have created that descriptor already.
let liveQueryWithoutDescriptorsCommand = HelperCommand(
    name: "live-query-without-descriptors",
    usage: "live-query-without-descriptors FOLDER: a live query sees another connection's commit with no descriptor left"
) { arguments in
    guard arguments.count == 1 else { throw DatabaseHelperError(message: "usage: live-query-without-descriptors FOLDER") }
    let path = arguments[0] + "/live.db"
    let cipher = CipherSettings(kdfIterations: 1000)
    try runBlocking {
        let watched = try Database(path: path, key: "k", journalMode: .wal, cipher: cipher)
        try await watched.execute("CREATE TABLE t(x)")
        let writer = try Database(path: path, key: "k", journalMode: .wal, cipher: cipher)
        _ = try await writer.query("SELECT count(*) FROM t")
        let limit = DescriptorLimit(spare: 0)
        var seen = 0
        for try await rows in watched.values(of: .query("SELECT count(*) FROM t")) {
            let count = rows.first?.get(0, as: Int.self) ?? -1
            report("live \(count)")
            seen += 1
            if seen == 1 { try await writer.execute("INSERT INTO t VALUES (1)") }
            if count == 1 { break }
        }
        limit.restore()
        report("live ok")
        await watched.close()
        await writer.close()
    }
    return 0
}
