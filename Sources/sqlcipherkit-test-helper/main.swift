// A small program the test suite runs as a child process: for linking scenarios (it links the
// plaintext libsqlite3 on purpose), crash tests (the parent kills it with SIGKILL) and anything
// else that must happen in a process of its own. Usage: sqlcipherkit-test-helper COMMAND [ARGS...]
//
// Each command lives in its own file as a `HelperCommand` and is listed in `helperCommands`.
// Exit codes: 0 success, 1 the scenario failed as expected by the caller to check, 2 usage.
import Foundation

/// Every command, by name. Add a new command in its own file and list it here.
let helperCommands: [HelperCommand] = [
    pingCommand,
    foreignWriterPauseCommand,
    openDatabaseCommand,
    relativePathsCommand,
    encryptInPlaceCommand,
    rekeyLoopCommand,
    crashWriterCommand,
    faultRunCommand,
    leakWatchCommand,
    hostileCaseCommand,
    reliabilityReportCommand,
    loadLibraryCommand,
    libraryInfoCommand,
    linkedSQLite3Command,
    alreadyLoadedCommand,
    createDatabaseCommand,
    createRaceCommand,
    nestedLocksCommand,
    backupPauseCommand,
    holdLockCommand,
    exportPauseCommand,
    exitWhileReadingCommand,
    migrateRunCommand,
    upgradeV3Command,
    poolReadCommand,
    encryptCopyCommand,
    backupRunCommand,
    exitDuringCommand,
    importPlaintextCommand,
    changeDirectoryCommand,
    rekeyWithoutDescriptorsCommand,
    openWithoutDescriptorsCommand,
    attachLiteralNameCommand,
    liveQueryWithoutDescriptorsCommand,
    poolReadFaultCommand,
    migrateHoldCommand,
    writeOnceCommand,
]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let command = helperCommands.first(where: { $0.name == name }) else {
    FileHandle.standardError.write(Data(("usage: sqlcipherkit-test-helper COMMAND [ARGS...]\ncommands:\n"
        + helperCommands.map { "  " + $0.usage }.joined(separator: "\n") + "\n").utf8))
    exit(2)
}
do {
    exit(try command.run(Array(arguments.dropFirst())))
} catch {
    report("error: \(String(describing: error))")
    exit(1)
}
