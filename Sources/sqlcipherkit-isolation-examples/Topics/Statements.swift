import Foundation
import SqlCipherKit

// Cursors, prepared statements, nested savepoints, read { }, and a prepareConnection closure formed
// here, written as a user writes them in each isolation context: top-level code is in main.swift;
// here a @MainActor class, the caller's own actor and Task.detached. Each is written out in full on
// purpose: the closures must be formed in the context under test, so no shared helper can stand in
// for them.

@MainActor
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
            let db = try Database(path: directory + "/statements-main-actor.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-main-actor", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-main-actor", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-main-actor",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-main-actor", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-main-actor", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-main-actor", "values(of:) \(observed)")
            await db.close()
            finished.append("statements-main-actor")
            print("ok statements-main-actor")
        }
        // a DatabasePool
        do {
            let marker = self.marker
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try DatabasePool(path: directory + "/statements-pool-main-actor.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-pool-main-actor", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-pool-main-actor", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-pool-main-actor",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-pool-main-actor", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-pool-main-actor", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-pool-main-actor", "values(of:) \(observed)")
            await db.close()
            finished.append("statements-pool-main-actor")
            print("ok statements-pool-main-actor")
        }
    }
}

actor StatementsService {
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
            let db = try Database(path: directory + "/statements-actor.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-actor", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-actor", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-actor",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-actor", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-actor", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-actor", "values(of:) \(observed)")
            await db.close()
            finished.append("statements-actor")
            print("ok statements-actor")
        }
        // a DatabasePool
        do {
            let marker = self.marker
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try DatabasePool(path: directory + "/statements-pool-actor.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-pool-actor", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-pool-actor", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-pool-actor",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-pool-actor", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-pool-actor", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-pool-actor", "values(of:) \(observed)")
            await db.close()
            finished.append("statements-pool-actor")
            print("ok statements-pool-actor")
        }
    }

    func report(_ fraction: Double) {
        self.fraction = fraction
    }
}

func statementsDetached(directory: String) async throws {
    try await Task.detached {
        // a Database
        do {
            let marker = "!"
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try Database(path: directory + "/statements-detached.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-detached", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-detached", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-detached",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-detached", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-detached", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-detached", "values(of:) \(observed)")
            await db.close()
            print("ok statements-detached")
        }
        // a DatabasePool
        do {
            let marker = "!"
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try DatabasePool(path: directory + "/statements-pool-detached.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-pool-detached", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-pool-detached", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-pool-detached",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-pool-detached", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-pool-detached", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-pool-detached", "values(of:) \(observed)")
            await db.close()
            print("ok statements-pool-detached")
        }
    }.value
}
