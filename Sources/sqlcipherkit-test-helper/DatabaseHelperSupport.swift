import Foundation
import SqlCipherKit
import Synchronization

// Support for the Database test commands (open-database, encrypt-in-place, rekey-loop).

/// Runs an async body from a synchronous helper command and waits for it.
func waitForDatabaseWork<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
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

/// A key from the command line: `pass:<text>`, `raw:<64 hex digits>` or `none`.
enum HelperKey {
    case passphrase(String)
    case raw(Data)
    case none

    init(_ argument: String) throws {
        if argument == "none" {
            self = .none
        } else if argument.hasPrefix("pass:") {
            self = .passphrase(String(argument.dropFirst(5)))
        } else if argument.hasPrefix("raw:") {
            let hex = Array(argument.dropFirst(4).utf8)
            guard hex.count % 2 == 0 else { throw DatabaseHelperError(message: "odd hex length") }
            var bytes: [UInt8] = []
            var index = 0
            while index < hex.count {
                guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else {
                    throw DatabaseHelperError(message: "a raw: key is hex digits (the argument is not repeated: it holds a key)")
                }
                bytes.append(byte)
                index += 2
            }
            self = .raw(Data(bytes))
        } else {
            throw DatabaseHelperError(message: "a key is pass:<text>, raw:<hex> or none (the argument is not repeated: it may be a key)")
        }
    }

    /// This key as the package takes it; nil for `none`.
    var databaseKey: DatabaseKey? {
        switch self {
        case .passphrase(let text): return .passphrase(text)
        case .raw(let bytes): return .rawKey(bytes)
        case .none: return nil
        }
    }

    /// This key as the package takes it, for a command that needs one.
    func requiredKey(by command: String) throws -> DatabaseKey {
        guard let databaseKey else { throw DatabaseHelperError(message: "\(command) needs a key") }
        return databaseKey
    }

    /// Opens `path` with this key.
    func open(_ path: String, readOnly: Bool = false) throws -> Database {
        switch self {
        case .passphrase(let text): return try Database(path: path, key: text, readOnly: readOnly)
        case .raw(let bytes): return try Database(path: path, rawKey: bytes, readOnly: readOnly)
        case .none: return try Database(unencryptedPath: path, readOnly: readOnly)
        }
    }
}

/// A progress closure for the commands a parent kills in the middle of their work: once some but
/// not all units are done it prints `paused COMPLETED TOTAL` and waits for the parent's SIGKILL.
let pauseHalfwayUntilKilled: @Sendable (DatabaseProgress) -> Void = { progress in
    guard progress.completed > 0, progress.completed < progress.total else { return }
    report("paused \(progress.completed) \(progress.total)")
    while true { sleep(60) }  // until the parent's SIGKILL
}

/// The case name of an error, e.g. `keyFailed` for `SqlCipherError.keyFailed(path:reason:)`.
func errorCaseName(_ error: any Error) -> String {
    if let label = Mirror(reflecting: error).children.first?.label { return label }
    return "\(error)"
}

/// A wrong command line.
struct DatabaseHelperError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Makes `folder` the process's working folder (the whole process's: commands that call this run
/// in a process of their own), or throws saying which folder could not be entered.
func enterWorkingFolder(_ folder: String) throws {
    guard FileManager.default.changeCurrentDirectoryPath(folder) else {
        throw DatabaseHelperError(message: "cannot enter \(folder)")
    }
}
