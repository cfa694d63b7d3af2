import Synchronization
import Testing
@testable import SqlCipherKit

/// The package's locks never nest (the lock table in the Architecture article); in debug builds
/// the locks of live queries, pools and streams are taken with `withCheckedLock`, which traps when
/// the thread already holds one, so a change that made them nest fails the run.
@Suite struct LockNestingTests {
    #if DEBUG
    /// In a child process (the test helper, built in the same configuration): the second lock traps.
    @Test func aCheckedLockTakenUnderAnotherTraps() throws {
        let result = try runHelper(["nested-locks"])
        #expect(result.signaled, "status \(result.status), stdout: \(result.stdout)")
        #expect(!result.stdout.contains("not trapped"))
    }

    @Test func checkedLocksTakenOneAfterTheOtherDoNot() {
        let first = Mutex(1)
        let second = Mutex(2)
        let sum = first.withCheckedLock { $0 } + second.withCheckedLock { $0 }
        #expect(sum == 3)
        #expect(LockNesting.depth == 0)
        // A body that throws releases its count too.
        #expect(throws: CancellationError.self) { try first.withCheckedLock { _ in throw CancellationError() } }
        #expect(LockNesting.depth == 0)
    }
    #endif
}
