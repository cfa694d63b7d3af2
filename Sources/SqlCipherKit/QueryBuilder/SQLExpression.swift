import Synchronization

/// Something that can appear in a SQL expression: a ``Column``, a ``Param``, or an
/// ``SQLExpression`` built from them.
///
/// Every expressible value can also be selected (``SQLSelectable``) and used to order results
/// (``SQLOrderable``).
public protocol SQLExpressible: SQLSelectable, SQLOrderable {
    /// The value as an expression tree.
    var sqlExpression: SQLExpression { get }
}

/// A boolean or scalar SQL expression, kept as a tree and rendered with bound values.
///
/// Build expressions from columns, parameters and literals with the comparison operators
/// (`==`, `!=`, `<`, `<=`, `>`, `>=`), the logical operators (`&&`, `||`, `!`) and the methods
/// ``SQLExpressible/isNull``, ``SQLExpressible/isNotNull``, ``SQLExpressible/in(_:)-([SQLExpressible])``,
/// ``SQLExpressible/like(_:escape:)``, ``SQLExpressible/between(_:and:)-(SQLExpressible,_)``:
///
/// ```swift
/// let name = Param<String>("name")
/// let predicate = (col("price") >= 10 && col("price") < 20) || col("name") == name
/// // ("price" >= :l1 AND "price" < :l2) OR "name" = :p_name
/// ```
///
/// Values inside JSON documents are expressions too: ``SQLExpressible/jsonExtract(atPath:)``,
/// ``SQLExpressible/jsonRepresentation(atPath:)`` (`->`) and ``SQLExpressible/jsonValue(atPath:)``
/// (`->>`), in <doc:QueryingJSON>.
///
/// Literal values are bound as parameters (`:l1`, `:l2`, …), never written into the SQL text.
/// Comparing with a literal `nil` renders `IS NULL` (or `IS NOT NULL` for `!=`), because
/// `x = NULL` is never true in SQL.
///
/// Expressions are `Sendable` and `Hashable`: two expressions are equal when they have the same
/// tree, including the same literal values.
///
/// SQLite refuses expressions nested more than 1000 levels deep (`SQLITE_MAX_EXPR_DEPTH`, for
/// example 1001 conditions chained with `&&`). An expression deeper than that keeps only its
/// depth, not its tree, and rendering it throws ``SqlCipherError/invalidQuery(reason:)``: so an
/// expression, however it was built, never holds a tree deep enough to exhaust the stack when it
/// is compared, hashed, copied or released.
public struct SQLExpression: Sendable, Hashable, SQLExpressible, CustomStringConvertible {
    let node: Node
    /// The height of the tree: 1 for a column, parameter or literal.
    let depth: Int

    /// The deepest expression SQLite accepts with its default limits (SQLITE_MAX_EXPR_DEPTH,
    /// https://sqlite.org/limits.html#max_expr_depth), and so the deepest one the builder keeps.
    static let maximumDepth = 1000

    /// A leaf: a column, parameter or literal.
    init(_ node: Node) {
        assert(node.isLeaf, "a composite node needs the depth of its operands: use init(_:depth:)")
        self.node = node
        self.depth = 1
    }

    /// A node over operands, `depth` being one more than the deepest operand's. Past
    /// ``maximumDepth`` the tree is dropped: only an ``Node/invalid(reason:identity:)`` leaf that
    /// records the depth remains.
    init(_ node: Node, depth: Int) {
        self.depth = depth
        if depth > Self.maximumDepth {
            self.node = .invalid(
                reason: "the expression is nested \(depth) levels deep, and SQLite refuses expressions nested more "
                    + "than \(Self.maximumDepth) levels (SQLITE_MAX_EXPR_DEPTH), for example more than 1000 conditions "
                    + "chained with && or ||. Test many values with in(...), or split the work into several queries",
                identity: Self.nextIdentity())
        } else {
            self.node = node
        }
    }

    /// A number no other too-deep expression has: two such expressions are equal only when one is
    /// a copy of the other, since their trees are gone and cannot be compared.
    private static func nextIdentity() -> UInt64 {
        identities.add(1, ordering: .relaxed).newValue
    }

    private static let identities = Atomic<UInt64>(0)

    /// The expression itself.
    public var sqlExpression: SQLExpression { self }

    /// A literal value, bound as a parameter when the template runs.
    ///
    /// ```swift
    /// Select(SQLExpression.value(42).as("answer"))   // SELECT :l1 AS "answer"
    /// ```
    public static func value(_ value: some DatabaseValueConvertible) -> SQLExpression {
        literal(value)
    }

    /// The SQL text of the expression alone (placeholders included), for messages and debugging.
    public var description: String {
        var renderer = SQLRenderer()
        if (try? node.render(into: &renderer)) == nil { return "<invalid expression>" }
        return renderer.sql
    }

    /// Renders the expression into `renderer`.
    func render(into renderer: inout SQLRenderer) throws {
        try node.render(into: &renderer)
    }

    // MARK: Tree

    /// The expression tree. Operators and functions come from closed enums, so no caller-supplied
    /// text ever reaches the SQL except through quoted identifiers and bound values.
    indirect enum Node: Sendable, Hashable {
        case column(table: String?, name: String)
        case literal(DatabaseValue)
        case parameter(String)
        case not(Node)
        case binary(BinaryOperator, Node, Node)
        case isNull(Node, negated: Bool)
        case inList(Node, [Node], negated: Bool)
        case like(Node, pattern: Node, escape: Node?, negated: Bool)
        case between(Node, lower: Node, upper: Node, negated: Bool)
        /// An aggregate call; a nil argument is `*` (only meaningful for `count`).
        case aggregate(AggregateFunction, Node?, distinct: Bool)
        /// A call of a function the builder knows (FTS5's auxiliary functions, `json_extract`), over
        /// its arguments.
        case function(ScalarFunction, [Node])
        /// An expression that cannot become SQL: rendering it throws
        /// ``SqlCipherError/invalidQuery(reason:)`` with `reason`. `identity` is 0, or a number of
        /// its own for an expression whose tree was dropped (too deep).
        case invalid(reason: String, identity: UInt64)

        /// Whether the node has no operands.
        var isLeaf: Bool {
            switch self {
            case .column, .literal, .parameter, .invalid, .aggregate(_, nil, _): return true
            default: return false
            }
        }
    }

    /// Binary operators, with their SQL spelling.
    enum BinaryOperator: String, Sendable, Hashable {
        case equal = "="
        case notEqual = "<>"
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case and = "AND"
        case or = "OR"
        /// Full-text match (https://sqlite.org/fts5.html#full_text_query_syntax).
        case match = "MATCH"
        /// The JSON text of a sub-component (https://sqlite.org/json1.html#jptr).
        case jsonRepresentation = "->"
        /// The SQL value of a sub-component (https://sqlite.org/json1.html#jptr).
        case jsonValue = "->>"

        /// SQLite's precedence, higher binds tighter (https://sqlite.org/lang_expr.html#operators).
        var precedence: Int {
            switch self {
            case .or: return Precedence.or
            case .and: return Precedence.and
            case .equal, .notEqual, .match: return Precedence.equality
            case .less, .lessOrEqual, .greater, .greaterOrEqual: return Precedence.comparison
            case .jsonRepresentation, .jsonValue: return Precedence.concatenation
            }
        }

        /// The capability the operator needs, checked when it renders; nil for SQL's own. `MATCH`
        /// is FTS5's here: the builder only writes it with an ``FTS5Pattern``, whose syntax FTS4 (the
        /// module of SQLCipher 3.4.1) does not promise to accept.
        var requiredFeature: LibraryCapabilities.Feature? {
            switch self {
            case .jsonRepresentation, .jsonValue: return .jsonOperators
            case .match: return .fts5
            default: return nil
            }
        }

        /// How a refusal names the operator.
        var useDescription: String {
            self == .match ? "the FTS5 MATCH operator" : "the JSON \(rawValue) operator"
        }

        /// Whether `a op (b op c)` equals `(a op b) op c`, so no parentheses are needed.
        var isAssociative: Bool { self == .and || self == .or }
    }

    /// Aggregate functions available to ``Select`` and ``SQLExpression``.
    enum AggregateFunction: String, Sendable, Hashable {
        case count, sum, min, max, avg, total
    }

    /// Scalar functions the builder calls: FTS5's auxiliary functions
    /// (https://sqlite.org/fts5.html#auxiliary_functions) and `json_extract`
    /// (https://sqlite.org/json1.html#jex).
    enum ScalarFunction: String, Sendable, Hashable {
        case bm25, snippet, highlight
        case jsonExtract = "json_extract"

        /// The capability the function needs, checked when it renders. FTS5's auxiliary functions
        /// need FTS5 even where the table exists: an FTS4 table made through raw SQL on SQLCipher
        /// 3.4.1 answers `MATCH` but has no `bm25`, `snippet` or `highlight`.
        var requiredFeature: LibraryCapabilities.Feature {
            self == .jsonExtract ? .json : .fts5
        }
    }

    enum Precedence {
        static let or = 1
        static let and = 2
        static let not = 3
        static let equality = 4
        static let comparison = 5
        /// `||`, `->` and `->>`, which bind tighter than every comparison
        /// (https://sqlite.org/lang_expr.html#operators).
        static let concatenation = 8
        static let atom = 10
    }
}

// Equality and hashing walk the tree with a stack of their own, like rendering: the synthesized
// versions recurse once per level with frames of several hundred bytes in a debug build, which a
// tree at the depth limit would push past a 512 KiB thread stack.
extension SQLExpression.Node {
    static func == (lhs: Self, rhs: Self) -> Bool {
        var pending: [(Self, Self)] = [(lhs, rhs)]
        while let (a, b) = pending.popLast() {
            switch (a, b) {
            case let (.column(table1, name1), .column(table2, name2)):
                guard table1 == table2, name1 == name2 else { return false }
            case let (.literal(value1), .literal(value2)):
                guard value1 == value2 else { return false }
            case let (.parameter(name1), .parameter(name2)):
                guard name1 == name2 else { return false }
            case let (.invalid(reason1, identity1), .invalid(reason2, identity2)):
                guard reason1 == reason2, identity1 == identity2 else { return false }
            case let (.not(operand1), .not(operand2)):
                pending.append((operand1, operand2))
            case let (.binary(op1, lhs1, rhs1), .binary(op2, lhs2, rhs2)):
                guard op1 == op2 else { return false }
                pending.append((lhs1, lhs2))
                pending.append((rhs1, rhs2))
            case let (.isNull(operand1, negated1), .isNull(operand2, negated2)):
                guard negated1 == negated2 else { return false }
                pending.append((operand1, operand2))
            case let (.inList(operand1, values1, negated1), .inList(operand2, values2, negated2)):
                guard negated1 == negated2, values1.count == values2.count else { return false }
                pending.append((operand1, operand2))
                pending.append(contentsOf: zip(values1, values2))
            case let (.like(operand1, pattern1, escape1, negated1), .like(operand2, pattern2, escape2, negated2)):
                guard negated1 == negated2, (escape1 == nil) == (escape2 == nil) else { return false }
                pending.append((operand1, operand2))
                pending.append((pattern1, pattern2))
                if let escape1, let escape2 { pending.append((escape1, escape2)) }
            case let (.between(operand1, lower1, upper1, negated1), .between(operand2, lower2, upper2, negated2)):
                guard negated1 == negated2 else { return false }
                pending.append((operand1, operand2))
                pending.append((lower1, lower2))
                pending.append((upper1, upper2))
            case let (.aggregate(function1, argument1, distinct1), .aggregate(function2, argument2, distinct2)):
                guard function1 == function2, distinct1 == distinct2, (argument1 == nil) == (argument2 == nil) else {
                    return false
                }
                if let argument1, let argument2 { pending.append((argument1, argument2)) }
            case let (.function(function1, arguments1), .function(function2, arguments2)):
                guard function1 == function2, arguments1.count == arguments2.count else { return false }
                pending.append(contentsOf: zip(arguments1, arguments2))
            default:
                return false
            }
        }
        return true
    }

    func hash(into hasher: inout Hasher) {
        var pending: [Self] = [self]
        while let node = pending.popLast() {
            switch node {
            case let .column(table, name):
                hasher.combine(0)
                hasher.combine(table)
                hasher.combine(name)
            case .literal(let value):
                hasher.combine(1)
                hasher.combine(value)
            case .parameter(let name):
                hasher.combine(2)
                hasher.combine(name)
            case let .invalid(reason, identity):
                hasher.combine(3)
                hasher.combine(reason)
                hasher.combine(identity)
            case .not(let operand):
                hasher.combine(4)
                pending.append(operand)
            case let .binary(op, lhs, rhs):
                hasher.combine(5)
                hasher.combine(op)
                pending.append(lhs)
                pending.append(rhs)
            case let .isNull(operand, negated):
                hasher.combine(6)
                hasher.combine(negated)
                pending.append(operand)
            case let .inList(operand, values, negated):
                hasher.combine(7)
                hasher.combine(negated)
                hasher.combine(values.count)
                pending.append(operand)
                pending.append(contentsOf: values)
            case let .like(operand, pattern, escape, negated):
                hasher.combine(8)
                hasher.combine(negated)
                hasher.combine(escape != nil)
                pending.append(operand)
                pending.append(pattern)
                if let escape { pending.append(escape) }
            case let .between(operand, lower, upper, negated):
                hasher.combine(9)
                hasher.combine(negated)
                pending.append(operand)
                pending.append(lower)
                pending.append(upper)
            case let .aggregate(function, argument, distinct):
                hasher.combine(10)
                hasher.combine(function)
                hasher.combine(distinct)
                hasher.combine(argument != nil)
                if let argument { pending.append(argument) }
            case let .function(function, arguments):
                hasher.combine(11)
                hasher.combine(function)
                hasher.combine(arguments.count)
                pending.append(contentsOf: arguments)
            }
        }
    }
}

extension SQLExpression.Node {
    var precedence: Int {
        switch self {
        case .column, .literal, .parameter, .aggregate, .function, .invalid: return SQLExpression.Precedence.atom
        case .not: return SQLExpression.Precedence.not
        case .binary(let op, _, _): return op.precedence
        case .isNull, .inList, .like, .between: return SQLExpression.Precedence.equality
        }
    }

    /// Renders `self`, in parentheses when its precedence is below `minimum`.
    ///
    /// The walk keeps its own stack of pending work instead of recursing, so the depth of the tree
    /// never reaches the thread's stack; the text and the order of the literals are those of a
    /// left-to-right recursive walk.
    func render(into renderer: inout SQLRenderer, minimum: Int) throws {
        var pending: [RenderStep] = [.node(self, minimum: minimum)]
        while let step = pending.popLast() {
            switch step {
            case .text(let text):
                renderer.append(text)
            case let .node(node, minimum):
                if node.precedence < minimum {
                    renderer.append("(")
                    pending.append(.text(")"))
                }
                try node.renderHead(into: &renderer, pending: &pending)
            }
        }
    }

    func render(into renderer: inout SQLRenderer) throws {
        try render(into: &renderer, minimum: SQLExpression.Precedence.or)
    }

    /// One step of ``render(into:minimum:)``: text to append, or a node to render.
    enum RenderStep {
        case text(String)
        case node(SQLExpression.Node, minimum: Int)
    }

    /// Appends the text that comes before this node's first operand, and pushes the rest (operands
    /// and the text between and after them) onto `pending`, last part first.
    private func renderHead(into renderer: inout SQLRenderer, pending: inout [RenderStep]) throws {
        typealias P = SQLExpression.Precedence
        switch self {
        case let .column(table, name):
            if let table {
                try renderer.identifier(table)
                renderer.append(".")
            }
            try renderer.identifier(name)
        case .literal(let value):
            renderer.literal(value)
        case .parameter(let name):
            try renderer.parameter(name)
        case let .invalid(reason, _):
            throw SqlCipherError.invalidQuery(reason: reason)
        case .not(let operand):
            renderer.append("NOT ")
            pending.append(.node(operand, minimum: P.atom))
        case let .binary(op, lhs, rhs):
            if let feature = op.requiredFeature {
                try SqlCipherLibrary.require(feature, for: op.useDescription)
            }
            let sameAssociative: Bool
            if case .binary(let inner, _, _) = rhs, inner == op, op.isAssociative {
                sameAssociative = true
            } else {
                sameAssociative = false
            }
            pending.append(.node(rhs, minimum: sameAssociative ? op.precedence : op.precedence + 1))
            pending.append(.text(" \(op.rawValue) "))
            pending.append(.node(lhs, minimum: op.precedence))
        case let .isNull(operand, negated):
            pending.append(.text(negated ? " IS NOT NULL" : " IS NULL"))
            pending.append(.node(operand, minimum: P.comparison))
        case let .inList(operand, values, negated):
            guard !values.isEmpty else {
                // x IN () is false and x NOT IN () is true, even for NULL x
                // (https://sqlite.org/lang_expr.html#the_in_and_not_in_operators).
                renderer.append(negated ? "1" : "0")
                return
            }
            pending.append(.text(")"))
            for (index, value) in values.enumerated().reversed() {
                pending.append(.node(value, minimum: P.or))
                if index > 0 { pending.append(.text(", ")) }
            }
            pending.append(.text(negated ? " NOT IN (" : " IN ("))
            pending.append(.node(operand, minimum: P.comparison))
        case let .like(operand, pattern, escape, negated):
            if let escape {
                pending.append(.node(escape, minimum: P.comparison))
                pending.append(.text(" ESCAPE "))
            }
            pending.append(.node(pattern, minimum: P.comparison))
            pending.append(.text(negated ? " NOT LIKE " : " LIKE "))
            pending.append(.node(operand, minimum: P.comparison))
        case let .between(operand, lower, upper, negated):
            pending.append(.node(upper, minimum: P.comparison))
            pending.append(.text(" AND "))
            pending.append(.node(lower, minimum: P.comparison))
            pending.append(.text(negated ? " NOT BETWEEN " : " BETWEEN "))
            pending.append(.node(operand, minimum: P.comparison))
        case let .aggregate(function, argument, distinct):
            renderer.append(function.rawValue)
            renderer.append("(")
            if let argument {
                if distinct { renderer.append("DISTINCT ") }
                pending.append(.text(")"))
                pending.append(.node(argument, minimum: P.or))
            } else {
                renderer.append("*)")
            }
        case let .function(function, arguments):
            try SqlCipherLibrary.require(function.requiredFeature, for: "\(function.rawValue)()")
            renderer.append(function.rawValue)
            renderer.append("(")
            pending.append(.text(")"))
            for (index, argument) in arguments.enumerated().reversed() {
                pending.append(.node(argument, minimum: P.or))
                if index > 0 { pending.append(.text(", ")) }
            }
        }
    }
}

// MARK: Default conformances

extension SQLExpressible {
    /// The expression as a result column without an alias.
    public var resultColumn: ResultColumn { ResultColumn(.expression(sqlExpression.node, alias: nil)) }

    /// The expression as an ordering term without an explicit direction (SQLite sorts ascending).
    public var orderingTerm: OrderingTerm { OrderingTerm(sqlExpression, direction: nil) }
}
