/// A query as the caller gave it, kept so that a cursor or a stream can prepare it when it
/// starts: raw SQL with its arguments, or a rendered builder template with its bindings.
enum QuerySource: Sendable {
    case sql(String, [DatabaseValue])
    case fragment(SQLFragment, [ParameterBinding])

    /// Raw SQL with the public API's arguments, converted once to values.
    static func sql(_ sql: String, _ arguments: [(any DatabaseValueConvertible)?]) -> QuerySource {
        .sql(sql, ArgumentList(arguments).databaseValues)
    }

    /// A ``Select`` template, rendered now so that an invalid template fails at the call.
    static func select(_ select: Select, _ bindings: [ParameterBinding]) throws -> QuerySource {
        .fragment(try select.render(), bindings)
    }
}
