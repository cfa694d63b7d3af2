import Foundation
import SqlCipherKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `verify` takes the key from. Never the command line: other users of the machine can read
/// a process's arguments (`ps`, `/proc/PID/cmdline`).
struct KeySource: Equatable {
    enum Origin: Equatable {
        case environment(String)
        case file(String)
        case standardInput
    }

    let origin: Origin
    /// A raw key of 64 hex digits rather than a passphrase.
    let raw: Bool

    /// The option that named the source, e.g. `--raw-key-file`.
    var option: String {
        let prefix = raw ? "--raw-key" : "--key"
        switch origin {
        case .environment: return prefix + "-env"
        case .file: return prefix + "-file"
        case .standardInput: return prefix + "-stdin"
        }
    }

    /// The option with its value, for messages: `--key-env DB_KEY`.
    var label: String {
        switch origin {
        case let .environment(name): return "\(option) \(name)"
        case let .file(path): return "\(option) \(path)"
        case .standardInput: return option
        }
    }

    /// For the report: "a passphrase from the environment variable DB_KEY".
    var description: String {
        let what = raw ? "a raw key" : "a passphrase"
        switch origin {
        case let .environment(name): return "\(what) from the environment variable \(name)"
        case let .file(path): return "\(what) from the file \(path)"
        case .standardInput: return "\(what) from standard input"
        }
    }

    /// The one key source of the command line. Throws unless exactly one is given.
    static func from(_ arguments: CommandLineArguments) throws(UsageError) -> KeySource {
        var sources: [KeySource] = []
        for raw in [false, true] {
            let prefix = raw ? "--raw-key" : "--key"
            if let name = arguments.values[prefix + "-env"] {
                // `--key-env DB_KEY=secret` is an assignment typed where a name belongs: whatever
                // follows `=` is likely the key, so no message may repeat the value.
                guard !name.contains("=") else {
                    throw UsageError(message: "\(prefix)-env takes the name of an environment variable, and this one "
                        + "contains '=' (not repeated here, as it may be the key): set the variable in the environment "
                        + "and give only its name (DB_KEY=... exported, then \(prefix)-env DB_KEY). A key typed on a "
                        + "command line can be read by other users (/proc/PID/cmdline); if that was one, change it",
                        command: .verify)
                }
                sources.append(KeySource(origin: .environment(name), raw: raw))
            }
            if let path = arguments.values[prefix + "-file"] { sources.append(KeySource(origin: .file(path), raw: raw)) }
            if arguments.flag(prefix + "-stdin") { sources.append(KeySource(origin: .standardInput, raw: raw)) }
        }
        guard let source = sources.first else {
            throw UsageError(message: "verify needs a key: give one of --key-env NAME, --key-file PATH, --key-stdin, "
                + "--raw-key-env NAME, --raw-key-file PATH or --raw-key-stdin", command: .verify)
        }
        guard sources.count == 1 else {
            throw UsageError(message: "verify takes one key, but \(sources.map(\.option).joined(separator: " and ")) "
                + "were given", command: .verify)
        }
        return source
    }

    /// Reads the key. Problems with the source (an unset variable, an unreadable or empty file, a
    /// raw key that is not 64 hex digits) are usage errors: the command line pointed at no key.
    /// Messages never include key bytes.
    func read(warn: (String) -> Void) throws(UsageError) -> DatabaseKey {
        func failure(_ message: String) -> UsageError { UsageError(message: message, command: .verify) }
        var bytes: [UInt8]
        switch origin {
        case let .environment(name):
            // A value that names nothing may be the key itself, typed where its name or path
            // belongs (`--raw-key-env $(openssl rand -hex 32)`): it is not repeated. Named
            // sources that exist are shown as given (found by the adversarial review: the raw
            // key was printed back twice).
            guard let value = getenv(name) else {
                throw failure("\(option): no environment variable of that name is set (the name is not repeated here, "
                    + "in case a key was typed in its place): export the variable that holds the key and give its "
                    + "name, e.g. \(option) DB_KEY")
            }
            bytes = Array(UnsafeBufferPointer(start: value, count: strlen(value))).map { UInt8(bitPattern: $0) }
        case let .file(path):
            var info = stat()
            guard stat(path, &info) == 0 else {
                throw failure("\(option): \(String(cString: strerror(errno))) (the path is not repeated here, in case "
                    + "a key was typed in its place): give the path of a file that holds the key")
            }
            guard info.st_mode & S_IFMT == S_IFREG || info.st_mode & S_IFMT == S_IFIFO else {
                throw failure("\(option) \(path): not a regular file")
            }
            // open(2) rather than FileManager.contents, which fails on a pipe (`<(...)`); a pipe's
            // open waits for its writer, as the shell's `<(...)` has one.
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
            guard descriptor >= 0 else {
                throw failure("\(option) \(path): the file cannot be read (check its permissions)")
            }
            defer { _ = close(descriptor) }
            if info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o077 != 0 {
                warn("warning: the key file \(path) can be read by other users (mode "
                    + String(info.st_mode & 0o777, radix: 8) + "); chmod 600 it")
            }
            // Not kept in a variable of its own: `bytes` is then the only owner of the buffer, and
            // the newline is dropped in place rather than from a copy.
            bytes = try Self.keyBytes(Self.readAll(descriptor), label: label)
            Self.dropFinalNewline(&bytes)
        case .standardInput:
            bytes = try Self.keyBytes(Self.readStandardInput(prompt: raw ? "raw key (64 hex digits)" : "passphrase"),
                                      label: label)
            Self.dropFinalNewline(&bytes)
        }
        defer { for index in bytes.indices { bytes[index] = 0 } }
        guard !bytes.isEmpty else { throw failure("\(label): the key is empty") }
        // The key's bytes are copied once more, into the key's own zeroed-on-release memory; every
        // buffer of the doctor's that held them (the file's or standard input's data, `bytes`, the
        // decoded raw key) is zeroed here rather than freed with the key in it.
        guard raw else {
            return bytes.withUnsafeMutableBytes { buffer in
                guard let base = buffer.baseAddress else { return .passphrase(Data()) }
                return .passphrase(Data(bytesNoCopy: base, count: buffer.count, deallocator: .none))
            }
        }
        var key = try Self.rawKey(bytes, option: label)
        defer { key.resetBytes(in: 0..<key.count) }
        return .rawKey(key)
    }

    /// 64 hex digits (surrounding whitespace ignored, SQLCipher's `x'...'` form accepted) as 32 bytes.
    static func rawKey(_ bytes: [UInt8], option: String) throws(UsageError) -> Data {
        try hexBytes(bytes, count: 32, option: option,
                     what: "a raw key is 64 hex digits (32 bytes, as `openssl rand -hex 32` prints them)")
    }

    /// `2 * count` hex digits (surrounding whitespace ignored, SQLCipher's `x'...'` form accepted)
    /// as `count` bytes; `what` says what was expected, for the error. Every copy of the digits'
    /// values is zeroed: a raw key's are secret.
    static func hexBytes(_ bytes: [UInt8], count: Int, option: String, what: String) throws(UsageError) -> Data {
        var digits = ArraySlice(bytes)
        while let first = digits.first, first == 0x20 || (0x09...0x0D).contains(first) { digits.removeFirst() }
        while let last = digits.last, last == 0x20 || (0x09...0x0D).contains(last) { digits.removeLast() }
        if digits.count >= 3, digits.first == UInt8(ascii: "x") || digits.first == UInt8(ascii: "X"),
           digits.dropFirst().first == UInt8(ascii: "'"), digits.last == UInt8(ascii: "'") {
            digits = digits.dropFirst(2).dropLast()
        }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var values = digits.compactMap(value)
        defer { for index in values.indices { values[index] = 0 } }
        guard digits.count == 2 * count, values.count == 2 * count else {
            throw UsageError(message: "\(option): \(what), but this one has \(digits.count) characters"
                + (values.count == digits.count ? "" : ", not all hex digits"), command: .verify)
        }
        var result = Data(count: count)
        for index in 0..<count { result[index] = values[2 * index] << 4 | values[2 * index + 1] }
        return result
    }

    /// Removes one final `\n` or `\r\n`: what `echo` and editors add to a key file.
    static func dropFinalNewline(_ bytes: inout [UInt8]) {
        if bytes.last == 0x0A {
            bytes.removeLast()
            if bytes.last == 0x0D { bytes.removeLast() }
        }
    }

    /// The most bytes a key source is read for: far more than any passphrase or key file holds,
    /// and a bound on what a source that never ends makes the doctor read. `--key-stdin < /dev/zero`,
    /// `--key-file` naming a large (or sparse) file by mistake, or a pipe from a program that keeps
    /// writing were read whole into memory: the doctor grew until the system killed it, or ran
    /// forever, and never said why.
    static let maximumKeyBytes = 1 << 20

    /// What reading a key source gave.
    enum ReadOutcome {
        case bytes([UInt8])
        /// More than ``maximumKeyBytes``: no key.
        case tooLong
        /// `read(2)` failed with this `errno`.
        case failed(Int32)
    }

    /// Everything `descriptor` gives up to its end, read into one buffer that is zeroed before it
    /// is freed (a growing array would free copies of the key uncleared); ``ReadOutcome/tooLong``
    /// as soon as more than ``maximumKeyBytes`` arrive, without reading further.
    static func readAll(_ descriptor: Int32) -> ReadOutcome {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: maximumKeyBytes + 1, alignment: 1)
        defer {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
        }
        var count = 0
        while count < buffer.count {
            let got = readSome(descriptor, buffer.baseAddress! + count, buffer.count - count)
            if got < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if got == 0 { break }
            count += got
        }
        if count > maximumKeyBytes { return .tooLong }
        return .bytes([UInt8](UnsafeRawBufferPointer(rebasing: buffer[..<count])))
    }

    /// The bytes of `outcome`, or the usage error that says why the source holds no key.
    static func keyBytes(_ outcome: ReadOutcome, label: String) throws(UsageError) -> [UInt8] {
        switch outcome {
        case .bytes(let bytes):
            return bytes
        case .tooLong:
            throw UsageError(
                message: "\(label): it gives more than \(maximumKeyBytes / (1 << 20)) MiB, and no key "
                    + "is that long: give a file (or standard input) that holds only the key, not a device, a large file "
                    + "or a program that keeps writing",
                command: .verify)
        case .failed(let code):
            throw UsageError(message: "\(label): reading the key failed (\(String(cString: strerror(code))))",
                             command: .verify)
        }
    }

    /// All of standard input (at most ``maximumKeyBytes``); from a terminal, one line read with
    /// echo off after a prompt on standard error.
    static func readStandardInput(prompt: String) -> ReadOutcome {
        guard isatty(STDIN_FILENO) == 1 else { return readAll(STDIN_FILENO) }
        FileHandle.standardError.write(Data("sqlcipher-doctor: \(prompt) (not echoed): ".utf8))
        var saved = termios()
        let hasTerminal = tcgetattr(STDIN_FILENO, &saved) == 0
        if hasTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        }
        defer {
            if hasTerminal { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
            FileHandle.standardError.write(Data("\n".utf8))
        }
        var line: [UInt8] = []
        line.reserveCapacity(4096)   // no regrowth, which would free a copy of the key uncleared
        var byte: UInt8 = 0
        while readOneByte(STDIN_FILENO, &byte) == 1 && byte != 0x0A {
            guard line.count < maximumKeyBytes else {
                for index in line.indices { line[index] = 0 }
                return .tooLong
            }
            line.append(byte)
        }
        return .bytes(line)
    }
}

/// One byte from a file descriptor: libc's `read`, which `KeySource.read(warn:)` hides inside the type.
private func readOneByte(_ descriptor: Int32, _ byte: inout UInt8) -> Int {
    read(descriptor, &byte, 1)
}

/// Up to `count` bytes from a file descriptor into `buffer`: libc's `read`, hidden by `KeySource.read(warn:)` there.
private func readSome(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
