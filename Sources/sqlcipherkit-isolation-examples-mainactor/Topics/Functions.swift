import Foundation
import SqlCipherKit

// Functions and collations: a scalar function and a collation whose closures are formed here, an
// aggregate, removal, in a class without annotation of a module whose default isolation is the main
// actor (top-level code is in main.swift). Written out in full on purpose: the closures must be
// formed in the context under test.

final class FunctionsModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/functions-default-main-actor-class.db", key: "my-passphrase")
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
            try expect(shouted == expectedShouts, "functions-default-main-actor-class", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-default-main-actor-class", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-default-main-actor-class", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-default-main-actor-class", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-default-main-actor-class", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            finished.append("functions-default-main-actor-class")
            print("ok functions-default-main-actor-class")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/functions-default-main-actor-class-pool.db", key: "my-passphrase")
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
            try expect(shouted == expectedShouts, "functions-default-main-actor-class-pool", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-default-main-actor-class-pool", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-default-main-actor-class-pool", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-default-main-actor-class-pool", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-default-main-actor-class-pool", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            finished.append("functions-default-main-actor-class-pool")
            print("ok functions-default-main-actor-class-pool")
        }
    }
}
