import Foundation
import SqlCipherKit

// Tracing: a trace closure formed here, a TraceToken cancelled, traceEvents read by a task of this
// context, stopTracing, in a class without annotation of a module whose default isolation is the
// main actor (top-level code is in main.swift). Written out in full on purpose: the closures must
// be formed in the context under test.

final class TracingModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/tracing-default-main-actor-class.db", key: "my-passphrase")
            let marker = self.marker
            try await db.execute("CREATE TABLE t(x INTEGER)")
            let traced = TraceLog()
            let token = try await db.trace { event in
                guard !event.isInternal else { return }
                traced.record("\(event.sql)\(marker)")
            }
            try await db.execute("INSERT INTO t VALUES (1)")
            _ = try await db.query("SELECT x FROM t")
            token.cancel()
            try await db.execute("INSERT INTO t VALUES (2)")
            let expectedTrace: [String] = ["INSERT INTO t VALUES (1)", "SELECT x FROM t"].map { $0 + marker }
            try expect(traced.lines == expectedTrace, "tracing-default-main-actor-class",
                       "trace(options:_:) \(traced.lines)")
            let events = try await db.traceEvents(options: TraceOptions(includeArguments: true))
            let reader = Task {
                var seen: [String] = []
                for await event in events where !event.isInternal {
                    seen.append(event.sql + " " + (event.arguments ?? []).map { "\($0)" }.joined(separator: ","))
                }
                return seen
            }
            try await db.execute("INSERT INTO t VALUES (?)", 3)
            _ = try await db.query("SELECT count(*) FROM t WHERE x > ?", 1)
            try await db.stopTracing()
            let seen = await reader.value
            try expect(seen.count == 2 && seen[0].hasPrefix("INSERT INTO t VALUES (?) ") && seen[1].hasPrefix("SELECT count(*) FROM t WHERE x > ? "),
                       "tracing-default-main-actor-class", "traceEvents \(seen)")
            await db.close()
            finished.append("tracing-default-main-actor-class")
            print("ok tracing-default-main-actor-class")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/tracing-default-main-actor-class-pool.db", key: "my-passphrase")
            let marker = self.marker
            try await db.execute("CREATE TABLE t(x INTEGER)")
            let traced = TraceLog()
            let token = try await db.trace { event in
                guard !event.isInternal else { return }
                traced.record("\(event.sql)\(marker)")
            }
            try await db.execute("INSERT INTO t VALUES (1)")
            _ = try await db.query("SELECT x FROM t")
            token.cancel()
            try await db.execute("INSERT INTO t VALUES (2)")
            let expectedTrace: [String] = ["INSERT INTO t VALUES (1)", "SELECT x FROM t"].map { $0 + marker }
            try expect(traced.lines == expectedTrace, "tracing-default-main-actor-class-pool",
                       "trace(options:_:) \(traced.lines)")
            let events = try await db.traceEvents(options: TraceOptions(includeArguments: true))
            let reader = Task {
                var seen: [String] = []
                for await event in events where !event.isInternal {
                    seen.append(event.sql + " " + (event.arguments ?? []).map { "\($0)" }.joined(separator: ","))
                }
                return seen
            }
            try await db.execute("INSERT INTO t VALUES (?)", 3)
            _ = try await db.query("SELECT count(*) FROM t WHERE x > ?", 1)
            try await db.stopTracing()
            let seen = await reader.value
            try expect(seen.count == 2 && seen[0].hasPrefix("INSERT INTO t VALUES (?) ") && seen[1].hasPrefix("SELECT count(*) FROM t WHERE x > ? "),
                       "tracing-default-main-actor-class-pool", "traceEvents \(seen)")
            await db.close()
            finished.append("tracing-default-main-actor-class-pool")
            print("ok tracing-default-main-actor-class-pool")
        }
    }
}
