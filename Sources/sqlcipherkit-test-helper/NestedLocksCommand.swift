import SqlCipherKit
import Synchronization

/// Takes a checked lock while holding another: a debug build of SqlCipherKit traps at the second
/// lock (Core/CheckedLock.swift), so the parent sees the process die of a signal; a release build
/// prints "not trapped" and exits 0.
let nestedLocksCommand = HelperCommand(
    name: "nested-locks",
    usage: "nested-locks: takes a checked lock under another (a debug build traps)"
) { _ in
    let outer = Mutex(0)
    let inner = Mutex(0)
    outer.withCheckedLock { _ in inner.withCheckedLock { $0 += 1 } }
    report("not trapped")
    return 0
}
