import Foundation

/// One command of the helper. Commands are globals in files other than main.swift, so Swift
/// initializes them lazily, on first use.
struct HelperCommand: Sendable {
    let name: String
    let usage: String
    let run: @Sendable ([String]) throws -> Int32
}

/// Prints one line to standard output at once (unbuffered), so a parent that kills this process
/// still has every line printed before the kill.
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Answers `pong`: proves the helper runs.
let pingCommand = HelperCommand(name: "ping", usage: "ping: prints pong") { _ in
    report("pong")
    return 0
}
