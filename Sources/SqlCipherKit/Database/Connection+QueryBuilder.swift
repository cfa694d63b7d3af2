extension Connection {
    /// Runs a ``Select`` template and returns the rows. See ``Database/query(_:_:)-(Select,_)``.
    public func query(_ select: Select, _ bindings: ParameterBinding...) throws -> [Row] {
        try core.query(select.render(), bindings)
    }

    /// Runs a ``Select`` template with an array of parameter values.
    public func query(_ select: Select, bindings: [ParameterBinding]) throws -> [Row] {
        try core.query(select.render(), bindings)
    }

    /// Runs an ``Insert``, ``Update`` or ``Delete`` template with values for its ``Param``s;
    /// returns the number of rows it inserted, changed or deleted. See
    /// ``DatabaseAccess/execute(_:_:)-(DataChangeStatement,_)``.
    @discardableResult
    public func execute(_ statement: some DataChangeStatement, _ bindings: ParameterBinding...) throws -> Int {
        try core.execute(statement.render(), bindings)
    }

    /// Runs an ``Insert``, ``Update`` or ``Delete`` template with an array of parameter values.
    @discardableResult
    public func execute(_ statement: some DataChangeStatement, bindings: [ParameterBinding]) throws -> Int {
        try core.execute(statement.render(), bindings)
    }
}
