import Foundation
import SqlCipherKit

// Cursors, prepared statements, nested savepoints, read { }, and a prepareConnection closure formed
// here, in a class without annotation of a module whose default isolation is the main actor (top-
// level code is in main.swift). Written out in full on purpose: the closures must be formed in the
// context under test.

final class StatementsModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let marker = self.marker
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try Database(path: directory + "/statements-default-main-actor-class.db", key: "my-passphrase", configuration: configuration)
            try await db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL)")
            let names = ["apple", "pear", "plum"]
            let inserted = try await db.transaction { conn in
                let insert = try conn.prepare("INSERT INTO items(name, qty) VALUES (?, ?)")
                var changed = 0
                for (offset, name) in names.enumerated() { changed += try insert.execute(name, offset + 1) }
                try conn.savepoint { conn in
                    try conn.execute("INSERT INTO items(name, qty) VALUES (?, ?)", "kept\(marker)", 10)
                    try? conn.savepoint { conn in
                        try conn.execute("INSERT INTO items(name, qty) VALUES (?, ?)", "dropped", 20)
                        throw CancellationError()
                    }
                }
                return changed
            }
            try expect(inserted == 3, "statements-default-main-actor-class", "prepared inserts \(inserted)")
            let (small, counted, fetched, decodedNames, quantities, decoded, triggers) = try await db.read { conn in
                var small: [String] = []
                let cursor = try conn.cursor("SELECT name FROM items WHERE qty < ? ORDER BY id", 10)
                while let row = try cursor.next() { small.append(row.get("name", as: String.self) ?? "") }
                let byMinimum = try conn.prepare("SELECT id, name, qty FROM items WHERE qty >= ? ORDER BY id")
                let counted = try byMinimum.query(2).count
                let fetched = try byMinimum.fetch(StockItem.self, 10).map(\.name)
                var decodedNames: [String] = []
                try byMinimum.cursor(StockItem.self, 3).forEach { decodedNames.append($0.name) }
                var quantities: [Int] = []
                try byMinimum.cursor(1).forEach { quantities.append($0.get("qty", as: Int.self) ?? -1) }
                var decoded: [Int] = []
                let all = try conn.cursor(StockItem.self, sql: "SELECT * FROM items ORDER BY id")
                while let item = try all.next() { decoded.append(item.qty) }
                let triggers = try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self)
                return (small, counted, fetched, decodedNames, quantities, decoded, triggers)
            }
            try expect(small == names, "statements-default-main-actor-class", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-default-main-actor-class",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-default-main-actor-class", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-default-main-actor-class", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
            let minimum = 2
            let request = LiveRequest(placeholder: [String]()) { conn in
                try conn.query("SELECT name FROM items WHERE qty >= ? ORDER BY id", minimum).compactMap { $0.get(0, as: String.self) }
            }
            var observed: [[String]] = []
            for try await names in db.values(of: request) {
                observed.append(names)
                if names.count == 4 { break }
                try await db.execute("INSERT INTO items(name, qty) VALUES (?, ?)", "fig", 5)
            }
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-default-main-actor-class", "values(of:) \(observed)")
            await db.close()
            finished.append("statements-default-main-actor-class")
            print("ok statements-default-main-actor-class")
        }
        // a DatabasePool
        do {
            let marker = self.marker
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try DatabasePool(path: directory + "/statements-default-main-actor-class-pool.db", key: "my-passphrase", configuration: configuration)
            try await db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL)")
            let names = ["apple", "pear", "plum"]
            let inserted = try await db.transaction { conn in
                let insert = try conn.prepare("INSERT INTO items(name, qty) VALUES (?, ?)")
                var changed = 0
                for (offset, name) in names.enumerated() { changed += try insert.execute(name, offset + 1) }
                try conn.savepoint { conn in
                    try conn.execute("INSERT INTO items(name, qty) VALUES (?, ?)", "kept\(marker)", 10)
                    try? conn.savepoint { conn in
                        try conn.execute("INSERT INTO items(name, qty) VALUES (?, ?)", "dropped", 20)
                        throw CancellationError()
                    }
                }
                return changed
            }
            try expect(inserted == 3, "statements-default-main-actor-class-pool", "prepared inserts \(inserted)")
            let (small, counted, fetched, decodedNames, quantities, decoded, triggers) = try await db.read { conn in
                var small: [String] = []
                let cursor = try conn.cursor("SELECT name FROM items WHERE qty < ? ORDER BY id", 10)
                while let row = try cursor.next() { small.append(row.get("name", as: String.self) ?? "") }
                let byMinimum = try conn.prepare("SELECT id, name, qty FROM items WHERE qty >= ? ORDER BY id")
                let counted = try byMinimum.query(2).count
                let fetched = try byMinimum.fetch(StockItem.self, 10).map(\.name)
                var decodedNames: [String] = []
                try byMinimum.cursor(StockItem.self, 3).forEach { decodedNames.append($0.name) }
                var quantities: [Int] = []
                try byMinimum.cursor(1).forEach { quantities.append($0.get("qty", as: Int.self) ?? -1) }
                var decoded: [Int] = []
                let all = try conn.cursor(StockItem.self, sql: "SELECT * FROM items ORDER BY id")
                while let item = try all.next() { decoded.append(item.qty) }
                let triggers = try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self)
                return (small, counted, fetched, decodedNames, quantities, decoded, triggers)
            }
            try expect(small == names, "statements-default-main-actor-class-pool", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-default-main-actor-class-pool",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-default-main-actor-class-pool", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-default-main-actor-class-pool", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
            let minimum = 2
            let request = LiveRequest(placeholder: [String]()) { conn in
                try conn.query("SELECT name FROM items WHERE qty >= ? ORDER BY id", minimum).compactMap { $0.get(0, as: String.self) }
            }
            var observed: [[String]] = []
            for try await names in db.values(of: request) {
                observed.append(names)
                if names.count == 4 { break }
                try await db.execute("INSERT INTO items(name, qty) VALUES (?, ?)", "fig", 5)
            }
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-default-main-actor-class-pool", "values(of:) \(observed)")
            await db.close()
            finished.append("statements-default-main-actor-class-pool")
            print("ok statements-default-main-actor-class-pool")
        }
    }
}
