import Foundation
import SqlCipherKit

// LiveQuery, the main-actor observable wrapper, with a request whose closure is formed here, in a
// class without annotation of a module whose default isolation is the main actor (top-level code is
// in main.swift). Written out in full on purpose: the closures must be formed in the context under
// test.

final class LiveQueriesModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/live-default-main-actor-class.db", key: "my-passphrase")
            let marker = self.marker
            try await db.execute("CREATE TABLE tasks(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            let titles = LiveQuery(LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks ORDER BY id").compactMap { row -> String? in row.get(0, as: String.self).map { "\($0)\(marker)" } }
            }, database: db)
            try await waitUntil("live-default-main-actor-class", "the first value") { !titles.phase.isLoading && titles.phase.error == nil && titles.value.isEmpty }
            try await db.execute("INSERT INTO tasks(title) VALUES (?)", "write")
            try await waitUntil("live-default-main-actor-class", "the committed row") { titles.value == ["write\(marker)"] }
            // Another request: the current value stays until the new one's first result.
            let excluded = "write"
            titles.request = LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks WHERE title <> ? ORDER BY id", excluded).compactMap { $0.get(0, as: String.self) }
            }
            try await waitUntil("live-default-main-actor-class", "the new request's value") { titles.value.isEmpty }
            let done = LiveQuery(.count(Product.self), database: nil)
            try await waitUntil("live-default-main-actor-class", "missingDatabase") { done.phase.error is LiveError }
            done.database = db
            try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
            done.retry()
            try await waitUntil("live-default-main-actor-class", "the count") { !done.phase.isLoading && done.phase.error == nil && done.value == 0 }
            await db.close()
            finished.append("live-default-main-actor-class")
            print("ok live-default-main-actor-class")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/live-default-main-actor-class-pool.db", key: "my-passphrase")
            let marker = self.marker
            try await db.execute("CREATE TABLE tasks(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            let titles = LiveQuery(LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks ORDER BY id").compactMap { row -> String? in row.get(0, as: String.self).map { "\($0)\(marker)" } }
            }, database: db)
            try await waitUntil("live-default-main-actor-class-pool", "the first value") { !titles.phase.isLoading && titles.phase.error == nil && titles.value.isEmpty }
            try await db.execute("INSERT INTO tasks(title) VALUES (?)", "write")
            try await waitUntil("live-default-main-actor-class-pool", "the committed row") { titles.value == ["write\(marker)"] }
            // Another request: the current value stays until the new one's first result.
            let excluded = "write"
            titles.request = LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks WHERE title <> ? ORDER BY id", excluded).compactMap { $0.get(0, as: String.self) }
            }
            try await waitUntil("live-default-main-actor-class-pool", "the new request's value") { titles.value.isEmpty }
            let done = LiveQuery(.count(Product.self), database: nil)
            try await waitUntil("live-default-main-actor-class-pool", "missingDatabase") { done.phase.error is LiveError }
            done.database = db
            try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
            done.retry()
            try await waitUntil("live-default-main-actor-class-pool", "the count") { !done.phase.isLoading && done.phase.error == nil && done.value == 0 }
            await db.close()
            finished.append("live-default-main-actor-class-pool")
            print("ok live-default-main-actor-class-pool")
        }
    }
}
