import Foundation
import Testing
@testable import SqlCipherKit

/// The examples of the DocC articles "Opening a database", "Raw SQL and values", "Transactions and
/// savepoints" and "Changing the key, converting and checking a database", one test per section,
/// with the articles' code run against real files. Their paths (`/data/...`) become paths in a
/// temporary directory.
@Suite struct GuideOpeningExamplesTests {
    let keyBytes = rawKey(42)
    let newKeyBytes = rawKey(43)
    let saltBytes = Data("guide-salt-16byt".utf8)

    @Test func opening() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("store.db"), key: "my-passphrase")
        try await db.execute("CREATE TABLE t(x)")
        await db.close()
        let same = try Database(path: dir.path("store.db"), key: Data("my-passphrase".utf8))
        #expect(try await same.query("SELECT count(*) FROM t")[0].get(0, as: Int.self) == 0)
        let fast = try Database(path: dir.path("fast.db"), rawKey: keyBytes)
        let plain = try Database(unencryptedPath: dir.path("public.db"))
        let scratch = try Database(path: ":memory:", rawKey: keyBytes)
        #expect(fast.isEncrypted && !plain.isEncrypted && scratch.journalMode == .rollback)

        let path = dir.path("props.db")
        let opened = try Database(path: path, rawKey: keyBytes)
        #expect(opened.path == path)
        #expect(opened.isEncrypted)
        #expect(opened.journalMode == .wal)
        #expect(opened.library.cipherVersion.isEmpty == false)
        await opened.close()
        await #expect(throws: SqlCipherError.databaseClosed) { try await opened.query("SELECT 1") }
    }

    @Test func journalMode() async throws {
        let dir = TemporaryDirectory()
        let single = try Database(path: dir.path("notes.db"), key: "k", journalMode: .rollback, cipher: fastCipher)
        #expect(single.journalMode == .rollback)
    }

    @Test func cipherSettings() async throws {
        let dir = TemporaryDirectory()
        let (p1, p2, p3, p4) = (dir.path("1.db"), dir.path("2.db"), dir.path("3.db"), dir.path("4.db"))
        let a = try Database(path: p1, key: "k", cipher: .default)
        let b = try Database(path: p2, key: "k", cipher: .sqlcipher3)
        let c = try Database(path: p3, key: "k", cipher: CipherSettings(pageSize: 8192, kdfIterations: 100_000))
        for db in [a, b, c] { try await db.execute("CREATE TABLE t(x)") }
        if isSQLCipher4() {
            let d = try Database(path: p4, rawKey: keyBytes, salt: saltBytes,
                                 cipher: CipherSettings(plaintextHeaderSize: 32))
            try await d.execute("CREATE TABLE t(x)")
        } else {
            #expect(throws: SqlCipherError.self) {
                try Database(path: p4, rawKey: keyBytes, salt: saltBytes, cipher: CipherSettings(plaintextHeaderSize: 32))
            }
        }
    }

    @Test func rawSQL() async throws {
        let db = try Database(path: ":memory:", rawKey: keyBytes)
        try await db.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL)")
        let changed = try await db.execute("INSERT INTO products(name, price) VALUES (?, ?), (?, ?)",
                                           "Widget", 9.99, "Gadget", 24.5)
        #expect(changed == 2)
        let rows = try await db.query("SELECT id, name, price FROM products WHERE price < ? ORDER BY price", 50.0)
        var names: [String] = []
        for row in rows {
            let name = row.get("name", as: String.self)
            let price = try row.decode("price", as: Double.self)
            names.append(name ?? "-")
            #expect(price < 50)
        }
        #expect(names == ["Widget", "Gadget"])
        #expect(try await db.execute("DELETE FROM products WHERE id IN (?, ?)", arguments: [1, 2]) == 2)
    }

    @Test func values() async throws {
        let db = try Database(path: ":memory:", rawKey: keyBytes)
        let row = try await db.query("SELECT 1 AS id, 'Ann' AS Name, NULL AS note")[0]
        #expect(row.get("id", as: Int.self) == 1)
        #expect(row.get("name", as: String.self) == "Ann")
        #expect(row.get(1, as: String.self) == "Ann")
        #expect(row.get("note", as: String.self) == nil)
        #expect(try row.decode("note", as: String?.self) == nil)
        #expect(throws: SqlCipherError.typeMismatch(column: "note", stored: "NULL", expected: "String")) {
            try row.decode("note", as: String.self)
        }
        #expect(throws: SqlCipherError.columnNotFound(name: "nope", available: ["id", "Name", "note"])) {
            try row.decode("nope", as: Int.self)
        }
        #expect(throws: SqlCipherError.columnIndexOutOfRange(index: 7, count: 3)) { try row.decode(7, as: Int.self) }
        #expect(row["id"] == .integer(1))
    }

    @Test func transactions() async throws {
        let db = try Database(path: ":memory:", rawKey: keyBytes)
        try await db.execute("""
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT);
            CREATE TABLE customers(name TEXT, orders INTEGER);
            CREATE TABLE audit(order_id INTEGER);
            INSERT INTO customers VALUES ('Alice', 0);
            """)
        let orderID = try await db.transaction { conn in
            try conn.execute("INSERT INTO orders(customer) VALUES (?)", "Alice")
            let id = conn.lastInsertRowID
            try conn.execute("UPDATE customers SET orders = orders + 1 WHERE name = ?", "Alice")
            let count = try conn.query("SELECT count(*) FROM orders")[0].decode(0, as: Int.self)
            #expect(count == 1)
            try conn.savepoint { conn in
                try conn.execute("INSERT INTO audit(order_id) VALUES (?)", id)
            }
            return id
        }
        #expect(orderID == 1)
        #expect(try await db.query("SELECT orders FROM customers")[0].get(0, as: Int.self) == 1)
        #expect(try await db.query("SELECT order_id FROM audit")[0].get(0, as: Int64.self) == orderID)
    }

    @Test func rekey() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"), key: "old", cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x)")
        try await db.rekey("a new passphrase")
        try await db.rekey(rawKey: newKeyBytes)
        try await db.rekey(Data([0x00, 0xFF]))
        await db.close()
        _ = try Database(path: dir.path("a.db"), key: Data([0x00, 0xFF]), cipher: fastCipher)
    }

    @Test func conversions() async throws {
        let dir = TemporaryDirectory()
        for name in ["public.db", "notes.db", "other.db"] {
            let db = try Database(unencryptedPath: dir.path(name))
            try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            await db.close()
        }
        try Database.encrypt(plaintextAt: dir.path("public.db"), to: dir.path("secret.db"), key: "passphrase")
        try Database.encryptInPlace(path: dir.path("notes.db"), key: .rawKey(keyBytes))
        let backup = try Database.encryptInPlace(path: dir.path("other.db"), key: "passphrase", keepBackup: true)
        #expect(backup == dir.path("other.db") + ".plaintext-backup")

        let db = try Database(path: dir.path("secret.db"), key: "passphrase")
        try await db.exportDecrypted(to: dir.path("inspect.db"))
        let old = try Database(path: dir.path("notes.db"), rawKey: keyBytes)
        try await old.export(to: dir.path("v4.db"), key: "passphrase", cipher: .default)
        #expect(try await countRows(try Database(path: dir.path("v4.db"), key: "passphrase")) == 1)

        let legacy = dir.path("legacy.db")
        let v3 = try Database(path: legacy, key: "passphrase", cipher: .sqlcipher3)
        try await v3.execute("CREATE TABLE t(x)")
        await v3.close()
        if isSQLCipher4() {
            try Database.upgradeFromSqlCipher3(path: legacy, key: "passphrase")
            _ = try Database(path: legacy, key: "passphrase")
        } else {
            #expect(throws: SqlCipherError.self) { try Database.upgradeFromSqlCipher3(path: legacy, key: "passphrase") }
        }
    }

    @Test func integrity() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"), rawKey: keyBytes)
        try await db.execute("CREATE TABLE t(x)")
        let report = try await db.verifyIntegrity()
        #expect(report.isOK)
        #expect(report.checksRun == (isSQLCipher4() ? [.cipherHMAC, .sqliteIntegrity] : [.sqliteIntegrity]))
        #expect(report.skipped.isEmpty == isSQLCipher4())
        #expect(report.problems.isEmpty)
        #expect(report.hmacVerified == isSQLCipher4())
    }
}
