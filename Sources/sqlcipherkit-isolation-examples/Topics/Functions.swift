import Foundation
import SqlCipherKit

// Functions and collations: a scalar function and a collation whose closures are formed here, an
// aggregate, removal, written as a user writes them in each isolation context: top-level code is in
// main.swift; here a @MainActor class, the caller's own actor and Task.detached. Each is written
// out in full on purpose: the closures must be formed in the context under test, so no shared
// helper can stand in for them.

@MainActor
final class FunctionsModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/functions-main-actor.db", key: "my-passphrase")
            let marker = self.marker
            let shout = DatabaseFunction("shout", deterministic: true) { (text: String) in "\(text.uppercased())\(marker)" }
            let byLength = DatabaseCollation("by_length") { left, right in
                left.count != right.count ? (left.count < right.count ? .orderedAscending : .orderedDescending)
                    : left < right ? .orderedAscending : left == right ? .orderedSame : .orderedDescending
            }
            let median = DatabaseFunction("median", argumentCount: 1, aggregate: Median.self)
            try await db.add(function: shout)
            try await db.add(function: median)
            try await db.add(collation: byLength)
            try await db.execute("CREATE TABLE words(w TEXT NOT NULL)")
            try await db.execute("INSERT INTO words VALUES ('ccc'), ('a'), ('bb'), ('dddd')")
            let shouted = try await db.query("SELECT shout(w) FROM words ORDER BY w COLLATE by_length").map { $0.get(0, as: String.self) }
            let expectedShouts: [String?] = ["A", "BB", "CCC", "DDDD"].map { $0 + marker }
            try expect(shouted == expectedShouts, "functions-main-actor", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-main-actor", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-main-actor", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-main-actor", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-main-actor", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            finished.append("functions-main-actor")
            print("ok functions-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/functions-pool-main-actor.db", key: "my-passphrase")
            let marker = self.marker
            let shout = DatabaseFunction("shout", deterministic: true) { (text: String) in "\(text.uppercased())\(marker)" }
            let byLength = DatabaseCollation("by_length") { left, right in
                left.count != right.count ? (left.count < right.count ? .orderedAscending : .orderedDescending)
                    : left < right ? .orderedAscending : left == right ? .orderedSame : .orderedDescending
            }
            let median = DatabaseFunction("median", argumentCount: 1, aggregate: Median.self)
            try await db.add(function: shout)
            try await db.add(function: median)
            try await db.add(collation: byLength)
            try await db.execute("CREATE TABLE words(w TEXT NOT NULL)")
            try await db.execute("INSERT INTO words VALUES ('ccc'), ('a'), ('bb'), ('dddd')")
            let shouted = try await db.query("SELECT shout(w) FROM words ORDER BY w COLLATE by_length").map { $0.get(0, as: String.self) }
            let expectedShouts: [String?] = ["A", "BB", "CCC", "DDDD"].map { $0 + marker }
            try expect(shouted == expectedShouts, "functions-pool-main-actor", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-pool-main-actor", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-pool-main-actor", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-pool-main-actor", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-pool-main-actor", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            finished.append("functions-pool-main-actor")
            print("ok functions-pool-main-actor")
        }
    }
}

actor FunctionsService {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/functions-actor.db", key: "my-passphrase")
            let marker = self.marker
            let shout = DatabaseFunction("shout", deterministic: true) { (text: String) in "\(text.uppercased())\(marker)" }
            let byLength = DatabaseCollation("by_length") { left, right in
                left.count != right.count ? (left.count < right.count ? .orderedAscending : .orderedDescending)
                    : left < right ? .orderedAscending : left == right ? .orderedSame : .orderedDescending
            }
            let median = DatabaseFunction("median", argumentCount: 1, aggregate: Median.self)
            try await db.add(function: shout)
            try await db.add(function: median)
            try await db.add(collation: byLength)
            try await db.execute("CREATE TABLE words(w TEXT NOT NULL)")
            try await db.execute("INSERT INTO words VALUES ('ccc'), ('a'), ('bb'), ('dddd')")
            let shouted = try await db.query("SELECT shout(w) FROM words ORDER BY w COLLATE by_length").map { $0.get(0, as: String.self) }
            let expectedShouts: [String?] = ["A", "BB", "CCC", "DDDD"].map { $0 + marker }
            try expect(shouted == expectedShouts, "functions-actor", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-actor", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-actor", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-actor", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-actor", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            finished.append("functions-actor")
            print("ok functions-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/functions-pool-actor.db", key: "my-passphrase")
            let marker = self.marker
            let shout = DatabaseFunction("shout", deterministic: true) { (text: String) in "\(text.uppercased())\(marker)" }
            let byLength = DatabaseCollation("by_length") { left, right in
                left.count != right.count ? (left.count < right.count ? .orderedAscending : .orderedDescending)
                    : left < right ? .orderedAscending : left == right ? .orderedSame : .orderedDescending
            }
            let median = DatabaseFunction("median", argumentCount: 1, aggregate: Median.self)
            try await db.add(function: shout)
            try await db.add(function: median)
            try await db.add(collation: byLength)
            try await db.execute("CREATE TABLE words(w TEXT NOT NULL)")
            try await db.execute("INSERT INTO words VALUES ('ccc'), ('a'), ('bb'), ('dddd')")
            let shouted = try await db.query("SELECT shout(w) FROM words ORDER BY w COLLATE by_length").map { $0.get(0, as: String.self) }
            let expectedShouts: [String?] = ["A", "BB", "CCC", "DDDD"].map { $0 + marker }
            try expect(shouted == expectedShouts, "functions-pool-actor", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-pool-actor", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-pool-actor", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-pool-actor", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-pool-actor", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            finished.append("functions-pool-actor")
            print("ok functions-pool-actor")
        }
    }

    func report(_ fraction: Double) {
        self.fraction = fraction
    }
}

func functionsDetached(directory: String) async throws {
    try await Task.detached {
        // a Database
        do {
            let db = try Database(path: directory + "/functions-detached.db", key: "my-passphrase")
            let marker = "!"
            let shout = DatabaseFunction("shout", deterministic: true) { (text: String) in "\(text.uppercased())\(marker)" }
            let byLength = DatabaseCollation("by_length") { left, right in
                left.count != right.count ? (left.count < right.count ? .orderedAscending : .orderedDescending)
                    : left < right ? .orderedAscending : left == right ? .orderedSame : .orderedDescending
            }
            let median = DatabaseFunction("median", argumentCount: 1, aggregate: Median.self)
            try await db.add(function: shout)
            try await db.add(function: median)
            try await db.add(collation: byLength)
            try await db.execute("CREATE TABLE words(w TEXT NOT NULL)")
            try await db.execute("INSERT INTO words VALUES ('ccc'), ('a'), ('bb'), ('dddd')")
            let shouted = try await db.query("SELECT shout(w) FROM words ORDER BY w COLLATE by_length").map { $0.get(0, as: String.self) }
            let expectedShouts: [String?] = ["A", "BB", "CCC", "DDDD"].map { $0 + marker }
            try expect(shouted == expectedShouts, "functions-detached", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-detached", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-detached", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-detached", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-detached", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            print("ok functions-detached")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/functions-pool-detached.db", key: "my-passphrase")
            let marker = "!"
            let shout = DatabaseFunction("shout", deterministic: true) { (text: String) in "\(text.uppercased())\(marker)" }
            let byLength = DatabaseCollation("by_length") { left, right in
                left.count != right.count ? (left.count < right.count ? .orderedAscending : .orderedDescending)
                    : left < right ? .orderedAscending : left == right ? .orderedSame : .orderedDescending
            }
            let median = DatabaseFunction("median", argumentCount: 1, aggregate: Median.self)
            try await db.add(function: shout)
            try await db.add(function: median)
            try await db.add(collation: byLength)
            try await db.execute("CREATE TABLE words(w TEXT NOT NULL)")
            try await db.execute("INSERT INTO words VALUES ('ccc'), ('a'), ('bb'), ('dddd')")
            let shouted = try await db.query("SELECT shout(w) FROM words ORDER BY w COLLATE by_length").map { $0.get(0, as: String.self) }
            let expectedShouts: [String?] = ["A", "BB", "CCC", "DDDD"].map { $0 + marker }
            try expect(shouted == expectedShouts, "functions-pool-detached", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-pool-detached", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-pool-detached", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-pool-detached", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-pool-detached", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            print("ok functions-pool-detached")
        }
    }.value
}
