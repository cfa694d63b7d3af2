import Foundation
import SqlCipherKit
import Synchronization
import Testing

/// No way Swift has of printing a value shows a key: `String(describing:)`, `String(reflecting:)`,
/// `dump`, `Mirror`, interpolation, `debugPrint`, an error's `LocalizedError` fields and its
/// `NSError` bridge, of every public value that holds a key or was made with one (keys, databases,
/// pools, live queries, streams, cursors, trace events, progress values, errors of key-bearing
/// statements, bound or written in the text).
///
/// Each secret is random and looked for in every form a rendering could give it: its text, its
/// hexadecimal digits (either case), Base64, and its bytes as a list of decimal numbers (how `dump`
/// and `Mirror` show a `Data` or an array).
@Suite struct SecretRenderingTests {
    /// The secrets of one run, and how each may appear in text.
    struct Secrets {
        let passphrase: String
        let raw: Data
        let salt: Data
        let rekeyed: String

        init() {
            let tag = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
            passphrase = "pw-marker-\(tag)"
            rekeyed = "rekey-marker-\(tag)"
            raw = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
            salt = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        }

        /// The name of the secret that `text` shows, or nil.
        func leak(in text: String) -> String? {
            for (name, bytes) in [("passphrase", Data(passphrase.utf8)), ("second passphrase", Data(rekeyed.utf8)),
                                  ("raw key", raw), ("salt", salt)] {
                let hex = bytes.prefix(12).map { String(format: "%02x", $0) }.joined()
                if text.contains(String(decoding: bytes, as: UTF8.self)) && name.contains("passphrase") { return name }
                if text.lowercased().contains(hex) { return name + " (hex)" }
                if text.contains(bytes.base64EncodedString().prefix(16)) { return name + " (base64)" }
                if Self.numbers(in: text).containsRun(Array(bytes.prefix(8))) { return name + " (decimal bytes)" }
            }
            return nil
        }

        private static func numbers(in text: String) -> [Int] {
            var numbers: [Int] = [], current: Int?
            for scalar in text.unicodeScalars {
                if let digit = Int(String(scalar)), scalar.isASCII {
                    current = (current ?? 0) &* 10 &+ digit
                } else if let value = current {
                    numbers.append(value)
                    current = nil
                }
            }
            if let current { numbers.append(current) }
            return numbers
        }
    }

    /// Every rendering Swift offers of `value`.
    static func renderings(of value: Any) -> [(String, String)] {
        var dumped = "", debug = "", printed = ""
        dump(value, to: &dumped)
        debugPrint(value, to: &debug)
        print(value, to: &printed)
        var mirrored = ""
        walk(Mirror(reflecting: value), depth: 0, into: &mirrored)
        return [("String(describing:)", String(describing: value)), ("String(reflecting:)", String(reflecting: value)),
                ("interpolation", "\(value)"), ("dump", dumped), ("debugPrint", debug), ("print", printed),
                ("Mirror", mirrored)]
    }

    /// Every rendering of an error: those of any value, its `LocalizedError` fields and its
    /// `NSError` bridge.
    static func renderings(of error: any Error) -> [(String, String)] {
        var all = renderings(of: error as Any)
        all.append(("localizedDescription", error.localizedDescription))
        if let localized = error as? any LocalizedError {
            all.append(("errorDescription", localized.errorDescription ?? ""))
            all.append(("failureReason", localized.failureReason ?? ""))
            all.append(("recoverySuggestion", localized.recoverySuggestion ?? ""))
            all.append(("helpAnchor", localized.helpAnchor ?? ""))
        }
        let bridged = error as NSError
        all.append(("NSError.localizedDescription", bridged.localizedDescription))
        all.append(("NSError.userInfo", String(describing: bridged.userInfo)))
        all.append(("NSError.description", bridged.description))
        all.append(("NSError.debugDescription", bridged.debugDescription))
        return all
    }

    private static func walk(_ mirror: Mirror, depth: Int, into text: inout String) {
        guard depth < 12 else { return }
        for child in mirror.children {
            text += (child.label ?? "-") + ": " + String(describing: child.value) + "\n"
            walk(Mirror(reflecting: child.value), depth: depth + 1, into: &text)
        }
        if let parent = mirror.superclassMirror { walk(parent, depth: depth + 1, into: &text) }
    }

    /// Collects what a test rendered, and every leak found in it.
    final class Findings: Sendable {
        let secrets: Secrets
        private let state = Mutex<(checked: Int, leaks: [String])>((0, []))

        init(_ secrets: Secrets) { self.secrets = secrets }

        func check(_ what: String, _ value: Any) {
            record(what, Self.value(value))
        }

        func check(_ what: String, error: any Error) {
            record(what, SecretRenderingTests.renderings(of: error))
        }

        private static func value(_ value: Any) -> [(String, String)] { SecretRenderingTests.renderings(of: value) }

        private func record(_ what: String, _ renderings: [(String, String)]) {
            for (how, text) in renderings {
                let leak = secrets.leak(in: text)
                state.withLock { state in
                    state.checked += 1
                    if let leak { state.leaks.append("\(what), \(how): shows the \(leak): \(Self.context(of: leak, in: text))") }
                }
            }
        }

        /// The text around the secret (a passphrase shown as text), or the text's start.
        private static func context(of leak: String, in text: String) -> String {
            for marker in ["pw-marker-", "rekey-marker-"] {
                if let range = text.range(of: marker) {
                    let start = text.index(range.lowerBound, offsetBy: -600, limitedBy: text.startIndex) ?? text.startIndex
                    return String(text[start..<range.upperBound])
                }
            }
            return String(text.prefix(600))
        }

        var checked: Int { state.withLock { $0.checked } }
        var leaks: [String] { state.withLock { $0.leaks } }
    }

    /// Runs `body` expecting an error, and checks the error (or records that none came).
    static func failing(_ what: String, _ findings: Findings, _ body: () async throws -> Void) async {
        do {
            try await body()
            findings.check(what + " (did not fail)", "")
        } catch {
            findings.check(what, error: error)
        }
    }

    @Test func noRenderingOfAnyValueShowsAKey() async throws {
        let secrets = Secrets()
        let findings = Findings(secrets)
        let dir = TemporaryDirectory()
        // The oracle works: each secret is found in its forms.
        #expect(secrets.leak(in: "[\(secrets.raw.map(String.init).joined(separator: ", "))]") != nil)
        #expect(secrets.leak(in: secrets.salt.map { String(format: "%02X", $0) }.joined()) != nil)
        #expect(secrets.leak(in: "x \(secrets.passphrase) y") != nil)

        // Keys, in every form.
        for (name, key) in [("passphrase", DatabaseKey.passphrase(secrets.passphrase)),
                            ("passphrase bytes", .passphrase(Data(secrets.passphrase.utf8))),
                            ("passphrase with salt", .passphrase(secrets.passphrase, salt: secrets.salt)),
                            ("raw key", .rawKey(secrets.raw)), ("raw key with salt", .rawKey(secrets.raw, salt: secrets.salt)),
                            ("literal", DatabaseKey(stringLiteral: secrets.passphrase))] {
            findings.check("DatabaseKey \(name)", key)
            findings.check("[DatabaseKey] \(name)", [key])
            findings.check("DatabaseKey? \(name)", Optional(key) as Any)
        }
        findings.check("CipherSettings", fastCipher)
        findings.check("DatabaseConfiguration", DatabaseConfiguration())

        // A database keyed with a passphrase, traced with arguments, rekeyed and exported.
        let events = Mutex<[TraceEvent]>([])
        let progress = Mutex<[DatabaseProgress]>([])
        let db = try Database(path: dir.path("db.db"), key: secrets.passphrase, cipher: fastCipher)
        let token = try await db.trace(options: TraceOptions(includeArguments: true)) { event in
            events.withLock { $0.append(event) }
        }
        try await db.execute("CREATE TABLE t(x)")
        try await db.execute("INSERT INTO t VALUES (1), (2)")
        findings.check("Database", db)
        findings.check("TraceToken", token)
        try await db.rekey(.passphrase(secrets.rekeyed)) { value in progress.withLock { $0.append(value) } }
        try await db.rekey(.passphrase(secrets.passphrase))
        try await db.export(to: dir.path("export.db"), key: .rawKey(secrets.raw, salt: secrets.salt), cipher: fastCipher) {
            value in progress.withLock { $0.append(value) }
        }
        try await db.backup(to: dir.path("backup.db"), key: .passphrase(secrets.rekeyed)) { value in
            progress.withLock { $0.append(value) }
        }

        // Statements that carry a key, bound or in their text, and fail or are refused. (A string
        // literal of an ordinary statement is shown in its error, as any SQL text is: values that
        // must not be shown are bound, and bound values never are.)
        let quoted = "'\(secrets.passphrase)'"
        let hexKey = secrets.raw.map { String(format: "%02x", $0) }.joined()
        let statements: [(String, StatementArguments)] = [
            ("PRAGMA key = \(quoted)", []), ("PRAGMA rekey = \(quoted)", []), ("PRAGMA key = ?", [secrets.passphrase]),
            ("PRAGMA rekey = ?", [secrets.passphrase]), ("PRAGMA key = \"x'\(hexKey)'\"", []),
            ("PRAGMA hexkey = '\(hexKey)'", []), ("PRAGMA hexrekey = '\(hexKey)'", []),
            ("ATTACH ? AS other KEY ?", [dir.path("nofolder/other.db"), secrets.passphrase]),
            ("ATTACH ? AS other KEY ?", [dir.path("other.db"), secrets.raw]),
            ("ATTACH '\(dir.path("nofolder/a.db"))' AS other KEY \(quoted)", []),
            ("ATTACH ? AS other KEY ?", [dir.path("export.db"), secrets.rekeyed]),
            ("SELECT sqlcipher_export(?)", [secrets.passphrase]),
            ("SELECT sqlcipher_export('main', ?)", [secrets.passphrase]),
            ("VACUUM INTO ?", ["file:\(dir.path("v.db"))?key=\(secrets.passphrase)"]),
            ("VACUUM INTO 'file:\(dir.path("v.db"))?key=\(secrets.passphrase)'", []),
            ("SELECT * FROM missing WHERE k = ?", [secrets.passphrase]),
            ("INSERT INTO t VALUES (?, ?)", [secrets.passphrase, secrets.raw]),
        ]
        for (sql, arguments) in statements {
            await Self.failing("execute \(sql.prefix(40))", findings) { _ = try await db.execute(sql, arguments: arguments) }
        }
        await Self.failing("SQL literal with the key", findings) {
            _ = try await db.execute(literal: "PRAGMA key = \(secrets.passphrase)")
        }
        await Self.failing("prepared ATTACH", findings) {
            try await db.read { connection in
                let statement = try connection.prepare("ATTACH ? AS other KEY ?")
                _ = try statement.execute(dir.path("nofolder/b.db"), secrets.passphrase)
            }
        }
        await Self.failing("transaction ATTACH", findings) {
            try await db.transaction { connection in
                _ = try connection.execute("ATTACH ? AS other KEY ?", dir.path("nofolder/c.db"), secrets.passphrase)
            }
        }

        // Conversions and openings that fail with a key in hand.
        await Self.failing("wrong key", findings) { _ = try Database(path: dir.path("db.db"), key: secrets.rekeyed) }
        await Self.failing("wrong raw key", findings) { _ = try Database(path: dir.path("db.db"), rawKey: secrets.raw) }
        await Self.failing("raw key with salt", findings) {
            _ = try Database(path: dir.path("db.db"), key: .rawKey(secrets.raw, salt: secrets.salt))
        }
        await Self.failing("passphrase with salt", findings) {
            _ = try Database(path: dir.path("db.db"), key: .passphrase(secrets.passphrase, salt: secrets.salt))
        }
        await Self.failing("pool, passphrase with salt", findings) {
            _ = try DatabasePool(path: dir.path("db.db"), key: .passphrase(secrets.passphrase, salt: secrets.salt))
        }
        await Self.failing("rekey to a passphrase with another salt", findings) {
            try await db.rekey(.passphrase(secrets.rekeyed, salt: secrets.salt))
        }
        await Self.failing("passphrase with a salt of 15 bytes", findings) {
            _ = try Database(path: dir.path("n.db"), key: .passphrase(secrets.passphrase, salt: secrets.salt.prefix(15)))
        }
        await Self.failing("upgrade with a passphrase and salt", findings) {
            try Database.upgradeFromSqlCipher3(path: dir.path("db.db"), key: .passphrase(secrets.passphrase, salt: secrets.salt))
        }
        await Self.failing("raw key of 31 bytes", findings) { _ = try Database(path: dir.path("n.db"), rawKey: secrets.raw.prefix(31)) }
        await Self.failing("passphrase spelled as raw key", findings) {
            _ = try Database(path: dir.path("n.db"), key: "x'\(hexKey)'")
        }
        await Self.failing("pool, wrong key", findings) { _ = try DatabasePool(path: dir.path("db.db"), key: secrets.rekeyed) }
        await Self.failing("export to an existing file", findings) {
            try await db.export(to: dir.path("export.db"), key: .passphrase(secrets.rekeyed))
        }
        await Self.failing("backup with a raw key of 31 bytes", findings) {
            try await db.backup(to: dir.path("b2.db"), key: .rawKey(secrets.raw.prefix(31)))
        }
        await Self.failing("encrypt a missing file", findings) {
            try Database.encrypt(plaintextAt: dir.path("missing.db"), to: dir.path("e.db"), key: .passphrase(secrets.passphrase))
        }
        await Self.failing("encryptInPlace of an encrypted file", findings) {
            try Database.encryptInPlace(path: dir.path("db.db"), key: .rawKey(secrets.raw, salt: secrets.salt))
        }
        await Self.failing("upgrade of a SQLCipher 4 file", findings) {
            try Database.upgradeFromSqlCipher3(path: dir.path("db.db"), key: .passphrase(secrets.rekeyed))
        }

        // Values read from the database: streams, cursors, rows, live queries.
        let stream = db.stream("SELECT x FROM t")
        findings.check("DatabaseStream", stream)
        var iterator = stream.makeAsyncIterator()
        findings.check("DatabaseStream iterator", iterator)
        _ = try await iterator.next()
        let rows = try await db.read { connection in
            let cursor = try connection.cursor("SELECT x FROM t")
            var rows: [Row] = []
            while let row = try cursor.next() { rows.append(row) }
            return rows
        }
        findings.check("rows", rows)
        let values = db.values(of: .query("SELECT x FROM t"))
        var liveIterator = values.makeAsyncIterator()
        findings.check("live value", try await liveIterator.next() as Any)
        findings.check("live values", values)
        await MainActor.run {
            let live = LiveQuery(.query("SELECT x FROM t"), database: db)
            findings.check("LiveQuery", live)
        }

        // A pool keeps a key derived from the passphrase.
        let pool = try DatabasePool(path: dir.path("pool.db"), key: secrets.passphrase, cipher: fastCipher)
        _ = try await pool.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        _ = try await pool.query("SELECT x FROM t")
        try await pool.trace(options: TraceOptions(includeArguments: true)) { event in events.withLock { $0.append(event) } }
        try await pool.rekey(.passphrase(secrets.rekeyed)) { value in progress.withLock { $0.append(value) } }
        await Self.failing("pool ATTACH", findings) {
            _ = try await pool.execute("ATTACH ? AS other KEY ?", dir.path("nofolder/d.db"), secrets.passphrase)
        }
        findings.check("DatabasePool", pool)
        findings.check("pool stream", pool.stream("SELECT x FROM t"))

        findings.check("trace events", events.withLock { $0 })
        for event in events.withLock({ $0 }) { findings.check("trace event \(event.sql.prefix(30))", event) }
        findings.check("progress values", progress.withLock { $0 })
        await pool.close()
        await db.close()
        findings.check("closed Database", db)
        findings.check("closed DatabasePool", pool)

        #expect(findings.checked > 500, "\(findings.checked)")
        #expect(findings.leaks.isEmpty, "\(findings.leaks.joined(separator: "\n"))")
    }
}

extension Array where Element == Int {
    /// Whether `run` appears here as consecutive elements.
    fileprivate func containsRun(_ run: [UInt8]) -> Bool {
        guard !run.isEmpty, count >= run.count else { return false }
        let wanted = run.map(Int.init)
        for start in 0...(count - run.count) where self[start] == wanted[0] {
            if Array(self[start..<(start + run.count)]) == wanted { return true }
        }
        return false
    }
}
