import Foundation
import SqlCipherKit
import Testing

/// Seeded fuzzing of the query builder and of the Codable entity mapping.
///
/// The builder fuzz is differential: every generated predicate is also evaluated in Swift with
/// SQL's three-valued logic, so a query that runs but renders the wrong condition (a lost
/// parenthesis, an operator bound to the wrong operand, a value spliced as SQL) is caught, not
/// only a query that fails. The entity fuzz saves random values of every mapped type and reads
/// them back.
@Suite struct FuzzTests {
    // MARK: Builder

    @Test func builderQueriesMatchASwiftEvaluation() async throws {
        let scenario = "builder fuzz, differential"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Hostile input", scenario: scenario)
        var tally = Tally()
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("fuzz.db"), rawKey: rawKey(41))
        try await db.execute("CREATE TABLE f(id INTEGER PRIMARY KEY, n INTEGER, s TEXT)")
        var rows: [FuzzRow] = []
        for id in 1...60 {
            let row = FuzzRow(id: id,
                              n: Int.random(in: 0..<5, using: &random) == 0 ? nil : Int.random(in: -5...5, using: &random),
                              s: Int.random(in: 0..<5, using: &random) == 0 ? nil : FuzzPredicate.strings.randomElement(using: &random))
            rows.append(row)
            try await db.execute("INSERT INTO f(id, n, s) VALUES (?, ?, ?)", row.id, row.n, row.s)
        }
        let table = TableName("f")
        let schema = try await db.query("SELECT sql FROM sqlite_master").map(\.description)

        for round in 0..<Reliability.count(short: 1500, long: 50_000) {
            let predicate = FuzzPredicate.random(depth: Int.random(in: 0...4, using: &random), using: &random)
            record.inputs += 1
            do {
                switch round % 4 {
                case 0, 1:
                    // A select with the predicate, an ordering and sometimes a limit and offset.
                    let ordering = FuzzOrdering.random(using: &random)
                    var select = Select(col("id")).from(table).where(predicate.expression).orderBy(ordering.terms)
                    var expected = rows.filter { predicate.evaluate($0) == true }.sorted(by: ordering.areInIncreasingOrder)
                    if Bool.random(using: &random) {
                        let limit = Int.random(in: 0...20, using: &random), offset = Int.random(in: 0...10, using: &random)
                        select = select.limit(limit).offset(offset)
                        expected = Array(expected.dropFirst(offset).prefix(limit))
                    }
                    let ids = try await db.query(select).compactMap { $0.get("id", as: Int.self) }
                    if ids != expected.map(\.id) {
                        Issue.record("round \(round): \(try select.render().sql) returned \(ids), Swift says \(expected.map(\.id))")
                        record.failures += 1
                    }
                    tally.add("selects")
                case 2:
                    // An update of the matching rows, rolled back.
                    let expected = rows.filter { predicate.evaluate($0) == true }.count
                    let changed = try await Self.rolledBack(db) { conn in
                        try conn.execute(Update(table).set(col("n"), to: 99).where(predicate.expression))
                    }
                    if changed != expected {
                        Issue.record("round \(round): update changed \(changed) rows, Swift says \(expected)")
                        record.failures += 1
                    }
                    tally.add("updates (rolled back)")
                default:
                    // A delete of the matching rows, and a count of the rest, rolled back.
                    let expected = rows.filter { predicate.evaluate($0) == true }.count
                    let total = rows.count
                    let deleted = try await Self.rolledBack(db) { conn in
                        let deleted = try conn.execute(Delete(table).where(predicate.expression))
                        let left = try conn.query(Select(.count).from(table))[0].get(0, as: Int.self) ?? -1
                        return deleted + left == total ? deleted : -1
                    }
                    if deleted != expected {
                        Issue.record("round \(round): delete removed \(deleted) rows, Swift says \(expected)")
                        record.failures += 1
                    }
                    tally.add("deletes (rolled back)")
                }
            } catch let error as SqlCipherError {
                Issue.record("round \(round): a valid query failed: \(error)")
                record.failures += 1
            }
        }
        // Nothing persisted and the schema is as it was.
        #expect(try await db.query("SELECT sql FROM sqlite_master").map(\.description) == schema)
        let stored = try await db.query("SELECT id, n, s FROM f ORDER BY id").map {
            FuzzRow(id: $0.get("id", as: Int.self) ?? -1, n: $0.get("n", as: Int.self), s: $0.get("s", as: String.self))
        }
        #expect(stored == rows, "the rolled-back updates and deletes left changes")
        record.rounds = record.inputs
        record.notes = tally.summary
        record.record()
        await db.close()
    }

    /// Runs `body` in a transaction that is always rolled back; returns the body's value.
    static func rolledBack(_ db: Database, _ body: @escaping @Sendable (borrowing Connection) throws -> Int) async throws -> Int {
        struct RollBack: Error { let value: Int }
        do {
            _ = try await db.transaction { conn -> Int in throw RollBack(value: try body(conn)) }
            return -1
        } catch let rollBack as RollBack {
            return rollBack.value
        }
    }

    // MARK: Entities

    @Test func entitiesRoundTripRandomValues() async throws {
        let scenario = "Codable entity fuzz"
        var random = Reliability.generator(for: scenario)
        var record = ScenarioRecord(suite: "Hostile input", scenario: scenario)
        var tally = Tally()
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path("entities.db"), rawKey: rawKey(42))
        try await db.execute("""
            CREATE TABLE samples(id INTEGER PRIMARY KEY, i, i8, u64, d, od, f, b, s, os, data, date, uuid, kind, nested, list)
            """)
        for round in 0..<Reliability.count(short: 800, long: 20_000) {
            var sample = FuzzSample.random(using: &random)
            record.inputs += 1
            let special = Int.random(in: 0..<20, using: &random)
            if special == 0 {
                // SQLite cannot store NaN (it would become NULL, which a non-optional Double
                // cannot read back): the save must be refused with encodingFailed.
                sample.d = .nan
            } else if special == 1 {
                // JSON has no infinity: the nested value cannot be encoded.
                sample.nested.weights["inf"] = .infinity
            }
            do {
                let saved = try await db.save(sample)
                let id = try #require(saved.id)
                guard let fetched = try await db.fetchOne(FuzzSample.self, id: id) else {
                    Issue.record("round \(round): saved row \(id) not found")
                    record.failures += 1
                    continue
                }
                if special == 0 || special == 1 || sample.od?.isNaN == true {
                    Issue.record("round \(round): \(special == 1 ? "infinity in JSON" : "NaN") round-tripped as \(fetched)")
                    record.failures += 1
                } else if !fetched.matches(saved) {
                    Issue.record("round \(round): saved \(saved), read back \(fetched)")
                    record.failures += 1
                } else {
                    tally.add("round trips")
                }
            } catch let error as SqlCipherError {
                switch (special, error) {
                case (0, .encodingFailed):
                    tally.add("NaN in a non-optional Double: encodingFailed on save")
                case (1, .encodingFailed):
                    tally.add("infinity inside JSON: encodingFailed on save")
                case (_, .encodingFailed) where sample.od?.isNaN == true:
                    tally.add("NaN in an optional Double: encodingFailed on save")
                default:
                    Issue.record("round \(round): \(error) for \(sample)")
                    record.failures += 1
                }
            } catch {
                Issue.record("round \(round): untyped \(error)")
                record.failures += 1
            }
        }
        record.rounds = record.inputs
        record.notes = tally.summary
        record.record()
        await db.close()
    }
}

// MARK: Builder fuzz model

struct FuzzRow: Equatable, Sendable {
    var id: Int
    var n: Int?
    var s: String?
}

/// A random predicate over `f(n INTEGER, s TEXT)`, as a builder expression and as a Swift
/// evaluation with SQL's three-valued logic (nil is SQL's NULL, "unknown").
indirect enum FuzzPredicate: Sendable {
    enum Op: CaseIterable, Sendable { case eq, ne, lt, le, gt, ge }
    case compareN(Op, Int)
    case compareS(Op, String)
    case nIsNull(Bool)
    case sIsNull(Bool)
    case nIn([Int], negated: Bool)
    case sIn([String], negated: Bool)
    case nBetween(Int, Int, negated: Bool)
    case and(FuzzPredicate, FuzzPredicate)
    case or(FuzzPredicate, FuzzPredicate)
    case not(FuzzPredicate)

    /// Texts that look like SQL, quotes and non-ASCII, ordered by their UTF-8 bytes as SQLite does.
    static let strings = ["", "a", "ab", "b", "B", "'", "''", "\"", "é", "e\u{301}", "🍣", "a b", "x' OR '1'='1", "NULL", "%", "_"]

    static func random(depth: Int, using random: inout SeededGenerator) -> FuzzPredicate {
        if depth == 0 || Int.random(in: 0..<3, using: &random) == 0 {
            let int = { (r: inout SeededGenerator) in Int.random(in: -6...6, using: &r) }
            switch Int.random(in: 0..<7, using: &random) {
            case 0: return .compareN(Op.allCases.randomElement(using: &random)!, int(&random))
            case 1: return .compareS(Op.allCases.randomElement(using: &random)!, strings.randomElement(using: &random)!)
            case 2: return .nIsNull(Bool.random(using: &random))
            case 3: return .sIsNull(Bool.random(using: &random))
            case 4: return .nIn((0..<Int.random(in: 1...4, using: &random)).map { _ in int(&random) }, negated: Bool.random(using: &random))
            case 5: return .sIn((0..<Int.random(in: 1...4, using: &random)).map { _ in strings.randomElement(using: &random)! },
                                negated: Bool.random(using: &random))
            default:
                let a = int(&random), b = int(&random)
                return .nBetween(a, b, negated: Bool.random(using: &random))
            }
        }
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return .and(Self.random(depth: depth - 1, using: &random), Self.random(depth: depth - 1, using: &random))
        case 1: return .or(Self.random(depth: depth - 1, using: &random), Self.random(depth: depth - 1, using: &random))
        default: return .not(Self.random(depth: depth - 1, using: &random))
        }
    }

    var expression: SQLExpression {
        let n = col("n"), s = col("s")
        switch self {
        case let .compareN(op, v): return Self.compare(n, op, v)
        case let .compareS(op, v): return Self.compare(s, op, v)
        case let .nIsNull(isNull): return isNull ? n.isNull : n.isNotNull
        case let .sIsNull(isNull): return isNull ? s.isNull : s.isNotNull
        case let .nIn(values, negated): return negated ? n.notIn(values) : n.in(values)
        case let .sIn(values, negated): return negated ? s.notIn(values) : s.in(values)
        case let .nBetween(a, b, negated): return negated ? n.notBetween(a, and: b) : n.between(a, and: b)
        case let .and(l, r): return l.expression && r.expression
        case let .or(l, r): return l.expression || r.expression
        case let .not(p): return !p.expression
        }
    }

    private static func compare<V: DatabaseValueConvertible>(_ column: Column, _ op: Op, _ value: V) -> SQLExpression {
        switch op {
        case .eq: return column == value
        case .ne: return column != value
        case .lt: return column < value
        case .le: return column <= value
        case .gt: return column > value
        case .ge: return column >= value
        }
    }

    func evaluate(_ row: FuzzRow) -> Bool? {
        switch self {
        case let .compareN(op, v): return row.n.map { Self.apply(op, Self.order($0, v)) }
        case let .compareS(op, v): return row.s.map { Self.apply(op, Self.order(Array($0.utf8), Array(v.utf8))) }
        case let .nIsNull(isNull): return (row.n == nil) == isNull
        case let .sIsNull(isNull): return (row.s == nil) == isNull
        case let .nIn(values, negated): return row.n.map { values.contains($0) != negated }
        case let .sIn(values, negated): return row.s.map { s in values.contains { Array($0.utf8) == Array(s.utf8) } != negated }
        case let .nBetween(a, b, negated):
            guard let n = row.n else { return nil }
            return (n >= a && n <= b) != negated
        case let .and(l, r):
            let (a, b) = (l.evaluate(row), r.evaluate(row))
            if a == false || b == false { return false }
            return a == true && b == true ? true : nil
        case let .or(l, r):
            let (a, b) = (l.evaluate(row), r.evaluate(row))
            if a == true || b == true { return true }
            return a == false && b == false ? false : nil
        case let .not(p): return p.evaluate(row).map { !$0 }
        }
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : a == b ? 0 : 1 }
    private static func order(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.lexicographicallyPrecedes(b) ? -1 : a == b ? 0 : 1
    }
    private static func apply(_ op: Op, _ order: Int) -> Bool {
        switch op {
        case .eq: return order == 0
        case .ne: return order != 0
        case .lt: return order < 0
        case .le: return order <= 0
        case .gt: return order > 0
        case .ge: return order >= 0
        }
    }
}

/// A random ORDER BY over n and s, always ending with id so that the order is total.
struct FuzzOrdering {
    var keys: [(column: String, descending: Bool)]

    static func random(using random: inout SeededGenerator) -> FuzzOrdering {
        FuzzOrdering(keys: (0..<Int.random(in: 0...2, using: &random)).map { _ in
            (Bool.random(using: &random) ? "n" : "s", Bool.random(using: &random))
        })
    }

    var terms: [any SQLOrderable] {
        keys.map { $0.descending ? col($0.column).descending : col($0.column).ascending } + [col("id").ascending]
    }

    /// SQLite's order: NULL first ascending (last descending), integers by value, text by bytes.
    func areInIncreasingOrder(_ a: FuzzRow, _ b: FuzzRow) -> Bool {
        for key in keys {
            let order: Int
            if key.column == "n" {
                order = Self.compare(a.n, b.n) { $0 < $1 ? -1 : $0 == $1 ? 0 : 1 }
            } else {
                order = Self.compare(a.s.map { Array($0.utf8) }, b.s.map { Array($0.utf8) }) {
                    $0.lexicographicallyPrecedes($1) ? -1 : $0 == $1 ? 0 : 1
                }
            }
            if order != 0 { return key.descending ? order > 0 : order < 0 }
        }
        return a.id < b.id
    }

    private static func compare<T>(_ a: T?, _ b: T?, _ values: (T, T) -> Int) -> Int {
        switch (a, b) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case let (a?, b?): return values(a, b)
        }
    }
}

// MARK: Entity fuzz model

struct FuzzSample: Entity, Equatable, CustomStringConvertible {
    static let tableName = TableName("samples")
    static let primaryKey: WritableKeyPath<FuzzSample, Int?> & Sendable = \.id

    enum Kind: String, Codable, CaseIterable { case plain, quoted = "it's", unicode = "ünï", empty = "" }

    struct Nested: Codable, Equatable {
        var count: Int
        var tags: [String]
        var weights: [String: Double]
    }

    var id: Int?
    var i: Int
    var i8: Int8
    var u64: UInt64
    var d: Double
    var od: Double?
    var f: Float
    var b: Bool
    var s: String
    var os: String?
    var data: Data
    var date: Date
    var uuid: UUID
    var kind: Kind
    var nested: Nested
    var list: [Int]

    var description: String { "FuzzSample(id: \(String(describing: id)), s: \(s.debugDescription), d: \(d), date: \(date.timeIntervalSince1970))" }

    static let scalars: [String] = ["a", "Z", " ", "'", "\"", "\\", "\u{0}", "\n", "é", "e\u{301}", "日", "🍣", "👩‍👩‍👧", "\u{202E}", "\u{FEFF}", "%", "?", ";"]

    static func random(using random: inout SeededGenerator) -> FuzzSample {
        func text(_ r: inout SeededGenerator) -> String {
            (0..<Int.random(in: 0...24, using: &r)).map { _ in scalars.randomElement(using: &r)! }.joined()
        }
        func double(_ r: inout SeededGenerator) -> Double {
            switch Int.random(in: 0..<8, using: &r) {
            case 0: return [0, -0.0, .infinity, -.infinity, .greatestFiniteMagnitude, -.leastNonzeroMagnitude, .ulpOfOne].randomElement(using: &r)!
            case 1: return Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &r) & 0x7FEF_FFFF_FFFF_FFFF)
            default: return Double.random(in: -1e9...1e9, using: &r)
            }
        }
        let ints: [Int] = [0, 1, -1, .max, .min]
        // Years 1 to 9999: the span the date format holds.
        let date = Date(timeIntervalSince1970: Double.random(in: -62_135_596_800...253_402_300_799, using: &random)
            + Double(Int.random(in: 0...999_999, using: &random)) / 1e6)
        return FuzzSample(
            id: nil,
            i: Bool.random(using: &random) ? ints.randomElement(using: &random)! : Int.random(in: .min ... .max, using: &random),
            i8: Int8.random(in: .min ... .max, using: &random),
            u64: Bool.random(using: &random) ? UInt64.max - UInt64.random(in: 0...3, using: &random) : UInt64.random(in: 0...UInt64.max, using: &random),
            d: double(&random),
            od: Int.random(in: 0..<4, using: &random) == 0 ? nil : Int.random(in: 0..<4, using: &random) == 0 ? .nan : double(&random),
            f: Float.random(in: -1e6...1e6, using: &random),
            b: Bool.random(using: &random),
            s: text(&random),
            os: Bool.random(using: &random) ? nil : text(&random),
            data: Data((0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }),
            date: date,
            uuid: UUID(),
            kind: Kind.allCases.randomElement(using: &random)!,
            nested: Nested(count: Int.random(in: -100...100, using: &random),
                           tags: (0..<Int.random(in: 0...4, using: &random)).map { _ in text(&random) },
                           weights: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &random)).map { index in
                               (text(&random) + "\(index)", Double.random(in: -1e6...1e6, using: &random))
                           })),
            list: (0..<Int.random(in: 0...6, using: &random)).map { _ in Int.random(in: .min ... .max, using: &random) })
    }

    /// Equality after the mapping's documented changes: dates to the millisecond.
    func matches(_ other: FuzzSample) -> Bool {
        var a = self
        guard abs(a.date.timeIntervalSince(other.date)) < 0.0006 else { return false }
        a.date = other.date
        return a == other
    }
}
