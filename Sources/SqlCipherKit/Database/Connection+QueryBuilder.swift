extension Connection {
    /// Runs a ``Select`` template and returns the rows. See ``Database/query(_:_:)-(Select,_)``.
    public func query(_ select: Select, _ bindings: ParameterBinding...) throws -> [Row] {
        try core.query(select.render(), bindings)
    }

    /// Runs a ``Select`` template with an array of parameter values.
    public func query(_ select: Select, bindings: [ParameterBinding]) throws -> [Row] {
        try core.query(select.render(), bindings)
    }

    /// Runs an ``Insert`` template; returns the number of rows inserted.
    @discardableResult
    public func execute(_ insert: Insert, _ bindings: ParameterBinding...) throws -> Int {
        try core.execute(insert.render(), bindings)
    }

    /// Runs an ``Insert`` template with an array of parameter values.
    @discardableResult
    public func execute(_ insert: Insert, bindings: [ParameterBinding]) throws -> Int {
        try core.execute(insert.render(), bindings)
    }

    /// Runs an ``Update`` template; returns the number of rows changed.
    @discardableResult
    public func execute(_ update: Update, _ bindings: ParameterBinding...) throws -> Int {
        try core.execute(update.render(), bindings)
    }

    /// Runs an ``Update`` template with an array of parameter values.
    @discardableResult
    public func execute(_ update: Update, bindings: [ParameterBinding]) throws -> Int {
        try core.execute(update.render(), bindings)
    }

    /// Runs a ``Delete`` template; returns the number of rows deleted.
    @discardableResult
    public func execute(_ delete: Delete, _ bindings: ParameterBinding...) throws -> Int {
        try core.execute(delete.render(), bindings)
    }

    /// Runs a ``Delete`` template with an array of parameter values.
    @discardableResult
    public func execute(_ delete: Delete, bindings: [ParameterBinding]) throws -> Int {
        try core.execute(delete.render(), bindings)
    }
}
