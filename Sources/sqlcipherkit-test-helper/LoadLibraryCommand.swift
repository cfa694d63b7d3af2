import Foundation
import SqlCipherKit

/// Loads each path in turn with `SqlCipherLibrary.load(from:)` and prints one JSON line per path:
/// `{"outcome": "loaded", ...}` or `{"outcome": "error", "case": ..., fields...}`. Exit 0 when all loaded.
let loadLibraryCommand = HelperCommand(
    name: "load-library", usage: "load-library PATH...: loads each path in turn and prints the outcome as JSON"
) { arguments in
    guard !arguments.isEmpty else { throw LinkingHelperError("load-library needs at least one PATH") }
    var failures = 0
    for path in arguments {
        do {
            let library = try SqlCipherLibrary.load(from: path)
            reportJSON([
                "outcome": "loaded", "requested": path, "path": library.path, "cipher_version": library.cipherVersion,
                "checked": library.bindingAudit.checked, "already_loaded": library.wasAlreadyLoaded,
                "checked_sqlite3": library.bindingAudit.sqlite3Checked,
                "checked_sqlcipher": library.bindingAudit.sqlcipherChecked,
                "checked_other": library.bindingAudit.otherChecked,
                "other_libraries": library.otherSQLiteLibraries.map(\.path),
            ])
        } catch {
            failures += 1
            reportJSON(loadErrorFields(error).merging(["outcome": "error", "requested": path]) { $1 })
        }
    }
    return failures == 0 ? 0 : 1
}
