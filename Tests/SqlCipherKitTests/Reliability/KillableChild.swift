import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A helper child whose standard output the parent reads line by line while it runs, and which the
/// parent can kill at a moment of its choosing (SIGKILL: no cleanup, no buffered output lost,
/// because the helper writes each line with one write(2)).
final class KillableChild {
    private let process = Process()
    private let output = Pipe()
    private let errorFile: URL
    private var buffer = Data()
    private(set) var lines: [String] = []
    private var reachedEOF = false
    /// The parent's end of the child's standard input with `input: true` (a socket, so that a
    /// line sent after the child exited fails with EPIPE instead of raising SIGPIPE here), else -1.
    let inputDescriptor: Int32

    /// Starts `sqlcipherkit-test-helper` with `arguments`; its stderr goes to a file, so a chatty
    /// child never blocks on a full pipe. With `input`, the parent can ``send(_:)`` it lines;
    /// else its standard input is empty.
    init(helperArguments arguments: [String], environment: [String: String] = [:], input: Bool = false) throws {
        errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("sqlcipherkit-child-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: productPath("sqlcipherkit-test-helper"))
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        var childInput: FileHandle?
        if input {
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            inputDescriptor = ends[0]
            childInput = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        } else {
            inputDescriptor = -1
        }
        process.standardInput = childInput ?? FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try launch(process)
        // The child has its copy; the parent's would keep the child's input open after closeInput().
        try childInput?.close()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        if inputDescriptor >= 0 { close(inputDescriptor) }
        try? FileManager.default.removeItem(at: errorFile)
    }

    /// Sends `line` and a newline to the child's standard input (`input: true`); false when the
    /// child no longer reads it (it exited).
    @discardableResult
    func send(_ line: String) -> Bool { Self.send(line, to: inputDescriptor) }

    /// ``send(_:)`` through the descriptor alone, for a `@Sendable` closure that cannot hold the child.
    @discardableResult
    static func send(_ line: String, to descriptor: Int32) -> Bool {
        let bytes = Array((line + "\n").utf8)
        return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Ends the child's standard input (it reads end of file).
    func closeInput() { if inputDescriptor >= 0 { shutdown(inputDescriptor, Int32(SHUT_WR)) } }

    /// Reads lines until one starts with `prefix` (returned), the child closes its output (nil), or
    /// `timeout` seconds pass (nil).
    func waitForLine(startingWith prefix: String, timeout: Double = 60) -> String? {
        if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
        let deadline = Date().addingTimeInterval(timeout)
        while !reachedEOF && Date() < deadline {
            let before = lines.count
            readAvailable(waitMilliseconds: Int32(max(1, min(200, deadline.timeIntervalSinceNow * 1000))))
            if let line = lines[before...].first(where: { $0.hasPrefix(prefix) }) { return line }
        }
        return nil
    }

    /// Sends SIGKILL (if the child still runs), waits for it, and reads every line it printed.
    /// Returns whether the child died of the signal (false: it had already exited by itself).
    @discardableResult
    func killAndCollect() -> Bool {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        while !reachedEOF { readAvailable(waitMilliseconds: 1000) }
        return process.terminationReason == .uncaughtSignal
    }

    /// Waits for the child to exit by itself and reads everything it printed.
    func waitForExit() -> Int32 {
        while !reachedEOF { readAvailable(waitMilliseconds: 1000) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// What the child wrote to stderr.
    var standardError: String {
        (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
    }

    private func readAvailable(waitMilliseconds: Int32) {
        let fd = output.fileHandleForReading.fileDescriptor
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, waitMilliseconds) > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = read(fd, &chunk, chunk.count)
        if count <= 0 { reachedEOF = true; return }
        buffer.append(contentsOf: chunk[0..<count])
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
            buffer.removeSubrange(buffer.startIndex...newline)
        }
    }
}

extension KillableChild {
    /// Starts the helper with `arguments`, waits for its line starting with `mark` (by default
    /// `start`: it is past its own start-up and about to do the work under test), lets it run
    /// `delay` seconds and kills it (SIGKILL). Returns what it printed and whether the kill landed
    /// (false: it had finished by itself). The moment is left to chance on purpose: every moment
    /// must leave a whole state.
    static func killed(_ arguments: [String], after delay: TimeInterval, mark: String = "start",
                       environment: [String: String] = [:]) throws -> (lines: [String], killed: Bool) {
        let child = try KillableChild(helperArguments: arguments, environment: environment)
        _ = child.waitForLine(startingWith: mark, timeout: 120)
        Thread.sleep(forTimeInterval: delay)
        let killed = child.killAndCollect()
        return (child.lines, killed)
    }
}

/// How long one uninterrupted helper run takes from its `mark` line to its exit: the stretch over
/// which ``KillableChild/killed(_:after:mark:environment:)`` spreads its kill moments (its delay
/// starts at the same line). Timed from the process's start instead, the stretch included the
/// child's start-up (launch, library load, the opening), and a short piece of work then drew most
/// of its kill moments after it had finished: a full run under load saw no kill land in all eight
/// rounds of a backup.
func helperRunDuration(_ arguments: [String], mark: String = "start",
                       environment: [String: String] = [:]) throws -> TimeInterval {
    let child = try KillableChild(helperArguments: arguments, environment: environment)
    let marked = child.waitForLine(startingWith: mark, timeout: 120)
    let start = Date()
    let status = child.waitForExit()
    #expect(marked != nil && status == 0, "\(child.lines) \(child.standardError)")
    return Date().timeIntervalSince(start)
}

/// The rounds of a test that kills a helper at random moments and needs some kill to land inside
/// the work (not after it ended): `planned` rounds whose moments are drawn from up to
/// `reach` runs (past 1, some kills come after the work, which must be whole then too), then up
/// to six more, each drawn from the first quarter of a run, for as long as none has landed.
///
/// The extra rounds are the test's answer to a loaded machine: the measured run can be long and
/// the later ones short, and the test process's own sleep before each kill can wake late, so
/// that every planned moment falls after the work (seen: all eight rounds of the backup test and
/// of `killDuringEncryptInPlace`, and the upgrade test's three now and then). Each test keeps its
/// own notion of "landed" (killed while running, or a target still absent).
struct KillRounds {
    let planned: Int
    let duration: TimeInterval
    let reach: Double
    /// The index of the round that ``next(landed:)`` last returned.
    private(set) var round = -1

    init(planned: Int, duration: TimeInterval, reach: Double) {
        self.planned = planned
        self.duration = duration
        self.reach = reach
    }

    /// The span to draw the next round's kill moment from (seconds after the helper's mark line),
    /// or nil when the test has run its rounds: the planned ones, and then extra ones until
    /// `landed`.
    mutating func next(landed: Bool) -> ClosedRange<Double>? {
        let candidate = round + 1
        let span: ClosedRange<Double>? =
            candidate < planned ? 0...(duration * reach)
            : !landed && candidate < planned + 6 ? 0...(duration * 0.25) : nil
        if span != nil { round = candidate }
        return span
    }

    /// The number of rounds run so far.
    var count: Int { round + 1 }
}
