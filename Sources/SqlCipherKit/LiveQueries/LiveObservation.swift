/// The database actor's side of one observation: the request, the tables its last fetch read,
/// and what it returned, to tell a changed result from an unchanged one.
///
/// Lives in its connection's ``ChangeTracker`` and is used only on the database actor; the
/// consumer holds the ``ObservationSignal`` and the identifier.
final class LiveObservation<Value: Sendable>: ObservationEntry {
    weak var signal: ObservationSignal?
    var region = TableRegion()
    var refetchWhenTransactionEnds = false
    let request: LiveRequest<Value>
    private var previousRows: (columns: [String], values: [DatabaseValue])?
    private var previousValue: Value?

    init(request: LiveRequest<Value>, signal: ObservationSignal) {
        self.request = request
        self.signal = signal
    }

    /// Runs the request and returns its value, whatever the previous one was.
    func fetchValue(on connection: SQLiteConnection) throws -> Value {
        switch request.fetcher {
        case let .rows(source, decode):
            let (rows, raw) = try readRows(source, on: connection)
            let value = try decode(rows)
            previousRows = raw
            return value
        case let .closure(body, _, _):
            let value = try readClosure(body, on: connection)
            previousValue = value
            return value
        }
    }

    /// Runs the request; returns nil when the result equals the previous fetch's. For SQL
    /// requests the raw rows are compared, so an unchanged result is never decoded.
    func fetchIfChanged(on connection: SQLiteConnection) throws -> Value? {
        switch request.fetcher {
        case let .rows(source, decode):
            let (rows, raw) = try readRows(source, on: connection)
            if let previousRows, previousRows == raw { return nil }
            let value = try decode(rows)
            previousRows = raw
            return value
        case let .closure(body, isEqual, _):
            let value = try readClosure(body, on: connection)
            if let previousValue, isEqual(previousValue, value) { return nil }
            previousValue = value
            return value
        }
    }

    private func readRows(_ source: RowSource, on connection: SQLiteConnection) throws
        -> (rows: [Row], raw: (columns: [String], values: [DatabaseValue])) {
        let (rows, region) = try connection.changeTracker.recordingReads { try source.rows(on: connection) }
        self.region = region
        return (rows, Self.raw(rows))
    }

    private func readClosure(_ body: @Sendable (borrowing Connection) throws -> Value,
                             on connection: SQLiteConnection) throws -> Value {
        // The change tracker refuses a statement that writes here (a request must only read), and
        // as a body of its own, transaction control is refused too.
        let (value, region) = try connection.changeTracker.recordingReads {
            try connection.runBody { try connection.lend(body) }
        }
        self.region = region
        return value
    }

    /// The rows' column names and values, without decoding anything. The rows of one result share
    /// one buffer (``RowStorage``), which is then used as it is.
    private static func raw(_ rows: [Row]) -> (columns: [String], values: [DatabaseValue]) {
        guard let first = rows.first else { return ([], []) }
        let storage = first.storage
        if rows.allSatisfy({ $0.storage === storage }), storage.valueCount == rows.count * first.count {
            return (first.columnNames, storage.allValues)
        }
        return (first.columnNames, rows.flatMap { $0.values })
    }
}
