import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Mutex where Value: ~Copyable {
    /// `withLock`, and in debug builds a trap when the calling thread already holds another lock
    /// taken this way: the locks of the package never nest (the table in <doc:Architecture>), and
    /// a change that made one nest stops the test run at the second lock instead of waiting for a
    /// deadlock. Release builds compile to `withLock` alone.
    @inline(__always)
    package borrowing func withCheckedLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if DEBUG
        LockNesting.enter()
        defer { LockNesting.leave() }
        #endif
        return try withLock(body)
    }
}

#if DEBUG
/// How many checked locks the current thread holds (debug builds only), in a thread-specific slot.
enum LockNesting {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key for the lock check")
        return key
    }()

    static var depth: Int { Int(bitPattern: pthread_getspecific(key)) }

    static func enter() {
        let depth = self.depth
        precondition(depth == 0, "a lock was taken while this thread holds another: the package's locks must not nest")
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: depth + 1))
    }

    static func leave() {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: depth - 1))
    }
}
#endif
