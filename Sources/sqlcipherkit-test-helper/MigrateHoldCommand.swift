import Foundation
import SqlCipherKit

/// Opens PATH (a `Database`, created if missing) and migrates it with a list of migrations named
/// by IDS (comma-separated; each creates the table `t_<id>` and drops it on the way down). The
/// migration HOLD_ID prints `holding HOLD_ID` inside its transaction, with the write lock held,
/// and goes on once GO_FILE exists (a handshake: the parent starts another process's migration
/// or rollback meanwhile, which reads the applied list and then waits for the lock). Prints
/// `done` at the end; a failure is printed as `error: …` by main.
let migrateHoldCommand = HelperCommand(
    name: "migrate-hold",
    usage: "migrate-hold PATH pass:<text>|raw:<hex> IDS HOLD_ID GO_FILE: migrates, holding the write lock inside HOLD_ID"
) { arguments in
    guard arguments.count == 5 else {
        throw DatabaseHelperError(message: "usage: migrate-hold PATH KEY IDS HOLD_ID GO_FILE")
    }
    let (path, ids, holdID, goFile) = (arguments[0], arguments[2], arguments[3], arguments[4])
    let key = try HelperKey(arguments[1]).requiredKey(by: "migrate-hold")
    let migrations: [any Migration] = ids.split(separator: ",").map { id in
        HoldingMigration(id: String(id), holds: id == holdID, goFile: goFile)
    }
    try waitForDatabaseWork {
        let db = try Database(path: path, key: key)
        try await db.migrate(migrations)
        await db.close()
    }
    report("done")
    return 0
}

/// A migration that creates (and on the way down drops) the table `t_<id>`; when `holds`, it
/// waits inside its transaction for the parent's GO_FILE.
struct HoldingMigration: Migration {
    let id: String
    let holds: Bool
    let goFile: String

    func up(_ ctx: MigrationContext) throws {
        try ctx.execute("CREATE TABLE \"t_\(id)\"(x)")
        guard holds else { return }
        report("holding \(id)")
        while !FileManager.default.fileExists(atPath: goFile) { usleep(1000) }
    }

    func down(_ ctx: MigrationContext) throws {
        try ctx.execute("DROP TABLE \"t_\(id)\"")
    }
}
