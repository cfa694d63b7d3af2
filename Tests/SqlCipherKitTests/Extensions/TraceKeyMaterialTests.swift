import Foundation
import Testing
@testable import SqlCipherKit

/// No trace event carries key material: every event of opening, ATTACH (bound, literal, raw key),
/// rekey and export is scanned for the passphrases and for the hexadecimal of the raw keys, with
/// arguments asked for; and the redaction of SQL text that names a key, in every spelling.
@Suite struct TraceKeyMaterialTests {
    @Test func noEventOfAttachRekeyOrExportHoldsAKey() async throws {
        let directory = TemporaryDirectory()
        let passphrases = ["first passphrase 0xA1", "attached-bound-B2", "attached-literal-C3", "rekeyed-D4",
                           "exported-E5", "refused-F6"]
        let rawKeys = [rawKey(91), rawKey(92)]
        let db = try Database(path: directory.path("main.db"), key: passphrases[0])
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let recorder = TraceRecorder()
        try await recorder.attach(to: db, options: TraceOptions(includeArguments: true))

        try await db.execute("ATTACH DATABASE ? AS bound KEY ?", directory.path("bound.db"), passphrases[1])
        try await db.execute("DETACH DATABASE bound")
        try await db.execute("ATTACH DATABASE '\(directory.path("literal.db"))' AS literal KEY '\(passphrases[2])'")
        try await db.execute("CREATE TABLE literal.copy(x); INSERT INTO literal.copy SELECT x FROM t")
        try await db.execute("DETACH DATABASE literal")
        try await db.execute("ATTACH '\(directory.path("raw.db"))' AS raw /* the key */ KEY \"x'\(hex(rawKeys[0]))'\"")
        try await db.execute("DETACH raw")
        // Refused before running; scanned all the same.
        await #expect(throws: SqlCipherError.self) { try await db.execute("PRAGMA key = '\(passphrases[5])'") }
        await #expect(throws: SqlCipherError.self) { try await db.execute("PRAGMA main.hexkey = '\(hex(rawKeys[1]))'") }
        try await db.rekey(.passphrase(passphrases[3]))
        try await db.export(to: directory.path("export-raw.db"), key: .rawKey(rawKeys[1]))
        try await db.export(to: directory.path("export-passphrase.db"), key: .passphrase(passphrases[4]))
        try await db.exportDecrypted(to: directory.path("export-plain.db"))

        let events = recorder.events
        let attaches = events.filter { $0.sql.uppercased().hasPrefix("ATTACH") }
        #expect(attaches.count >= 4, "\(attaches)")  // three of the caller's, the exports' own
        #expect(attaches.allSatisfy { $0.arguments == nil })
        #expect(attaches.allSatisfy { $0.sql.contains("KEY '***'") || !$0.sql.uppercased().contains("KEY") })
        #expect(events.contains { $0.sql.contains("sqlcipher_export") && $0.isInternal })
        #expect(keyLeaks(in: events, passphrases: passphrases, rawKeys: rawKeys) == [])
        #expect(events.contains { $0.sql == "INSERT INTO literal.copy SELECT x FROM t" })
    }

    @Test(arguments: [false, true])
    func noEventOfAnOpeningHoldsItsKey(raw: Bool) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path("open.db")
        let passphrase = "opening passphrase 7Q"
        let key = rawKey(93)
        let material = raw ? try KeyMaterial(rawKey: key) : try KeyMaterial(passphrase: Data(passphrase.utf8))
        for _ in 0..<2 {  // creating the file, then opening it again
            let registry = ConnectionExtensions()
            let recorder = TraceRecorder()
            registry.add(tracer: TraceObserver(options: TraceOptions(includeArguments: true), deliver: recorder.record))
            let opened = try DatabaseOpener.open(path: path, key: material, journalMode: .wal, cipher: .default,
                                                 setup: ConnectionSetup(extensions: registry))
            _ = try opened.connection.query("SELECT count(*) FROM sqlite_master")
            opened.connection.close()
            #expect(recorder.events.count > 2)
            #expect(recorder.events.dropLast().allSatisfy { $0.isInternal })
            #expect(keyLeaks(in: recorder.events, passphrases: [passphrase], rawKeys: [key]) == [])
        }
    }

    @Test(arguments: [
        ("ATTACH 'a.db' AS x KEY 'secret'", "ATTACH '***' AS x KEY '***'"),
        ("attach database 'a.db' as x key x'0011'", "attach database '***' as x KEY '***'"),
        ("ATTACH 'a' || '.db' AS x KEY 'sec' || 'ret'", "ATTACH '***' || '***' AS x KEY '***'"),
        ("ATTACH 'a.db' AS x /* secret */ KEY \"secret\" -- secret", "ATTACH '***' AS x KEY '***'"),
        ("ATTACH 'a.db' AS x KEY char(115, 101, 99)", "ATTACH '***' AS x KEY '***'"),
        ("ATTACH 'file:a.db?key=secret' AS x", "ATTACH '***' AS x"),
        ("ATTACH 'file:a.db?%6Bey=secret' AS x", "ATTACH '***' AS x"),
        ("VACUUM INTO 'file:b.db?hexkey=00ff'", "VACUUM INTO '***'"),
        ("PRAGMA key = 'secret'", "PRAGMA key = '***'"),
        ("pragma main.HEXKEY(\"00ff\")", "PRAGMA main.HEXKEY = '***'"),
        ("PRAGMA textrekey='secret' -- secret", "PRAGMA textrekey = '***'"),
        ("SELECT 'file:x.db?KEY=secret', 1", "SELECT '***', 1"),
        ("ATTACH 'a.db' AS x KEY 'secret", "<statement not shown: its quotes do not close, so key material could not be removed>"),
    ])
    func textThatNamesAKeyIsRedacted(_ sql: String, _ shown: String) {
        #expect(SQLRedaction.text(of: sql) == shown)
        #expect(!SQLRedaction.text(of: sql).lowercased().contains("secret"))
    }

    @Test(arguments: ["SELECT * FROM notes WHERE id = ?", "INSERT INTO t(a) VALUES ('monkey business')",
                      "CREATE TABLE keys(id INTEGER PRIMARY KEY, k TEXT)", "PRAGMA cipher_version"])
    func otherTextIsShownAsWritten(_ sql: String) {
        #expect(SQLRedaction.text(of: sql) == sql)
    }

    /// An event made with the public initialiser (for tests of code that consumes events) kept the
    /// SQL and the arguments as given, so `print(event)` of `PRAGMA key = '…'` or of an `ATTACH`
    /// with its bound key showed the key (found by the attack review): it is redacted as the
    /// package's own events are.
    @Test func eventsMadeByHandHoldNoKey() {
        let passphrase = "hand-made-event-G7"
        let made = [
            TraceEvent(sql: "PRAGMA key = '\(passphrase)'", arguments: nil, duration: .zero, connection: .writer,
                       isInternal: false, outcome: .completed),
            TraceEvent(sql: "ATTACH ? AS a KEY ?", arguments: [.text("a.db"), .text(passphrase)], duration: .zero,
                       connection: .reader, isInternal: false, outcome: .failed(code: 1)),
            TraceEvent(sql: "VACUUM INTO ?", arguments: [.text("file:b.db?key=\(passphrase)")], duration: .zero,
                       connection: .writer, isInternal: true, outcome: .completed),
        ]
        #expect(made[0].sql == "PRAGMA key = '***'")
        #expect(made[1].arguments == nil && made[2].arguments == nil)
        #expect(keyLeaks(in: made, passphrases: [passphrase], rawKeys: []) == [])
        for event in made {
            var dumped = ""
            dump(event, to: &dumped)
            #expect(!dumped.contains(passphrase) && !"\(event)".contains(passphrase), "\(dumped)")
        }
        // Other events keep their text and arguments.
        let plain = TraceEvent(sql: "SELECT * FROM t WHERE x = ?", arguments: [.integer(1)], duration: .zero,
                               connection: .writer, isInternal: false, outcome: .stoppedEarly)
        #expect(plain.sql == "SELECT * FROM t WHERE x = ?" && plain.arguments == [.integer(1)])
    }
}
