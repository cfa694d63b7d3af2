import Foundation
import SqlCipherKit

// Tracing: a trace closure formed here, a TraceToken cancelled, traceEvents read by a task of this
// context, stopTracing, written as a user writes them in each isolation context: top-level code is
// in main.swift; here a @MainActor class, the caller's own actor and Task.detached. Each is written
// out in full on purpose: the closures must be formed in the context under test, so no shared
// helper can stand in for them.

@MainActor
final class TracingModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/tracing-main-actor.db", key: "my-passphrase")
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
            try expect(traced.lines == expectedTrace, "tracing-main-actor",
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
                       "tracing-main-actor", "traceEvents \(seen)")
            await db.close()
            finished.append("tracing-main-actor")
            print("ok tracing-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/tracing-pool-main-actor.db", key: "my-passphrase")
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
            try expect(traced.lines == expectedTrace, "tracing-pool-main-actor",
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
                       "tracing-pool-main-actor", "traceEvents \(seen)")
            await db.close()
            finished.append("tracing-pool-main-actor")
            print("ok tracing-pool-main-actor")
        }
    }
}

actor TracingService {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/tracing-actor.db", key: "my-passphrase")
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
            try expect(traced.lines == expectedTrace, "tracing-actor",
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
                       "tracing-actor", "traceEvents \(seen)")
            await db.close()
            finished.append("tracing-actor")
            print("ok tracing-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/tracing-pool-actor.db", key: "my-passphrase")
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
            try expect(traced.lines == expectedTrace, "tracing-pool-actor",
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
                       "tracing-pool-actor", "traceEvents \(seen)")
            await db.close()
            finished.append("tracing-pool-actor")
            print("ok tracing-pool-actor")
        }
    }

    func report(_ fraction: Double) {
        self.fraction = fraction
    }
}

func tracingDetached(directory: String) async throws {
    try await Task.detached {
        // a Database
        do {
            let db = try Database(path: directory + "/tracing-detached.db", key: "my-passphrase")
            let marker = "!"
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
            try expect(traced.lines == expectedTrace, "tracing-detached",
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
                       "tracing-detached", "traceEvents \(seen)")
            await db.close()
            print("ok tracing-detached")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/tracing-pool-detached.db", key: "my-passphrase")
            let marker = "!"
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
            try expect(traced.lines == expectedTrace, "tracing-pool-detached",
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
                       "tracing-pool-detached", "traceEvents \(seen)")
            await db.close()
            print("ok tracing-pool-detached")
        }
    }.value
}
