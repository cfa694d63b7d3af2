import Foundation
import Testing

/// A fixed, bounded run of the seeded hostile-SQL generator (SQLFuzzing.swift): the same cases on
/// every run and on both libraries, each in a fresh folder, each checked for every invariant the
/// generator's header lists (typed errors with advice, no secret in an error, trace or file, no
/// plaintext file beside an encrypted database, unchanged cipher settings, the marker row still
/// readable with the key). A violation names its seed and steps; `FuzzRunner.run(seed:only:)`
/// replays a subset of them. Longer runs (thousands of seeds) are made by hand, not here:
/// `SQLCIPHERKIT_FUZZ_SEEDS=151-5000 swift test --filter SQLFuzzTests`.
@Suite struct SQLFuzzTests {
    /// Seeds 1 to 150 (a few seconds per library on the project's machine), or the range
    /// `SQLCIPHERKIT_FUZZ_SEEDS` names (`first-last`).
    static let seeds: ClosedRange<UInt64> = {
        let parts = (ProcessInfo.processInfo.environment["SQLCIPHERKIT_FUZZ_SEEDS"] ?? "").split(separator: "-")
        guard parts.count == 2, let first = UInt64(parts[0]), let last = UInt64(parts[1]), first <= last else { return 1...150 }
        return first...last
    }()

    @Test func hostileStatementsKeepEveryInvariant() async throws {
        let folder = TemporaryDirectory()
        let runner = FuzzRunner(folder: folder)
        for seed in Self.seeds {
            await runner.run(seed: seed)
        }
        #expect(runner.violations.isEmpty, "\(runner.violations.joined(separator: "\n\n"))")
    }
}
