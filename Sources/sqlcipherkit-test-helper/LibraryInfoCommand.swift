import Foundation
import SqlCipherKit

/// Loads the library the way `Database` does (`SqlCipherLibrary.shared`: `SQLCIPHERKIT_LIBRARY`,
/// else discovery) and prints one JSON line: `{"outcome": "loaded", "path": ...}` or the error's
/// case and fields. Exit 0 when it loaded.
let libraryInfoCommand = HelperCommand(
    name: "library-info", usage: "library-info: loads SqlCipherLibrary.shared and prints its path as JSON"
) { _ in
    do {
        let library = try SqlCipherLibrary.shared
        reportJSON(["outcome": "loaded", "path": library.path, "cipher_version": library.cipherVersion,
                    "exit_protection": library.exitProtection.rawValue])
        return 0
    } catch {
        reportJSON(loadErrorFields(error).merging(["outcome": "error"]) { $1 })
        return 1
    }
}
