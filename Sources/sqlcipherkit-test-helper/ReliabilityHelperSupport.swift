import Foundation
import Synchronization

/// Runs `body` to completion from synchronous code (helper commands are synchronous; the database
/// is an actor). The calling thread waits; the body runs on the concurrency pool.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0! }.get()
}

/// The bytes of a hex string (a raw key given on the command line).
func helperBytes(fromHex hex: String) throws -> Data {
    var data = Data()
    var iterator = hex.utf8.makeIterator()
    func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
    while let high = iterator.next() {
        guard let low = iterator.next(), let h = value(high), let l = value(low) else {
            throw HelperUsageError(message: "a raw key is hex digits (the argument is not repeated: it holds a key)")
        }
        data.append(h << 4 | l)
    }
    return data
}

/// A wrong command line (reported on standard output as `error: ...`, exit status 1).
struct HelperUsageError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
