extension Connection {
    /// Runs a ``Select`` template and returns the rows. See ``Database/query(_:_:)-(Select,_)``.
    public func query(_ select: Select, _ bindings: ParameterBinding...) throws -> [Row] {
        try core.query(select.render(), bindings)
    }

    /// Runs a ``Select`` template with its parameter values given as one ``StatementArguments``.
    /// See ``DatabaseAccess/query(_:arguments:)-(Select,_)``.
    public func query(_ select: Select, arguments: StatementArguments) throws -> [Row] {
        try core.query(select.render(), arguments.templateBindings())
    }

    /// Runs an ``Insert``, ``Update`` or ``Delete`` template with values for its ``Param``s;
    /// returns the number of rows it inserted, changed or deleted. See
    /// ``DatabaseAccess/execute(_:_:)-(DataChangeStatement,_)``.
    @discardableResult
    public func execute(_ statement: some DataChangeStatement, _ bindings: ParameterBinding...) throws -> Int {
        try core.execute(statement.render(), bindings)
    }

    /// Runs an ``Insert``, ``Update`` or ``Delete`` template with its parameter values given as
    /// one ``StatementArguments``.
    @discardableResult
    public func execute(_ statement: some DataChangeStatement, arguments: StatementArguments) throws -> Int {
        try core.execute(statement.render(), arguments.templateBindings())
    }
}
