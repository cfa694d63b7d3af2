// The seed's examples for transactions, savepoints, live queries and migrations, then every other
// API family (section 9, and Topics/*.swift for the other contexts), written as a user writes them
// in each isolation context a Swift program has; a wrong result exits 1 with what differed. This file is top-level code:
// its closures are formed main-actor isolated, which is where a non-Sendable body used to trap at
// run time as soon as it held a nested closure. Compiled by the package build (a compile error
// fails the suite) and run by IsolationContextTests against each SQLCipher library.
//
// Usage: sqlcipherkit-isolation-examples DIRECTORY
import Foundation
import SqlCipherKit

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: sqlcipherkit-isolation-examples DIRECTORY\n".utf8))
    exit(2)
}
let directory = CommandLine.arguments[1]

do {
    // 1. Top-level code.
    let db = try Database(path: directory + "/top-level.db", key: "my-passphrase")
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
    try await db.rollback(to: "002-add-discount", using: migrations)
    try await verify(db, context: "top-level")
    print("ok top-level")

    // 2. A @MainActor class (a view model).
    try await ProductListModel(path: directory + "/main-actor.db").run()
    print("ok main-actor")

    // 3. A method of the caller's own actor.
    try await OrderService(path: directory + "/actor.db").run()
    print("ok actor")

    // 4. A plain async function.
    try await plainAsyncExamples(path: directory + "/async-function.db")
    print("ok async-function")

    // 5. Task.detached.
    try await detachedExamples(path: directory + "/detached.db")
    print("ok detached")

    // 6. A @Sendable closure, as a server's route handler is.
    try await routeHandlerExamples(path: directory + "/route-handler.db")
    print("ok route-handler")

    // 7. Top-level code, on a DatabasePool.
    var configuration = DatabaseConfiguration()
    configuration.synchronous = .normal
    configuration.prepareConnection = { conn in try conn.execute("PRAGMA recursive_triggers = ON") }
    let pool = try DatabasePool(path: directory + "/pool-top-level.db", key: "my-passphrase",
                                configuration: configuration)
    let poolMigrations: [any Migration] = [CreateOrders(), CreateProductsTable(), AddDiscountColumn()]
    try await pool.migrate(poolMigrations)

    let poolSkus = ["A-1", "B-2", "C-3"]
    let poolOrder = try await pool.transaction { conn in
        let order = try conn.save(Order(id: nil, customer: "Alice"))
        try conn.save(poolSkus.map { LineItem(id: nil, orderID: order.id!, sku: $0) })
        try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
        return order
    }
    try await pool.transaction { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Bob")
        try? conn.savepoint { conn in
            try conn.execute("INSERT INTO customers(name, orders) VALUES (?, 0)", "Carol")
            throw CancellationError()
        }
    }
    try await pool.savepoint { conn in
        try conn.execute("INSERT INTO customers(name, orders) VALUES (?, ?)", "Dave", poolOrder.id! - poolOrder.id!)
    }
    for try await count in pool.values(of: .count(Product.self)) {
        if count == 1 { break }
        try await pool.save(Product(id: nil, name: "Widget", price: 9.99))
    }
    try await pool.rollback(to: "002-add-discount", using: poolMigrations)
    try await readsBesideAWrite(pool, context: "pool-top-level")
    try await verify(pool, context: "pool-top-level")
    try await verifyConfiguration(pool, context: "pool-top-level")
    await pool.close()
    print("ok pool-top-level")

    try await PooledProductListModel(path: directory + "/pool-main-actor.db").run()
    print("ok pool-main-actor")
    try await PooledOrderService(path: directory + "/pool-actor.db").run()
    print("ok pool-actor")
    try await pooledDetachedExamples(path: directory + "/pool-detached.db")
    print("ok pool-detached")

    // 8. Streams left with `break` inside an `if`, `do` or `switch` of top-level code: Swift does
    // not destroy such an iterator, so nothing may depend on its deinit. A watchdog turns a call
    // that would wait forever into a failure instead of a hung suite.
    let watchdog = Task.detached {
        try await Task.sleep(for: .seconds(60))
        FileHandle.standardError.write(Data("examples failed: a call after an abandoned stream never returned\n".utf8))
        exit(3)
    }
    let streamed = try Database(path: directory + "/streams.db", key: "my-passphrase")
    try await streamed.execute("CREATE TABLE t(x INTEGER)")
    try await streamed.transaction { conn in
        for x in 0..<1000 { try conn.execute("INSERT INTO t VALUES (?)", x) }
    }
    for try await row in streamed.stream("SELECT x FROM t", batchSize: 10) {
        if row.get(0, as: Int.self) == 5 { break }
    }
    for try await row in streamed.stream("SELECT x FROM t", batchSize: 10) {
        do { if row.get(0, as: Int.self) == 5 { break } }
    }
    rows: for try await row in streamed.stream("SELECT x FROM t", batchSize: 10) {
        switch row.get(0, as: Int.self) {
        case 5: break rows
        default: continue
        }
    }
    // Each stream above still holds its statement; the DROP needs the table they read.
    try await streamed.execute("DROP TABLE t")
    await streamed.close()
    print("ok streams-database")

    let onePool = try DatabasePool(path: directory + "/streams-pool.db", key: "my-passphrase", maximumReaderCount: 1)
    try await onePool.execute("CREATE TABLE t(x INTEGER)")
    try await onePool.transaction { conn in
        for x in 0..<1000 { try conn.execute("INSERT INTO t VALUES (?)", x) }
    }
    for try await row in onePool.stream("SELECT x FROM t", batchSize: 10) {
        if row.get(0, as: Int.self) == 5 { break }
    }
    for try await row in onePool.stream("SELECT x FROM t", batchSize: 10) {
        do { if row.get(0, as: Int.self) == 5 { break } }
    }
    // The only reader is held by the abandoned streams in turn: each read takes it back.
    let count = try await onePool.query("SELECT count(*) FROM t")[0].get(0, as: Int.self)
    guard count == 1000 else { throw ExampleFailure(context: "streams-pool", what: "count \(String(describing: count))") }
    var seen = 0
    for try await _ in onePool.stream("SELECT x FROM t", batchSize: 10) { seen += 1 }
    guard seen == 1000 else { throw ExampleFailure(context: "streams-pool", what: "streamed \(seen)") }
    await onePool.close()
    watchdog.cancel()
    print("ok streams-pool")

    // 9. Every other API family, one topic at a time: here as top-level code, then in the other
    // contexts (Topics/*.swift). Each topic's top-level code is a closure formed here and called at
    // once: main-actor isolated like the code around it, its closures formed in that isolation,
    // and one function per topic, which keeps the compiler's memory bounded (as one top-level
    // function, this file took more than 5 GB to compile).
    // MARK: SQL literals (`SQL` interpolation): every entry point, with interpolated values, identifiers and lists
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/literals-top-level.db", key: "my-passphrase")
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
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-top-level", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-top-level", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-top-level", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-top-level", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-top-level", "conn.execute/fetch/query(literal:) \(written)")
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
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-top-level", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-top-level", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            print("ok literals-top-level")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/literals-pool-top-level.db", key: "my-passphrase")
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
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-pool-top-level", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-pool-top-level", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-pool-top-level", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-pool-top-level", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-pool-top-level", "conn.execute/fetch/query(literal:) \(written)")
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
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-pool-top-level", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-pool-top-level", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            print("ok literals-pool-top-level")
        }
    }()
    try await LiteralsModel().run(directory: directory)
    try await LiteralsService().run(directory: directory)
    try await literalsDetached(directory: directory)

    // MARK: backups, rekeys, exports, conversions, integrity and plaintext import, each with a progress closure formed here
    try await { () async throws in
        // a Database
        do {
            let base = directory + "/files-top-level"
            let db = try Database(path: directory + "/files-top-level.db", key: "my-passphrase")
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
            try expect(header == Data("SQLite format 3\0".utf8), "files-top-level", "exportDecrypted's header")
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
                try expect(bodies == expected, "files-top-level", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-top-level", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-top-level", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-top-level", "verifyIntegrity \(report) \(integrityLog.steps)")

            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-top-level", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-top-level", "rows after rekey \(String(describing: count))")
            print("ok files-top-level")
        }
        // a DatabasePool
        do {
            let base = directory + "/files-pool-top-level"
            let db = try DatabasePool(path: directory + "/files-pool-top-level.db", key: "my-passphrase")
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
            try expect(header == Data("SQLite format 3\0".utf8), "files-pool-top-level", "exportDecrypted's header")
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
                try expect(bodies == expected, "files-pool-top-level", "rows of \(suffix): \(bodies)")
            }
            for (what, log) in [("backup", backupLog), ("export", exportLog), ("exportDecrypted", decryptLog),
                                ("encrypt", encryptLog), ("encryptInPlace", inPlaceLog)] {
                try expect(log.reachedTheEnd, "files-pool-top-level", "\(what) progress \(log.steps)")
            }
            let imported = try await db.importPlaintext(from: base + "-plain.db") { conn in
                try conn.execute("INSERT INTO main.notes(body) SELECT body FROM plain.notes")
            }
            try expect(imported == 3, "files-pool-top-level", "importPlaintext inserted \(imported)")
            let integrityLog = ProgressLog()
            let report = try await db.verifyIntegrity(progress: { integrityLog.record($0) })
            try expect(report.isOK && integrityLog.reachedTheEnd, "files-pool-top-level", "verifyIntegrity \(report) \(integrityLog.steps)")

            let rekeyLog = ProgressLog()
            try await db.rekey("new-passphrase\(marker)", progress: { rekeyLog.record($0) })
            let rawKey = Data(repeating: 0x2a, count: 32)
            try await db.rekey(rawKey: rawKey, progress: { progress in rekeyLog.record(progress) })
            try expect(rekeyLog.reachedTheEnd, "files-pool-top-level", "rekey progress \(rekeyLog.steps)")
            await db.close()
            let reopened = try Database(path: base + ".db", rawKey: rawKey)
            let count = try await reopened.query("SELECT count(*) FROM notes")[0].get(0, as: Int.self)
            await reopened.close()
            try expect(count == 6, "files-pool-top-level", "rows after rekey \(String(describing: count))")
            print("ok files-pool-top-level")
        }
    }()
    try await FilesModel().run(directory: directory)
    try await FilesService().run(directory: directory)
    try await filesDetached(directory: directory)

    // MARK: tracing: a trace closure formed here, a TraceToken cancelled, traceEvents read by a task of this context, stopTracing
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/tracing-top-level.db", key: "my-passphrase")
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
            try expect(traced.lines == expectedTrace, "tracing-top-level",
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
                       "tracing-top-level", "traceEvents \(seen)")
            await db.close()
            print("ok tracing-top-level")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/tracing-pool-top-level.db", key: "my-passphrase")
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
            try expect(traced.lines == expectedTrace, "tracing-pool-top-level",
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
                       "tracing-pool-top-level", "traceEvents \(seen)")
            await db.close()
            print("ok tracing-pool-top-level")
        }
    }()
    try await TracingModel().run(directory: directory)
    try await TracingService().run(directory: directory)
    try await tracingDetached(directory: directory)

    // MARK: functions and collations: a scalar function and a collation whose closures are formed here, an aggregate, removal
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/functions-top-level.db", key: "my-passphrase")
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
            try expect(shouted == expectedShouts, "functions-top-level", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-top-level", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-top-level", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-top-level", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-top-level", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            print("ok functions-top-level")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/functions-pool-top-level.db", key: "my-passphrase")
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
            try expect(shouted == expectedShouts, "functions-pool-top-level", "shout/by_length \(shouted)")
            let middle = try await db.query("SELECT median(length(w)) FROM words")[0].get(0, as: Double.self)
            try expect(middle == 2.5, "functions-pool-top-level", "median \(String(describing: middle))")
            let inBody = try await db.transaction { conn in
                try conn.query("SELECT shout(?), median(length(w)) FROM words", "x").map { [$0.get(0, as: String.self), $0.get(1, as: Double.self).map { String($0) }] }
            }
            let expectedInBody: [[String?]] = [["X\(marker)", "2.5"]]
            try expect(inBody == expectedInBody, "functions-pool-top-level", "functions in a transaction \(inBody)")
            try await db.remove(function: shout)
            try await db.remove(function: median)
            try await db.remove(collation: byLength)
            do {
                _ = try await db.query("SELECT shout('x')")
                throw ExampleFailure(context: "functions-pool-top-level", what: "a removed function answered")
            } catch is SqlCipherError {}
            do {
                _ = try await db.query("SELECT w FROM words ORDER BY w COLLATE by_length")
                throw ExampleFailure(context: "functions-pool-top-level", what: "a removed collation answered")
            } catch is SqlCipherError {}
            await db.close()
            print("ok functions-pool-top-level")
        }
    }()
    try await FunctionsModel().run(directory: directory)
    try await FunctionsService().run(directory: directory)
    try await functionsDetached(directory: directory)

    // MARK: cursors, prepared statements, nested savepoints, read { }, and a prepareConnection closure formed here
    try await { () async throws in
        // a Database
        do {
            let marker = "!"
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try Database(path: directory + "/statements-top-level.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-top-level", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-top-level", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-top-level",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-top-level", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-top-level", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-top-level", "values(of:) \(observed)")
            await db.close()
            print("ok statements-top-level")
        }
        // a DatabasePool
        do {
            let marker = "!"
            let recursiveTriggers = "PRAGMA recursive_triggers = ON"
            var configuration = DatabaseConfiguration()
            configuration.prepareConnection = { conn in try conn.execute(recursiveTriggers) }
            let db = try DatabasePool(path: directory + "/statements-pool-top-level.db", key: "my-passphrase", configuration: configuration)
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
            try expect(inserted == 3, "statements-pool-top-level", "prepared inserts \(inserted)")
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
            try expect(small == names, "statements-pool-top-level", "cursor \(small)")
            let kept = "kept\(marker)"
            try expect(counted == 3 && fetched == [kept] && decodedNames == ["plum", kept], "statements-pool-top-level",
                       "prepared query/fetch/cursor \(counted) \(fetched) \(decodedNames)")
            try expect(quantities == [1, 2, 3, 10] && decoded == [1, 2, 3, 10], "statements-pool-top-level", "cursors \(quantities) \(decoded)")
            let writerTriggers = try await db.transaction { conn in try conn.query("PRAGMA recursive_triggers")[0].get(0, as: Int.self) }
            try expect(triggers == 1 && writerTriggers == 1, "statements-pool-top-level", "prepareConnection: read \(String(describing: triggers)), write \(String(describing: writerTriggers))")
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
            try expect(observed == [["pear", "plum", kept], ["pear", "plum", kept, "fig"]], "statements-pool-top-level", "values(of:) \(observed)")
            await db.close()
            print("ok statements-pool-top-level")
        }
    }()
    try await StatementsModel().run(directory: directory)
    try await StatementsService().run(directory: directory)
    try await statementsDetached(directory: directory)

    // MARK: schema introspection and the entity counts, existence checks and deletes
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/schema-top-level.db", key: "my-passphrase")
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
            try expect(ordersExists && !viewIsTable, "schema-top-level", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-top-level", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-top-level", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-top-level", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-top-level", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-top-level", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-top-level", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-top-level", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-top-level",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-top-level", "deleteAll \(deleted), left \(left)")
            await db.close()
            print("ok schema-top-level")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/schema-pool-top-level.db", key: "my-passphrase")
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
            try expect(ordersExists && !viewIsTable, "schema-pool-top-level", "tableExists \(ordersExists) \(viewIsTable)")
            let columns = try await db.columns(in: "line_items").map(\.name)
            try expect(columns == ["id", "orderID", "sku"], "schema-pool-top-level", "columns(in:) \(columns)")
            let indexes = try await db.indexes(on: "products").map(\.name)
            try expect(indexes == ["products_by_name"], "schema-pool-top-level", "indexes(on:) \(indexes)")
            let key = try await db.primaryKey(of: "orders")
            try expect(key.columns == ["id"] && key.kind == .rowIDAlias, "schema-pool-top-level", "primaryKey(of:) \(key)")
            let foreignKeys = try await db.foreignKeys(of: "line_items").map(\.table)
            try expect(foreignKeys == ["orders"], "schema-pool-top-level", "foreignKeys(of:) \(foreignKeys)")
            let triggers = try await db.triggers().map(\.name)
            try expect(triggers == ["orders_count"], "schema-pool-top-level", "triggers() \(triggers)")
            let views = try await db.views()
            try expect(views == ["cheap_products"], "schema-pool-top-level", "views() \(views)")
            let (inRead, viewsInRead) = try await db.read { conn in (try conn.tableExists("products"), try conn.views()) }
            try expect(inRead && viewsInRead == views, "schema-pool-top-level", "introspection in read { }")
            let widget = "Widget\(marker)"
            _ = try await db.save([Product(id: nil, name: widget, price: 9.99), Product(id: nil, name: "Gadget", price: 2.5)])
            let all = try await db.count(Product.self)
            let dear = try await db.count(Product.self, where: col("price") > 5)
            let hasWidget = try await db.exists(Product.self, where: col("name") == widget)
            let (inTransaction, free) = try await db.transaction { conn in
                (try conn.count(Product.self), try conn.exists(Product.self, where: col("price") < 1))
            }
            try expect(all == 2 && dear == 1 && hasWidget && inTransaction == 2 && !free, "schema-pool-top-level",
                       "count/exists \(all) \(dear) \(hasWidget) \(inTransaction) \(free)")
            let deleted = try await db.deleteAll(Product.self)
            let left = try await db.count(Product.self)
            try expect(deleted == 2 && left == 0, "schema-pool-top-level", "deleteAll \(deleted), left \(left)")
            await db.close()
            print("ok schema-pool-top-level")
        }
    }()
    try await SchemaModel().run(directory: directory)
    try await SchemaService().run(directory: directory)
    try await schemaDetached(directory: directory)

    // MARK: FTS5 (a CreateFTS5Table migration, match, bm25, snippet, highlight) and the JSON builder, or their typed refusal where the library lacks the capability
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/search-top-level.db", key: "my-passphrase")
            let marker = "!"
            let features = try SqlCipherLibrary.shared.capabilities.features
            let notes = TableName("notes_fts")
            guard let pattern = FTS5Pattern(matchingAllTokensIn: "privacy") else {
                throw ExampleFailure(context: "search-top-level", what: "no pattern")
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
            try expect(titles == expectedTitles && excerpt.contains("[privacy]"), "search-top-level", "fts5 \(titles) \(excerpt)")
            } else {
                do {
                    try await db.migrate([CreateNotesSearch()])
                    throw ExampleFailure(context: "search-top-level", what: "CreateFTS5Table ran without fts5")
                } catch SqlCipherError.migrationFailed(id: "020-notes-search", reason: let reason) where reason.contains("`fts5`") {}
                // The builder's own refusal, outside a migration (which reports it as its reason).
                do {
                    _ = try CreateFTS5Table(notes).column("body").render()
                    throw ExampleFailure(context: "search-top-level", what: "CreateFTS5Table rendered without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
                try await db.execute("CREATE VIRTUAL TABLE notes_fts USING fts4(title, body)")
                do {
                    _ = try await db.query(Select(col("rowid")).from(notes).where(notes.match(pattern)).orderBy(notes.bm25()))
                    throw ExampleFailure(context: "search-top-level", what: "MATCH ran without fts5")
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
                try expect(rated == ["Ada"], "search-top-level", "jsonExtract \(rated)")
                let allTags = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)).orderBy(tags.value))
                    .map { $0.get(0, as: String.self) }
                try expect(allTags == ["c", "sqlite", "swift"], "search-top-level", "JSONEach \(allTags)")
                let wanted = "sqlite"
                let tagged = try await db.query(literal: "SELECT id FROM docs WHERE \(wanted) IN (\(Select(tags.value).from(tags)))")
                    .map { $0.get(0, as: Int.self) }
                try expect(tagged == [1], "search-top-level", "JSONEach in a literal \(tagged)")
                if features.contains(.jsonOperators) {
                    let stars = try await db.query(Select(meta.jsonValue(atPath: "stars").as("stars")).from(docs).orderBy(col("id")))
                        .map { $0.get(0, as: Int.self) }
                    try expect(stars == [5, 2], "search-top-level", "jsonValue \(stars)")
                } else {
                    do {
                        _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                        throw ExampleFailure(context: "search-top-level", what: "->> ran without jsonOperators")
                    } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`jsonOperators`") {}
                }
            } else {
                do {
                    _ = try await db.query(Select(meta.jsonExtract(atPath: "$.stars")).from(docs))
                    throw ExampleFailure(context: "search-top-level", what: "json_extract ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)))
                    throw ExampleFailure(context: "search-top-level", what: "json_each ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                    throw ExampleFailure(context: "search-top-level", what: "->> ran without json")
                } catch let error as SqlCipherError {
                    guard case .unsupported = error else { throw error }
                }
            }
            await db.close()
            print("ok search-top-level")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/search-pool-top-level.db", key: "my-passphrase")
            let marker = "!"
            let features = try SqlCipherLibrary.shared.capabilities.features
            let notes = TableName("notes_fts")
            guard let pattern = FTS5Pattern(matchingAllTokensIn: "privacy") else {
                throw ExampleFailure(context: "search-pool-top-level", what: "no pattern")
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
            try expect(titles == expectedTitles && excerpt.contains("[privacy]"), "search-pool-top-level", "fts5 \(titles) \(excerpt)")
            } else {
                do {
                    try await db.migrate([CreateNotesSearch()])
                    throw ExampleFailure(context: "search-pool-top-level", what: "CreateFTS5Table ran without fts5")
                } catch SqlCipherError.migrationFailed(id: "020-notes-search", reason: let reason) where reason.contains("`fts5`") {}
                // The builder's own refusal, outside a migration (which reports it as its reason).
                do {
                    _ = try CreateFTS5Table(notes).column("body").render()
                    throw ExampleFailure(context: "search-pool-top-level", what: "CreateFTS5Table rendered without fts5")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`fts5`") {}
                try await db.execute("CREATE VIRTUAL TABLE notes_fts USING fts4(title, body)")
                do {
                    _ = try await db.query(Select(col("rowid")).from(notes).where(notes.match(pattern)).orderBy(notes.bm25()))
                    throw ExampleFailure(context: "search-pool-top-level", what: "MATCH ran without fts5")
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
                try expect(rated == ["Ada"], "search-pool-top-level", "jsonExtract \(rated)")
                let allTags = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)).orderBy(tags.value))
                    .map { $0.get(0, as: String.self) }
                try expect(allTags == ["c", "sqlite", "swift"], "search-pool-top-level", "JSONEach \(allTags)")
                let wanted = "sqlite"
                let tagged = try await db.query(literal: "SELECT id FROM docs WHERE \(wanted) IN (\(Select(tags.value).from(tags)))")
                    .map { $0.get(0, as: Int.self) }
                try expect(tagged == [1], "search-pool-top-level", "JSONEach in a literal \(tagged)")
                if features.contains(.jsonOperators) {
                    let stars = try await db.query(Select(meta.jsonValue(atPath: "stars").as("stars")).from(docs).orderBy(col("id")))
                        .map { $0.get(0, as: Int.self) }
                    try expect(stars == [5, 2], "search-pool-top-level", "jsonValue \(stars)")
                } else {
                    do {
                        _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                        throw ExampleFailure(context: "search-pool-top-level", what: "->> ran without jsonOperators")
                    } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`jsonOperators`") {}
                }
            } else {
                do {
                    _ = try await db.query(Select(meta.jsonExtract(atPath: "$.stars")).from(docs))
                    throw ExampleFailure(context: "search-pool-top-level", what: "json_extract ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(tags.value).from(docs).join(tags, on: SQLExpression.value(true)))
                    throw ExampleFailure(context: "search-pool-top-level", what: "json_each ran without json")
                } catch SqlCipherError.unsupported(feature: let feature, requires: _, loaded: _) where feature.contains("`json`") {}
                do {
                    _ = try await db.query(Select(meta.jsonValue(atPath: "stars")).from(docs))
                    throw ExampleFailure(context: "search-pool-top-level", what: "->> ran without json")
                } catch let error as SqlCipherError {
                    guard case .unsupported = error else { throw error }
                }
            }
            await db.close()
            print("ok search-pool-top-level")
        }
    }()
    try await SearchModel().run(directory: directory)
    try await SearchService().run(directory: directory)
    try await searchDetached(directory: directory)

    // MARK: LiveQuery, the main-actor observable wrapper, with a request whose closure is formed here
    try await { () async throws in
        // a Database
        do {
            let db = try Database(path: directory + "/live-top-level.db", key: "my-passphrase")
            let marker = "!"
            try await db.execute("CREATE TABLE tasks(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            let titles = LiveQuery(LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks ORDER BY id").compactMap { row -> String? in row.get(0, as: String.self).map { "\($0)\(marker)" } }
            }, database: db)
            try await waitUntil("live-top-level", "the first value") { !titles.phase.isLoading && titles.phase.error == nil && titles.value.isEmpty }
            try await db.execute("INSERT INTO tasks(title) VALUES (?)", "write")
            try await waitUntil("live-top-level", "the committed row") { titles.value == ["write\(marker)"] }
            // Another request: the current value stays until the new one's first result.
            let excluded = "write"
            titles.request = LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks WHERE title <> ? ORDER BY id", excluded).compactMap { $0.get(0, as: String.self) }
            }
            try await waitUntil("live-top-level", "the new request's value") { titles.value.isEmpty }
            let done = LiveQuery(.count(Product.self), database: nil)
            try await waitUntil("live-top-level", "missingDatabase") { done.phase.error is LiveError }
            done.database = db
            try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
            done.retry()
            try await waitUntil("live-top-level", "the count") { !done.phase.isLoading && done.phase.error == nil && done.value == 0 }
            await db.close()
            print("ok live-top-level")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/live-pool-top-level.db", key: "my-passphrase")
            let marker = "!"
            try await db.execute("CREATE TABLE tasks(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            let titles = LiveQuery(LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks ORDER BY id").compactMap { row -> String? in row.get(0, as: String.self).map { "\($0)\(marker)" } }
            }, database: db)
            try await waitUntil("live-pool-top-level", "the first value") { !titles.phase.isLoading && titles.phase.error == nil && titles.value.isEmpty }
            try await db.execute("INSERT INTO tasks(title) VALUES (?)", "write")
            try await waitUntil("live-pool-top-level", "the committed row") { titles.value == ["write\(marker)"] }
            // Another request: the current value stays until the new one's first result.
            let excluded = "write"
            titles.request = LiveRequest(placeholder: ["loading"]) { conn in
                try conn.query("SELECT title FROM tasks WHERE title <> ? ORDER BY id", excluded).compactMap { $0.get(0, as: String.self) }
            }
            try await waitUntil("live-pool-top-level", "the new request's value") { titles.value.isEmpty }
            let done = LiveQuery(.count(Product.self), database: nil)
            try await waitUntil("live-pool-top-level", "missingDatabase") { done.phase.error is LiveError }
            done.database = db
            try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
            done.retry()
            try await waitUntil("live-pool-top-level", "the count") { !done.phase.isLoading && done.phase.error == nil && done.value == 0 }
            await db.close()
            print("ok live-pool-top-level")
        }
    }()
    try await LiveQueriesModel().run(directory: directory)
} catch {
    FileHandle.standardError.write(Data("examples failed: \(error)\n".utf8))
    exit(1)
}
