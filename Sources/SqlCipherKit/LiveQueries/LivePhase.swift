/// Where a ``LiveQuery`` stands: waiting for its first value, showing values, or stopped by an error.
///
/// ```swift
/// if let error = query.phase.error {
///     print("Couldn't load products: \(error)")   // then query.retry()
/// } else if query.phase.isLoading {
///     print("loading…")
/// }
/// ```
public enum LivePhase: Sendable {
    /// No value has arrived yet for the current request and database; ``LiveQuery/value`` holds
    /// the placeholder (or, after a request change, the previous request's value).
    case loading
    /// ``LiveQuery/value`` is the request's current result and follows the database.
    case loaded
    /// A fetch failed (or no database is set); observation stopped until ``LiveQuery/retry()``.
    case failed(any Error)

    /// Whether the first value is still awaited.
    public var isLoading: Bool {
        if case .loading = self { return true }
        return false
    }

    /// The error that stopped observation, if any.
    public var error: (any Error)? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

/// Errors of ``LiveQuery`` itself.
public enum LiveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The live query has no ``LiveQuery/database`` to read from.
    case missingDatabase

    /// What went wrong and what to do.
    public var description: String {
        switch self {
        case .missingDatabase:
            return "the live query has no database: set LiveQuery.database (in SwiftUI, the \\.database environment value)"
        }
    }
}
