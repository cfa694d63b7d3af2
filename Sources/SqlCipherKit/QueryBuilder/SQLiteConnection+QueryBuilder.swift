extension SQLiteConnection {
    /// Prepares `fragment` (through the statement cache, keyed by its SQL text), binds its literals
    /// and the caller's parameter values by name, and returns the statement ready to step.
    /// The caller must `reset()` it when done.
    ///
    /// - Throws: ``SqlCipherError/unknownParameter(name:)`` for a binding the template does not use,
    ///   ``SqlCipherError/unboundParameter(name:)`` for a template parameter without a binding,
    ///   ``SqlCipherError/invalidQuery(reason:)`` for a parameter bound twice.
    func boundStatement(_ fragment: SQLFragment, _ bindings: [ParameterBinding], cached: Bool = true) throws -> Statement {
        var values: [String: DatabaseValue] = [:]
        values.reserveCapacity(bindings.count)
        for binding in bindings {
            guard fragment.parameterNames.contains(binding.name) else {
                throw SqlCipherError.unknownParameter(name: binding.name)
            }
            guard values.updateValue(binding.value, forKey: binding.name) == nil else {
                throw SqlCipherError.invalidQuery(
                    reason: "the parameter :\(binding.name) was bound twice; pass one value per parameter")
            }
        }
        for name in fragment.parameterNames where values[name] == nil {
            throw SqlCipherError.unboundParameter(name: name)
        }

        let statement = try cached ? cachedStatement(fragment.sql) : singleStatement(fragment.sql)
        guard !statement.hasTrailingStatements else { throw SqlCipherError.multipleStatements(sql: fragment.sql).redactingSQL() }
        let expected = fragment.literals.count + fragment.parameterNames.count
        guard statement.parameterCount == expected else {
            throw SqlCipherError.argumentCountMismatch(
                expected: statement.parameterCount, given: expected, sql: fragment.sql).redactingSQL()
        }
        do {
            for (index, value) in fragment.literals.enumerated() {
                try bind(value, to: SQLFragment.literalPlaceholder(index), in: statement)
            }
            for name in fragment.parameterNames {
                try bind(values[name] ?? .null, to: SQLFragment.parameterPlaceholder(name), in: statement)
            }
        } catch {
            statement.reset()
            throw error
        }
        return statement
    }

    private func bind(_ value: DatabaseValue, to placeholder: String, in statement: Statement) throws {
        guard let index = statement.parameterIndex(placeholder) else {
            throw SqlCipherError.invalidQuery(reason: "the prepared statement has no parameter \(placeholder)")
        }
        try statement.bind(value, at: index)
    }

    /// Runs a rendered template; returns the number of rows changed.
    @discardableResult
    func execute(_ fragment: SQLFragment, _ bindings: [ParameterBinding]) throws -> Int {
        let statement = try boundStatement(fragment, bindings)
        defer { statement.reset() }
        try statement.run()
        return statement.isReadOnly ? 0 : changes
    }

    /// Runs a rendered query and returns its rows.
    func query(_ fragment: SQLFragment, _ bindings: [ParameterBinding]) throws -> [Row] {
        let statement = try boundStatement(fragment, bindings)
        defer { statement.reset() }
        return try statement.fetchAll()
    }
}
