/// A statement that assigns values to named columns: ``Insert`` and ``Update``.
///
/// One rule for both: setting a column that is already set replaces its value and keeps its
/// position, so the rendered SQL lists each column once.
protocol ColumnAssigning {
    var columnNames: [String] { get set }
    var values: [SQLExpression.Node] { get set }
}

extension ColumnAssigning {
    /// A copy with `name` set to `value`.
    func setting(_ name: String, _ value: SQLExpression.Node) -> Self {
        var copy = self
        if let index = copy.columnNames.firstIndex(of: name) {
            copy.values[index] = value
        } else {
            copy.columnNames.append(name)
            copy.values.append(value)
        }
        return copy
    }
}
