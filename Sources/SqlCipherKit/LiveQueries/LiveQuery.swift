import Observation

/// A value that follows the database: the result of a ``LiveRequest``, kept up to date and
/// observable with the Observation framework (`@Observable`).
///
/// ```swift
/// @MainActor func show(_ db: Database) {
///     let products = LiveQuery(.fetch(Product.self, orderBy: col("name").ascending), database: db)
///     // products.value is [] until the first fetch, then every committed change.
///     withObservationTracking { _ = products.value } onChange: { print("products changed") }
/// }
/// ```
///
/// Everything a SwiftUI property wrapper needs, without SwiftUI: ``value`` holds the request's
/// placeholder until the first fetch completes; ``phase`` tells loading, loaded and failed
/// apart; ``retry()`` restarts after a failure; and assigning ``database`` (for example on
/// sign-out) shows the placeholder until the new database delivers, never the previous one's
/// rows. Assigning an equal ``request`` leaves the running observation alone; a different one
/// keeps showing the current value, in the ``LivePhase/loading`` phase, until its first result.
///
/// Values arrive through ``Database/values(of:)``, so they are fetched on the database actor when
/// a commit changed them, at most once per transaction, and only when the result differs.
@MainActor
@Observable
public final class LiveQuery<Value: Sendable> {
    /// The current result, or the request's placeholder before the first fetch.
    public private(set) var value: Value
    /// Whether the value is still loading, loaded, or observation stopped on an error.
    public private(set) var phase: LivePhase = .loading

    /// What is observed. Assigning a different request starts a new observation.
    public var request: LiveRequest<Value> {
        didSet { if request != oldValue { restart(showPlaceholder: false) } }
    }

    /// The database read from. Assigning another one (or nil) shows the placeholder at once and
    /// observes the new database; nil fails with ``LiveError/missingDatabase``.
    public var database: (any DatabaseAccess)? {
        didSet { if database !== oldValue { restart(showPlaceholder: true) } }
    }

    @ObservationIgnored private var task: Task<Void, Never>?
    /// Incremented at each restart; a value from an older observation is dropped.
    @ObservationIgnored private var epoch = 0

    /// Starts observing `request` in `database` at once.
    public init(_ request: LiveRequest<Value>, database: (any DatabaseAccess)?) {
        self.request = request
        self.database = database
        self.value = request.placeholder
        restart(showPlaceholder: true)
    }

    deinit {
        task?.cancel()
    }

    /// Starts observation again, for example after ``LivePhase/failed(_:)``. The current value stays
    /// until the new first value arrives.
    public func retry() {
        restart(showPlaceholder: false)
    }

    private func restart(showPlaceholder: Bool) {
        task?.cancel()
        task = nil
        epoch += 1
        let current = epoch
        if showPlaceholder { value = request.placeholder }
        guard let database else {
            phase = .failed(LiveError.missingDatabase)
            return
        }
        phase = .loading
        let values = database.values(of: request)
        task = Task { [weak self] in
            do {
                for try await value in values {
                    guard let self, self.epoch == current else { return }
                    self.value = value
                    self.phase = .loaded
                }
            } catch {
                guard let self, self.epoch == current else { return }
                self.phase = .failed(error)
            }
        }
    }
}
