// The seed's examples, then every other API family (section 4, and Topics/*.swift), in a module
// built with Swift 6.2's `.defaultIsolation(MainActor.self)` and the rest of "Approachable
// Concurrency", as new app templates are: top-level code, a class and a free async function are all main-actor
// isolated without saying so. Models.swift shows what the types need (`nonisolated`). Compiled by
// the package build (a compile error fails the suite) and run by IsolationContextTests against
// each SQLCipher library.
//
// Usage: sqlcipherkit-isolation-examples-mainactor DIRECTORY
import Foundation
import SqlCipherKit

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: sqlcipherkit-isolation-examples-mainactor DIRECTORY\n".utf8))
    exit(2)
}
let directory = CommandLine.arguments[1]

/// A view model as an app declares it in such a module: no annotation, main-actor isolated.
final class ProductListModel {
    let db: Database
    var count = 0

    init(path: String) throws {
        db = try Database(path: path, key: "my-passphrase")
    }

    func run() async throws {
        let migrations: [any Migration] = [CreateOrders(), CreateProductsTable(), AddDiscountColumn()]
        try await db.migrate(migrations)
        let skus = ["A-1", "B-2", "C-3"]
        let order = try await db.transaction { conn in
            let order = try conn.save(Order(id: nil, customer: "Alice"))
            try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
            try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
            return order
        }
        try await db.transaction { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Bob")
            try? conn.savepoint { conn in
                try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Carol")
                throw CancellationError()
            }
        }
        try await db.savepoint { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, ?)", "Dave", order.id! - order.id!)
        }
        for try await count in db.values(of: .count(Product.self)) {
            self.count = count
            if count == 1 { break }
            try await db.save(Product(id: nil, name: "Widget", price: 9.99))
        }
        var streamed = 0
        for try await _ in db.stream(Product.self, sql: "SELECT * FROM products") { streamed += 1 }
        if streamed != 1 { throw ExampleFailure(context: "default-main-actor-class", what: "streamed \(streamed)") }
        try await db.rollback(to: "002-add-discount", using: migrations)
        try await verify(db, context: "default-main-actor-class")
        if count != 1 { throw ExampleFailure(context: "default-main-actor-class", what: "live count \(count)") }
    }
}

do {
    // 1. Top-level code, main-actor isolated by default.
    let db = try Database(path: directory + "/default-main-actor.db", key: "my-passphrase")
    let migrations: [any Migration] = [CreateOrders(), CreateProductsTable(), AddDiscountColumn()]
    try await db.migrate(migrations)

    let skus = ["A-1", "B-2", "C-3"]
    let order = try await db.transaction { conn in
        let order = try conn.save(Order(id: nil, customer: "Alice"))
        try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
        try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
        return order
    }
    try await db.transaction { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Bob")
        try? conn.savepoint { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Carol")
            throw CancellationError()
        }
    }
    try await db.savepoint { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, ?)", "Dave", order.id! - order.id!)
    }
    for try await count in db.values(of: .count(Product.self)) {
        if count == 1 { break }
        try await db.save(Product(id: nil, name: "Widget", price: 9.99))
    }
    var streamed = 0
    for try await _ in db.stream(Product.self, sql: "SELECT * FROM products") { streamed += 1 }
    if streamed != 1 { throw ExampleFailure(context: "default-main-actor", what: "streamed \(streamed)") }
    try await db.rollback(to: "002-add-discount", using: migrations)
    try await verify(db, context: "default-main-actor")
    await db.close()
    print("ok default-main-actor")

    // 2. A class without annotation (main-actor isolated by default).
    try await ProductListModel(path: directory + "/default-main-actor-class.db").run()
    print("ok default-main-actor-class")

    // 3. A pool from the same context.
    // A configuration whose closure is formed here, in main-actor code, and runs on each of the
    // pool's connections: its type is @Sendable, so it is nonisolated.
    var configuration = DatabaseConfiguration()
    configuration.prepareConnection = { conn in try conn.execute("PRAGMA recursive_triggers = ON") }
    let pool = try DatabasePool(path: directory + "/default-main-actor-pool.db", key: "my-passphrase",
                                configuration: configuration)
    try await pool.migrate(migrations)
    let poolOrder = try await pool.transaction { conn in
        let order = try conn.save(Order(id: nil, customer: "Alice"))
        try conn.save(skus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
        try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
        return order
    }
    try await pool.transaction { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Bob")
    }
    try await pool.savepoint { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, ?)", "Dave", poolOrder.id! - poolOrder.id!)
    }
    try await pool.rollback(to: "002-add-discount", using: migrations)
    try await verify(pool, context: "default-main-actor-pool")
    let triggers = try await pool.read { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
    if triggers != 1 {
        throw ExampleFailure(context: "default-main-actor-pool", what: "prepareConnection did not reach a reader")
    }
    await pool.close()
    print("ok default-main-actor-pool")

    // 4. Every other API family, one topic at a time: here as top-level code (each topic in a closure
    // formed here and called at once, as in the other examples executable), then in a class
    // (Topics/*.swift).
    // MARK: SQL literals (`SQL` interpolation): every entry point, with interpolated values, identifiers and lists
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/literals-default-main-actor.db", key: "my-passphrase")
            let marker = "!"
            let table = "notes"
            let owner = "O'Brien\(marker); DROP TABLE notes; --"
            let ids = [1, 2, 3]
            let titles = ["note-1", "note-2", "note-3"]
            try await db.execute(literal: "CREATE TABLE \(identifier: table)(id INTEGER PRIMARY KEY, title TEXT NOT NULL, owner TEXT)")
            for id in ids {
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(id), \(titles[id - 1]), \(owner))")
            }
            let picked = try await db.query(literal: "SELECT title FROM \(identifier: table) WHERE owner = \(owner) AND id IN \(list: [1, 3]) ORDER BY id")
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-default-main-actor", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-default-main-actor", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-default-main-actor", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-default-main-actor", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-default-main-actor", "conn.execute/fetch/query(literal:) \(written)")
            let (seen, counted, decoded) = try await db.read { conn in
                var seen: [Int] = []
                let cursor = try conn.cursor(literal: "SELECT id FROM \(identifier: table) WHERE id > \(2) ORDER BY id")
                while let row = try cursor.next() { seen.append(row.get(0, as: Int.self) ?? -1) }
                let byOwner = try conn.prepare(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = ?")
                let counted = try byOwner.query(owner)[0].get(0, as: Int.self) ?? -1
                var decoded: [String] = []
                try conn.cursor(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [1, 4]) ORDER BY id")
                    .forEach { decoded.append($0.title) }
                return (seen, counted, decoded)
            }
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-default-main-actor", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-default-main-actor", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            print("ok literals-default-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/literals-default-main-actor-pool.db", key: "my-passphrase")
            let marker = "!"
            let table = "notes"
            let owner = "O'Brien\(marker); DROP TABLE notes; --"
            let ids = [1, 2, 3]
            let titles = ["note-1", "note-2", "note-3"]
            try await db.execute(literal: "CREATE TABLE \(identifier: table)(id INTEGER PRIMARY KEY, title TEXT NOT NULL, owner TEXT)")
            for id in ids {
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(id), \(titles[id - 1]), \(owner))")
            }
            let picked = try await db.query(literal: "SELECT title FROM \(identifier: table) WHERE owner = \(owner) AND id IN \(list: [1, 3]) ORDER BY id")
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-default-main-actor-pool", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-default-main-actor-pool", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-default-main-actor-pool", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-default-main-actor-pool", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-default-main-actor-pool", "conn.execute/fetch/query(literal:) \(written)")
            let (seen, counted, decoded) = try await db.read { conn in
                var seen: [Int] = []
                let cursor = try conn.cursor(literal: "SELECT id FROM \(identifier: table) WHERE id > \(2) ORDER BY id")
                while let row = try cursor.next() { seen.append(row.get(0, as: Int.self) ?? -1) }
                let byOwner = try conn.prepare(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = ?")
                let counted = try byOwner.query(owner)[0].get(0, as: Int.self) ?? -1
                var decoded: [String] = []
                try conn.cursor(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [1, 4]) ORDER BY id")
                    .forEach { decoded.append($0.title) }
                return (seen, counted, decoded)
            }
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-default-main-actor-pool", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-default-main-actor-pool", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            print("ok literals-default-main-actor-pool")
        }
    }()
    try await LiteralsModel().run(directory: directory)

    // MARK: backups, rekeys, exports, conversions, integrity and plaintext import, each with a progress closure formed here
    try await { () async throws in
        // a Database
        do {
            let base = directory + "/files-default-main-actor"
            let db = try Database(path: directory + "/files-default-main-actor.db", key: "my-passphrase")
            let marker = "!"
            try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            let expected: [String] = ["a", "b", "c"].map { $0 + marker }
            try await db.execute("INSERT INTO notes(body) VALUES (?), (?), (?)", expected[0], expected[1], expected[2])
            // The copies take a raw key: no key derivation, which keeps the example quick.
            let copyKey = Data(repeating: 0x11, count: 32)
            let backupLog = ProgressLog()
            try await db.backup(to: base + "-backup.db", key: .rawKey(copyKey), pagesPerStep: 1, progress: { progress in
                backupLog.record(progress)
            })
            let exportLog = ProgressLog()
            try await db.export(to: base + "-export.db", key: .rawKey(copyKey), progress: { exportLog.record($0) })
            let decryptLog = ProgressLog()
            try await db.exportDecrypted(to: base + "-plain.db", progress: { decryptLog.record($0) })
            let header = FileManager.default.contents(atPath: base + "-plain.db")?.prefix(16)
            try expect(header == Data("SQLite format 3\0".utf8), "files-default-main-actor", "exportDecrypted's header")
            let encryptLog = ProgressLog()
            try Database.encrypt(plaintextAt: base + "-plain.db", to: base + "-encrypted.db", key: .rawKey(copyKey),
                                 progress: { encryptLog.record($0) })
            try await db.exportDecrypted(to: base + "-in-place.db")
            let inPlaceLog = ProgressLog()
            try Database.encryptInPlace(path: base + "-in-place.db", key: .rawKey(copyKey), progress: { inPlaceLog.record($0) })
            for suffix in ["-backup.db", "-export.db", "-encrypted.db", "-in-place.db"] {
                let copy = try Database(path: base + suffix, rawKey: copyKey)
                let bodies = try await copy.query("SELECT body FROM notes ORDER BY id").map { $0.get(0, as: String.self) }
                await copy.close()
                try expect(bodies == expected, "files-default-main-actor", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-default-main-actor", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-default-main-actor", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-default-main-actor", "verifyIntegrity \(report) \(integrityLog.steps)")

            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-default-main-actor", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-default-main-actor", "rows after rekey \(String(describing: count))")
            print("ok files-default-main-actor")
        }
        // a DatabasePool
        do {
            let base = directory + "/files-default-main-actor-pool"
            let db = try DatabasePool(path: directory + "/files-default-main-actor-pool.db", key: "my-passphrase")
            let marker = "!"
            try await db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            let expected: [String] = ["a", "b", "c"].map { $0 + marker }
            try await db.execute("INSERT INTO notes(body) VALUES (?), (?), (?)", expected[0], expected[1], expected[2])
            // The copies take a raw key: no key derivation, which keeps the example quick.
            let copyKey = Data(repeating: 0x11, count: 32)
            let backupLog = ProgressLog()
            try await db.backup(to: base + "-backup.db", key: .rawKey(copyKey), pagesPerStep: 1, progress: { progress in
                backupLog.record(progress)
            })
            let exportLog = ProgressLog()
            try await db.export(to: base + "-export.db", key: .rawKey(copyKey), progress: { exportLog.record($0) })
            let decryptLog = ProgressLog()
            try await db.exportDecrypted(to: base + "-plain.db", progress: { decryptLog.record($0) })
            let header = FileManager.default.contents(atPath: base + "-plain.db")?.prefix(16)
            try expect(header == Data("SQLite format 3\0".utf8), "files-default-main-actor-pool", "exportDecrypted's header")
            let encryptLog = ProgressLog()
            try Database.encrypt(plaintextAt: base + "-plain.db", to: base + "-encrypted.db", key: .rawKey(copyKey),
                                 progress: { encryptLog.record($0) })
            try await db.exportDecrypted(to: base + "-in-place.db")
            let inPlaceLog = ProgressLog()
            try Database.encryptInPlace(path: base + "-in-place.db", key: .rawKey(copyKey), progress: { inPlaceLog.record($0) })
            for suffix in ["-backup.db", "-export.db", "-encrypted.db", "-in-place.db"] {
                let copy = try Database(path: base + suffix, rawKey: copyKey)
                let bodies = try await copy.query("SELECT body FROM notes ORDER BY id").map { $0.get(0, as: String.self) }
                await copy.close()
                try expect(bodies == expected, "files-default-main-actor-pool", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-default-main-actor-pool", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-default-main-actor-pool", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-default-main-actor-pool", "verifyIntegrity \(report) \(integrityLog.steps)")

            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-default-main-actor-pool", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-default-main-actor-pool", "rows after rekey \(String(describing: count))")
            print("ok files-default-main-actor-pool")
        }
    }()
    try await FilesModel().run(directory: directory)

    // MARK: tracing: a trace closure formed here, a TraceToken cancelled, traceEvents read by a task of this context, stopTracing
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/tracing-default-main-actor.db", key: "my-passphrase")
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
            try expect(traced.lines == expectedTrace, "tracing-default-main-actor",
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
                       "tracing-default-main-actor", "traceEvents \(seen)")
            await db.close()
            print("ok tracing-default-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/tracing-default-main-actor-pool.db", key: "my-passphrase")
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
            try expect(traced.lines == expectedTrace, "tracing-default-main-actor-pool",
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
                       "tracing-default-main-actor-pool", "traceEvents \(seen)")
            await db.close()
            print("ok tracing-default-main-actor-pool")
        }
    }()
    try await TracingModel().run(directory: directory)

    // MARK: functions and collations: a scalar function and a collation whose closures are formed here, an aggregate, removal
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/functions-default-main-actor.db", key: "my-passphrase")
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
            try expect(shouted == expectedShouts, "functions-default-main-actor", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-default-main-actor", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-default-main-actor", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-default-main-actor", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-default-main-actor", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            print("ok functions-default-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/functions-default-main-actor-pool.db", key: "my-passphrase")
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
            try expect(shouted == expectedShouts, "functions-default-main-actor-pool", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-default-main-actor-pool", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-default-main-actor-pool", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-default-main-actor-pool", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-default-main-actor-pool", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            print("ok functions-default-main-actor-pool")
        }
    }()
    try await FunctionsModel().run(directory: directory)

    // MARK: cursors, prepared statements, nested savepoints, read { }, and a prepareConnection closure formed here
    try await { () async throws in
        // a Database
        do {
            let marker = "!"
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try Database(path: directory + "/statements-default-main-actor.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-default-main-actor", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-default-main-actor", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-default-main-actor",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-default-main-actor", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-default-main-actor", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-default-main-actor", "values(of:) \(observed)")
            await db.close()
            print("ok statements-default-main-actor")
        }
        // a DatabasePool
        do {
            let marker = "!"
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try DatabasePool(path: directory + "/statements-default-main-actor-pool.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-default-main-actor-pool", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-default-main-actor-pool", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-default-main-actor-pool",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-default-main-actor-pool", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-default-main-actor-pool", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-default-main-actor-pool", "values(of:) \(observed)")
            await db.close()
            print("ok statements-default-main-actor-pool")
        }
    }()
    try await StatementsModel().run(directory: directory)

    // MARK: schema introspection and the entity counts, existence checks and deletes
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/schema-default-main-actor.db", key: "my-passphrase")
            let marker = "!"
            try await db.migrate([CreateOrders(), CreateProductsTable()])
            try await db.execute("CREATE INDEX products_by_name ON products(name)")
            try await db.execute("CREATE VIEW cheap_products AS SELECT * FROM products WHERE price < 5")
            try await db.execute("""
                CREATE TRIGGER orders_count AFTER INSERT ON orders
                BEGIN UPDATE customers SET orders = orders + 1 WHERE name = NEW.customer; END
                """)
            let ordersExists = try await db.tableExists("orders")
            let viewIsTable = try await db.tableExists("cheap_products")
            try expect(ordersExists && !viewIsTable, "schema-default-main-actor", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-default-main-actor", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-default-main-actor", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-default-main-actor", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-default-main-actor", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-default-main-actor", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-default-main-actor", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-default-main-actor", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-default-main-actor",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-default-main-actor", "deleteAll \(deleted), left \(left)")
            await db.close()
            print("ok schema-default-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/schema-default-main-actor-pool.db", key: "my-passphrase")
            let marker = "!"
            try await db.migrate([CreateOrders(), CreateProductsTable()])
            try await db.execute("CREATE INDEX products_by_name ON products(name)")
            try await db.execute("CREATE VIEW cheap_products AS SELECT * FROM products WHERE price < 5")
            try await db.execute("""
                CREATE TRIGGER orders_count AFTER INSERT ON orders
                BEGIN UPDATE customers SET orders = orders + 1 WHERE name = NEW.customer; END
                """)
            let ordersExists = try await db.tableExists("orders")
            let viewIsTable = try await db.tableExists("cheap_products")
            try expect(ordersExists && !viewIsTable, "schema-default-main-actor-pool", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-default-main-actor-pool", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-default-main-actor-pool", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-default-main-actor-pool", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-default-main-actor-pool", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-default-main-actor-pool", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-default-main-actor-pool", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-default-main-actor-pool", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-default-main-actor-pool",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-default-main-actor-pool", "deleteAll \(deleted), left \(left)")
            await db.close()
            print("ok schema-default-main-actor-pool")
        }
    }()
    try await SchemaModel().run(directory: directory)

    // MARK: FTS5 (a CreateFTS5Table migration, match, bm25, snippet, highlight) and the JSON builder, or their typed refusal where the library lacks the capability
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/search-default-main-actor.db", key: "my-passphrase")
            let marker = "!"
            let features = try SqlCipherLibrary.shared.capabilities.features
            let notes = TableName("notes_fts")
            guard let pattern = FTS5Pattern(matchingAllTokensIn: "privacy") else {
                throw ExampleFailure(context: "search-default-main-actor", what: "no pattern")
            }
            if features.contains(.fts5) {
                try await db.migrate([CreateNotesSearch()])
                try await db.execute("INSERT INTO notes_fts(title, body) VALUES (?, ?), (?, ?)",
                                     "Privacy\(marker)", "keys stay private", "Other", "privacy and encryption")
                let found = try await db.query(
                    Select(col("rowid"), notes.highlight(column: 0, before: "<", after: ">").as("title"),
                           notes.snippet(column: 1, before: "[", after: "]").as("excerpt"))
                        .from(notes)
                        .where(notes.match(pattern))
                        .orderBy(notes.bm25(weights: 10, 1))
                )
                let titles = found.map { $0.get("title", as: String.self) }
                let excerpt = found.last?.get("excerpt", as: String.self) ?? ""
                let expectedTitles: [String?] = ["<Privacy>\(marker)", "Other"]
            try expect(titles == expectedTitles && excerpt.contains("[privacy]"), "search-default-main-actor", "fts5 \(titles) \(excerpt)")
            } else {
                do {
                    try await db.migrate([CreateNotesSearch()])
                    throw ExampleFailure(context: "search-default-main-actor", what: "CreateFTS5Table ran without fts5")
                } catch SqlCipherError.migrationFailed(id: "020-notes-search", reason: let reason) where reason.contains("`fts5`") {}
                // The builder's own refusal, outside a migration (which reports it as its reason).
                do {
                    _ = try CreateFTS5Table(notes).column("body").render()
                    throw ExampleFailure(context: "search-default-main-actor", what: "CreateFTS5Table rendered without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
                try await db.execute("CREATE VIRTUAL TABLE notes_fts USING fts4(title, body)")
                do {
                    _ = try await db.query(Select(col("rowid")).from(notes).where(notes.match(pattern)).orderBy(notes.bm25()))
                    throw ExampleFailure(context: "search-default-main-actor", what: "MATCH ran without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
            }
            let docs = TableName("docs")
            let meta = col("meta")
            let tags = JSONEach(docs.col("meta"), atPath: "$.tags")
            try await db.execute("CREATE TABLE docs(id INTEGER PRIMARY KEY, meta TEXT NOT NULL)")
            try await db.execute("INSERT INTO docs(meta) VALUES (?), (?)",
                                 #"{"author":{"name":"Ada"},"stars":5,"tags":["swift","sqlite"]}"#,
                                 #"{"author":{"name":"Bob"},"stars":2,"tags":["c"]}"#)
            if features.contains(.json) {
                let rated = try await db.query(
                    Select(meta.jsonExtract(atPath: "$.author.name").as("author")).from(docs).where(meta.jsonExtract(atPath: "$.stars") >= 4)
                ).map { $0.get("author", as: String.self) }
                try expect(rated == ["Ada"], "search-default-main-actor", "jsonExtract \(rated)")
                let allTags = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)).orderBy(tags.value))
                    .map { $0.get(0, as: String.self) }
                try expect(allTags == ["c", "sqlite", "swift"], "search-default-main-actor", "JSONEach \(allTags)")
                let wanted = "sqlite"
                let tagged = try await db.query(literal: "SELECT id FROM docs WHERE \(wanted) IN (\(Select(tags.value).from(tags)))")
                    .map { $0.get(0, as: Int.self) }
                try expect(tagged == [1], "search-default-main-actor", "JSONEach in a literal \(tagged)")
                if features.contains(.jsonOperators) {
                    let stars = try await db.query(Select(meta.jsonValue(atPath: "stars").as("stars")).from(docs).orderBy(col("id")))
                        .map { $0.get(0, as: Int.self) }
                    try expect(stars == [5, 2], "search-default-main-actor", "jsonValue \(stars)")
                } else {
                    do {
                        _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                        throw ExampleFailure(context: "search-default-main-actor", what: "->> ran without jsonOperators")
                    } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`jsonOperators`") {}
                }
            } else {
                do {
                    _ = try await db.query(Select(meta.jsonExtract(atPath: "$.stars")).from(docs))
                    throw ExampleFailure(context: "search-default-main-actor", what: "json_extract ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)))
                    throw ExampleFailure(context: "search-default-main-actor", what: "json_each ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                    throw ExampleFailure(context: "search-default-main-actor", what: "->> ran without json")
                } catch let error as SqlCipherError {
                    guard case .unsupported = error else { throw error }
                }
            }
            await db.close()
            print("ok search-default-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/search-default-main-actor-pool.db", key: "my-passphrase")
            let marker = "!"
            let features = try SqlCipherLibrary.shared.capabilities.features
            let notes = TableName("notes_fts")
            guard let pattern = FTS5Pattern(matchingAllTokensIn: "privacy") else {
                throw ExampleFailure(context: "search-default-main-actor-pool", what: "no pattern")
            }
            if features.contains(.fts5) {
                try await db.migrate([CreateNotesSearch()])
                try await db.execute("INSERT INTO notes_fts(title, body) VALUES (?, ?), (?, ?)",
                                     "Privacy\(marker)", "keys stay private", "Other", "privacy and encryption")
                let found = try await db.query(
                    Select(col("rowid"), notes.highlight(column: 0, before: "<", after: ">").as("title"),
                           notes.snippet(column: 1, before: "[", after: "]").as("excerpt"))
                        .from(notes)
                        .where(notes.match(pattern))
                        .orderBy(notes.bm25(weights: 10, 1))
                )
                let titles = found.map { $0.get("title", as: String.self) }
                let excerpt = found.last?.get("excerpt", as: String.self) ?? ""
                let expectedTitles: [String?] = ["<Privacy>\(marker)", "Other"]
            try expect(titles == expectedTitles && excerpt.contains("[privacy]"), "search-default-main-actor-pool", "fts5 \(titles) \(excerpt)")
            } else {
                do {
                    try await db.migrate([CreateNotesSearch()])
                    throw ExampleFailure(context: "search-default-main-actor-pool", what: "CreateFTS5Table ran without fts5")
                } catch SqlCipherError.migrationFailed(id: "020-notes-search", reason: let reason) where reason.contains("`fts5`") {}
                // The builder's own refusal, outside a migration (which reports it as its reason).
                do {
                    _ = try CreateFTS5Table(notes).column("body").render()
                    throw ExampleFailure(context: "search-default-main-actor-pool", what: "CreateFTS5Table rendered without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
                try await db.execute("CREATE VIRTUAL TABLE notes_fts USING fts4(title, body)")
                do {
                    _ = try await db.query(Select(col("rowid")).from(notes).where(notes.match(pattern)).orderBy(notes.bm25()))
                    throw ExampleFailure(context: "search-default-main-actor-pool", what: "MATCH ran without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
            }
            let docs = TableName("docs")
            let meta = col("meta")
            let tags = JSONEach(docs.col("meta"), atPath: "$.tags")
            try await db.execute("CREATE TABLE docs(id INTEGER PRIMARY KEY, meta TEXT NOT NULL)")
            try await db.execute("INSERT INTO docs(meta) VALUES (?), (?)",
                                 #"{"author":{"name":"Ada"},"stars":5,"tags":["swift","sqlite"]}"#,
                                 #"{"author":{"name":"Bob"},"stars":2,"tags":["c"]}"#)
            if features.contains(.json) {
                let rated = try await db.query(
                    Select(meta.jsonExtract(atPath: "$.author.name").as("author")).from(docs).where(meta.jsonExtract(atPath: "$.stars") >= 4)
                ).map { $0.get("author", as: String.self) }
                try expect(rated == ["Ada"], "search-default-main-actor-pool", "jsonExtract \(rated)")
                let allTags = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)).orderBy(tags.value))
                    .map { $0.get(0, as: String.self) }
                try expect(allTags == ["c", "sqlite", "swift"], "search-default-main-actor-pool", "JSONEach \(allTags)")
                let wanted = "sqlite"
                let tagged = try await db.query(literal: "SELECT id FROM docs WHERE \(wanted) IN (\(Select(tags.value).from(tags)))")
                    .map { $0.get(0, as: Int.self) }
                try expect(tagged == [1], "search-default-main-actor-pool", "JSONEach in a literal \(tagged)")
                if features.contains(.jsonOperators) {
                    let stars = try await db.query(Select(meta.jsonValue(atPath: "stars").as("stars")).from(docs).orderBy(col("id")))
                        .map { $0.get(0, as: Int.self) }
                    try expect(stars == [5, 2], "search-default-main-actor-pool", "jsonValue \(stars)")
                } else {
                    do {
                        _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                        throw ExampleFailure(context: "search-default-main-actor-pool", what: "->> ran without jsonOperators")
                    } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`jsonOperators`") {}
                }
            } else {
                do {
                    _ = try await db.query(Select(meta.jsonExtract(atPath: "$.stars")).from(docs))
                    throw ExampleFailure(context: "search-default-main-actor-pool", what: "json_extract ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)))
                    throw ExampleFailure(context: "search-default-main-actor-pool", what: "json_each ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                    throw ExampleFailure(context: "search-default-main-actor-pool", what: "->> ran without json")
                } catch let error as SqlCipherError {
                    guard case .unsupported = error else { throw error }
                }
            }
            await db.close()
            print("ok search-default-main-actor-pool")
        }
    }()
    try await SearchModel().run(directory: directory)

    // MARK: LiveQuery, the main-actor observable wrapper, with a request whose closure is formed here
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/live-default-main-actor.db", key: "my-passphrase")
            let marker = "!"
            try await db.execute("CREATE TABLE tasks(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            let titles = LiveQuery(LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks ORDER BY id").compactMap { row -> String? in row.get(0, as: String.self).map { "\($0)\(marker)" } }
            }, database: db)
            try await waitUntil("live-default-main-actor", "the first value") { !titles.phase.isLoading && titles.phase.error == nil && titles.value.isEmpty }
            try await db.execute("INSERT INTO tasks(title) VALUES (?)", "write")
            try await waitUntil("live-default-main-actor", "the committed row") { titles.value == ["write\(marker)"] }
            // Another request: the current value stays until the new one's first result.
            let excluded = "write"
            titles.request = LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks WHERE title <> ? ORDER BY id", excluded).compactMap { $0.get(0, as: String.self) }
            }
            try await waitUntil("live-default-main-actor", "the new request's value") { titles.value.isEmpty }
            let done = LiveQuery(.count(Product.self), database: nil)
            try await waitUntil("live-default-main-actor", "missingDatabase") { done.phase.error is LiveError }
            done.database = db
            try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
            done.retry()
            try await waitUntil("live-default-main-actor", "the count") { !done.phase.isLoading && done.phase.error == nil && done.value == 0 }
            await db.close()
            print("ok live-default-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/live-default-main-actor-pool.db", key: "my-passphrase")
            let marker = "!"
            try await db.execute("CREATE TABLE tasks(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            let titles = LiveQuery(LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks ORDER BY id").compactMap { row -> String? in row.get(0, as: String.self).map { "\($0)\(marker)" } }
            }, database: db)
            try await waitUntil("live-default-main-actor-pool", "the first value") { !titles.phase.isLoading && titles.phase.error == nil && titles.value.isEmpty }
            try await db.execute("INSERT INTO tasks(title) VALUES (?)", "write")
            try await waitUntil("live-default-main-actor-pool", "the committed row") { titles.value == ["write\(marker)"] }
            // Another request: the current value stays until the new one's first result.
            let excluded = "write"
            titles.request = LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks WHERE title <> ? ORDER BY id", excluded).compactMap { $0.get(0, as: String.self) }
            }
            try await waitUntil("live-default-main-actor-pool", "the new request's value") { titles.value.isEmpty }
            let done = LiveQuery(.count(Product.self), database: nil)
            try await waitUntil("live-default-main-actor-pool", "missingDatabase") { done.phase.error is LiveError }
            done.database = db
            try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
            done.retry()
            try await waitUntil("live-default-main-actor-pool", "the count") { !done.phase.isLoading && done.phase.error == nil && done.value == 0 }
            await db.close()
            print("ok live-default-main-actor-pool")
        }
    }()
    try await LiveQueriesModel().run(directory: directory)

    // 5. The user's own types that the database compares or decodes on its executor, declared as
    // the article "Isolation and cancellation" says (Models.swift): a closure request's value,
    // observed as a sequence and as a LiveQuery, and an entity holding an Equatable value.
    do {
        let context = "types-default-main-actor"
        let db = try Database(path: directory + "/\(context).db", key: "my-passphrase")
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        try await db.execute("CREATE TABLE contacts(id TEXT PRIMARY KEY, kind TEXT NOT NULL, address TEXT, added TEXT NOT NULL)")
        let range = LiveRequest(placeholder: PriceRange?.none) { conn in
            let row = try conn.query("SELECT min(price) AS lo, max(price) AS hi FROM products")[0]
            guard let lowest = row.get("lo", as: Double.self), let highest = row.get("hi", as: Double.self) else {
                return nil
            }
            return PriceRange(lowest: lowest, highest: highest)
        }
        let held = LiveQuery(range, database: db)
        var ranges: [PriceRange?] = []
        for try await value in db.values(of: range) {
            ranges.append(value)
            if value != nil { break }
            try await db.save(Product(id: nil, name: "Widget", price: 9.99))
        }
        if ranges != [nil, PriceRange(lowest: 9.99, highest: 9.99)] {
            throw ExampleFailure(context: context, what: "ranges \(ranges)")
        }
        try await waitUntil(context, "the LiveQuery's range") { held.value == PriceRange(lowest: 9.99, highest: 9.99) }
        let contact = Contact(id: UUID(), kind: .company, address: Address(street: "1 Main St", city: "Oslo"),
                              added: Date(timeIntervalSince1970: 1_700_000_000))
        try await db.save(contact)
        let found = try await db.fetchOne(Contact.self, id: contact.id)
        if found != contact { throw ExampleFailure(context: context, what: "contact \(String(describing: found))") }
        await db.close()
        print("ok \(context)")
    }
} catch {
    FileHandle.standardError.write(Data("examples failed: \(error)\n".utf8))
    exit(1)
}
