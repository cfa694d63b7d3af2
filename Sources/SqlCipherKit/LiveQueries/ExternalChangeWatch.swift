/// Checks, ten times a second, whether another connection or process committed to a database
/// that has observations: the part of live queries that sees changes SQLite's hooks cannot report
/// (they fire only for the connection's own commits).
///
/// The check itself is `PRAGMA data_version` on a connection of the database
/// (https://sqlite.org/pragma.html#pragma_data_version): a read of a counter in the shared WAL
/// index or the file header, with no lock held afterwards. The watch runs only while something
/// is observed: `check` returns false when nothing is, and the loop ends, so an unobserved
/// database pays nothing.
final class ExternalChangeWatch: Sendable {
    /// How long between two checks: a change is seen within this time plus one fetch.
    static let interval: Duration = .milliseconds(100)

    private let task: Task<Void, Never>

    private init(task: Task<Void, Never>) {
        self.task = task
    }

    /// Starts a watch that calls `check` after each interval until it returns false or the watch
    /// is stopped. `check` must not hold the database strongly between calls.
    static func start(_ check: @escaping @Sendable () async -> Bool) -> ExternalChangeWatch {
        ExternalChangeWatch(task: Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, await check() else { return }
            }
        })
    }

    /// Ends the watch (when the database closes).
    func stop() {
        task.cancel()
    }
}
