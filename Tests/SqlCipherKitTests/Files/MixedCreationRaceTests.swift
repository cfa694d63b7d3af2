import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// Creation races between *different* openers of one new file: a `Database` in one process and a
/// `DatabasePool` in another, one of them reaching the file through a dangling symbolic link while
/// the other names the target; and a `Database` racing a pool inside one process. All of them take
/// the same creation lock (the resolved file's folder), so every acknowledged row is in the file.
@Suite(.serialized) struct MixedCreationRaceTests {
    static let rounds = 20
    static let rowsPerSide = 4

    @Test func aDatabaseThroughALinkAndAPoolOnTheTargetKeepEveryAcknowledgedRow() async throws {
        let folder = TemporaryDirectory()
        let links = folder.path("links")
        try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: true)
        for round in 0..<Self.rounds {
            let target = folder.path("race\(round).db"), link = links + "/race\(round).db"
            // A chain of two relative links, from another folder, to a file that does not exist yet.
            try #require(symlink("hop\(round).db", link) == 0)
            try #require(symlink("../race\(round).db", links + "/hop\(round).db") == 0)
            let barrier = folder.path("barrier\(round)")
            try #require(mkfifo(barrier, 0o600) == 0)
            let children = [
                try CreationRaceTests.RaceChild([link, "database", "pass:mixed", barrier, "a", String(Self.rowsPerSide)]),
                try CreationRaceTests.RaceChild([target, "pool", "pass:mixed", barrier, "b", String(Self.rowsPerSide)]),
            ]
            let (outputs, acknowledged) = try await CreationRaceTests.release(children, at: barrier, round: round)
            let db = try Database(path: target, key: "mixed")
            let stored = Set(try await db.query("SELECT id FROM t").compactMap { $0.get("id", as: String.self) })
            await db.close()
            #expect(acknowledged.count == 2 * Self.rowsPerSide, "round \(round): \(outputs)")
            #expect(acknowledged.allSatisfy(stored.contains), "round \(round): lost \(acknowledged.filter { !stored.contains($0) })")
            // The links are still links: nothing was renamed over them.
            var info = stat()
            #expect(lstat(link, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK)
            #expect(!FileManager.default.fileExists(atPath: link + "-wal"))
        }
    }

    @Test func aDatabaseAndAPoolOfOneProcessKeepEveryAcknowledgedRow() async throws {
        let folder = TemporaryDirectory()
        for round in 0..<Self.rounds {
            let path = folder.path("race\(round).db")
            let arrived = DispatchSemaphore(value: 0), start = DispatchSemaphore(value: 0)
            let opened = Mutex<[Int: Result<any DatabaseAccess, any Error>]>([:])
            let done = DispatchGroup()
            for side in 0..<2 {
                done.enter()
                Thread.detachNewThread {
                    arrived.signal()
                    start.wait()
                    let result = Result<any DatabaseAccess, any Error> {
                        side == 0 ? try Database(path: path, key: "mixed") as any DatabaseAccess : try DatabasePool(path: path, key: "mixed")
                    }
                    opened.withLock { $0[side] = result }
                    done.leave()
                }
            }
            arrived.wait()
            arrived.wait()
            start.signal()
            start.signal()
            await withCheckedContinuation { continuation in done.notify(queue: .global()) { continuation.resume() } }
            let sides = try (0..<2).map { side in try opened.withLock { $0[side]! }.get() }
            var acknowledged: [String] = []
            for (side, access) in sides.enumerated() {
                try await access.execute("CREATE TABLE IF NOT EXISTS t(id TEXT PRIMARY KEY)")
                for row in 0..<Self.rowsPerSide {
                    try await access.execute("INSERT INTO t(id) VALUES (?)", "\(side)-\(row)")
                    acknowledged.append("\(side)-\(row)")
                }
            }
            if let db = sides[0] as? Database { await db.close() }
            if let pool = sides[1] as? DatabasePool { await pool.close() }
            let check = try Database(path: path, key: "mixed")
            let stored = Set(try await check.query("SELECT id FROM t").compactMap { $0.get("id", as: String.self) })
            await check.close()
            #expect(acknowledged.allSatisfy(stored.contains), "round \(round): lost \(acknowledged.filter { !stored.contains($0) })")
        }
    }
}
