import Foundation
import SqlCipherKit
import Synchronization

/// Collects the trace events a tracer receives, from whichever thread delivers them.
final class TraceRecorder: Sendable {
    private let recorded = Mutex<[TraceEvent]>([])

    var events: [TraceEvent] { recorded.withLock { $0 } }
    /// The events of statements the caller ran (not the package's own).
    var userEvents: [TraceEvent] { events.filter { !$0.isInternal } }
    var userSQL: [String] { userEvents.map(\.sql) }

    func record(_ event: TraceEvent) {
        recorded.withLock { $0.append(event) }
    }

    func clear() {
        recorded.withLock { $0.removeAll() }
    }

    /// Starts recording every event of `db`.
    @discardableResult
    func attach(to db: Database, options: TraceOptions = TraceOptions()) async throws -> TraceToken {
        try await db.trace(options: options) { self.record($0) }
    }
}

/// Counts the instances alive of a class captured by SQL functions, to see them released.
final class LifetimeProbe: Sendable {
    static let alive = Atomic<Int>(0)

    init() { Self.alive.wrappingAdd(1, ordering: .relaxed) }
    deinit { Self.alive.wrappingSubtract(1, ordering: .relaxed) }
}

/// A median over the non-NULL numbers of a group: an aggregate for the tests.
struct Median: DatabaseAggregate {
    var values: [Double] = []

    mutating func step(_ arguments: [DatabaseValue]) throws {
        guard let value = Double.fromDatabaseValue(arguments[0]) else {
            if arguments[0].isNull { return }
            throw MedianError(value: arguments[0])
        }
        values.append(value)
    }

    func result() -> Double? {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return nil }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

struct MedianError: Error, CustomStringConvertible {
    let value: DatabaseValue
    var description: String { "median() takes numbers, not \(value)" }
}

/// A tracer's events scanned for key material, in every form an event could show it.
func keyLeaks(in events: [TraceEvent], passphrases: [String], rawKeys: [Data]) -> [String] {
    var needles = passphrases
    for key in rawKeys {
        let lower = hex(key)
        needles += [lower, lower.uppercased()]
    }
    var leaks: [String] = []
    for event in events {
        let text = event.description + " " + event.sql + " " + (event.arguments?.map { "\($0)" }.joined() ?? "")
        var values = ""
        for argument in event.arguments ?? [] {
            switch argument {
            case .text(let text): values += text
            case .blob(let data): values += hex(data) + String(decoding: data, as: UTF8.self)
            default: break
            }
        }
        for needle in needles where (text + values).lowercased().contains(needle.lowercased()) {
            leaks.append("\(needle) in \(event)")
        }
    }
    return leaks
}
