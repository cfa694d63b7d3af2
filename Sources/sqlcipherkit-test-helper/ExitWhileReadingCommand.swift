import Foundation
import SqlCipherKit

/// Starts READERS detached tasks that read PATH in a loop, waits until each has read once, prints
/// `reading <exit protection>` and exits with status 0 while they still read: what a service that
/// stops or a command-line tool that returns from its top-level code does. The process must end
/// with status 0, whatever the readers were doing at that moment. How they read:
/// - `database`, `pool`: one `Database` or `DatabasePool` with an 8 KiB page cache, whose tasks
///   count the rows of table `t` (each read decrypts pages again);
/// - `reopen`: each task opens its own `Database` with the key, counts, closes, and again (with
///   a passphrase, each opening runs the key derivation).
/// With LIBCRYPTO (a file name such as `libcrypto.so.3`), that library is loaded and initialised
/// first, as another component of a program (libcurl, a TLS client) does, with OpenSSL's cleanup
/// at exit registered.
let exitWhileReadingCommand = HelperCommand(
    name: "exit-while-reading",
    usage: "exit-while-reading PATH pass:<text>|raw:<hex> database|pool|reopen READERS [LIBCRYPTO]: exits while tasks read PATH"
) { arguments in
    guard arguments.count == 4 || arguments.count == 5, ["database", "pool", "reopen"].contains(arguments[2]),
        let readers = Int(arguments[3]), readers > 0
    else {
        throw DatabaseHelperError(message: "usage: exit-while-reading PATH KEY database|pool|reopen READERS [LIBCRYPTO]")
    }
    let path = arguments[0], kind = arguments[2]
    if arguments.count == 5 {
        try initialiseLibcrypto(arguments[4])
    }
    let key = try HelperKey(arguments[1]).requiredKey(by: "exit-while-reading")
    var configuration = DatabaseConfiguration()
    configuration.pageCacheKiB = 8
    let shared: (any DatabaseAccess)? =
        switch kind {
        case "pool": try DatabasePool(path: path, key: key, configuration: configuration)
        case "database": try Database(path: path, key: key, configuration: configuration)
        default: nil
        }
    let firstReads = DispatchSemaphore(value: 0)
    for _ in 0..<readers {
        Task.detached {
            var signalled = false
            while true {
                if let shared {
                    _ = try? await shared.query("SELECT count(*) FROM t")
                } else if let own = try? Database(path: path, key: key) {
                    _ = try? await own.query("SELECT count(*) FROM t")
                    await own.close()
                }
                if !signalled {
                    signalled = true
                    firstReads.signal()
                }
            }
        }
    }
    for _ in 0..<readers { firstReads.wait() }
    report("reading \(try SqlCipherLibrary.shared.exitProtection.rawValue)")
    return 0
}
