import Foundation

/// The result of a child process.
struct ChildResult: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String
    /// Whether the process ended by a signal (crash or kill) rather than exiting.
    let signaled: Bool
}

/// The directory holding the build products (the test binary, the helper, the doctor).
func buildProductsDirectory() -> URL {
    // `swift test` runs <build>/debug/<Package>PackageTests.xctest; the products sit beside it.
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("sqlcipherkit-test-helper").path) {
            return url
        }
    }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug")
}

/// The path of a built executable product, e.g. `sqlcipher-doctor`.
func productPath(_ name: String) -> String {
    buildProductsDirectory().appendingPathComponent(name).path
}

/// Starts `process`, one launch at a time in this test process. Foundation's `Process.run()`
/// once crashed the whole test run (SIGSEGV in a `memcpy` inside `run()`, reading past a freed
/// page, while other tests started their own children at the same moment, SQLCipher 3.4.1 run
/// beside a build); launches are a few milliseconds each, so taking them one at a time costs
/// nothing the suites notice, and the children still run side by side.
func launch(_ process: Process) throws {
    try launchLock.withLock { try process.run() }
}

private let launchLock = NSLock()

/// Runs an executable to completion and captures its output.
/// `environment` entries are added to (or, with a nil value, removed from) the current environment.
@discardableResult
func runChild(_ executable: String, _ arguments: [String], environment: [String: String?] = [:],
              input: Data? = nil) throws -> ChildResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    if let input {
        let pipe = Pipe()
        process.standardInput = pipe
        try launch(process)
        pipe.fileHandleForWriting.write(input)
        try pipe.fileHandleForWriting.close()
    } else {
        process.standardInput = FileHandle.nullDevice
        try launch(process)
    }
    // Read both pipes concurrently with the wait so a chatty child cannot block on a full pipe,
    // each on a thread of its own: on the global queue, whose threads are capped near the core
    // count, the reads of many children at once starved the code under test's own work there.
    nonisolated(unsafe) var outData = Data(), errData = Data()
    let group = DispatchGroup()
    blockingOnAThreadOfItsOwn(group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
    blockingOnAThreadOfItsOwn(group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
    process.waitUntilExit()
    group.wait()
    return ChildResult(
        status: process.terminationStatus,
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self),
        signaled: process.terminationReason == .uncaughtSignal)
}

/// Runs `body`, which blocks (a pipe's read), on a new thread, inside `group`.
func blockingOnAThreadOfItsOwn(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
    group.enter()
    Thread {
        body()
        group.leave()
    }.start()
}

/// Runs `body`, which blocks (a child process's run, a semaphore's wait), on a thread of its own:
/// so that the wait does not hold one of the few threads of Swift's cooperative pool (two on a
/// two-core machine), which the other tests running in parallel and the code under test need.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Runs an executable to completion like ``runChild(_:_:environment:input:)``, waiting on a thread
/// of its own (``offThePool(_:)``): for children that run for many seconds.
func runChildOffThePool(_ executable: String, _ arguments: [String],
                        environment: [String: String?] = [:]) async throws -> ChildResult {
    try await offThePool { try runChild(executable, arguments, environment: environment) }
}

/// Runs the test helper like ``runHelper(_:environment:)``, waiting on a thread of its own.
func runHelperOffThePool(_ arguments: [String], environment: [String: String?] = [:]) async throws -> ChildResult {
    try await runChildOffThePool(productPath("sqlcipherkit-test-helper"), arguments, environment: environment)
}

/// Runs the test helper with a command.
@discardableResult
func runHelper(_ arguments: [String], environment: [String: String?] = [:]) throws -> ChildResult {
    try runChild(productPath("sqlcipherkit-test-helper"), arguments, environment: environment)
}
