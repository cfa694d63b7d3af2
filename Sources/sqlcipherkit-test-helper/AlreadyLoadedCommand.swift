import Foundation
import SqlCipherKit
#if canImport(Glibc)
import Glibc
#endif

/// The "libsqlcipher already loaded without isolation" scenario: in this process, which links
/// libsqlite3, libsqlcipher is first opened with dlopen(RTLD_NOW | RTLD_LOCAL) and no DEEPBIND,
/// as another library or plug-in might do. Its own sqlite3_* references then bind to libsqlite3,
/// and the bridge must refuse it (bindingConflict) without running any SQL on it. Prints one JSON
/// line; exit 0 when both the load and a Database open were refused with bindingConflict.
let alreadyLoadedCommand = HelperCommand(
    name: "already-loaded",
    usage: "already-loaded LIBRARY DIR: dlopen LIBRARY without isolation first, then ask SqlCipherKit for it"
) { arguments in
    guard arguments.count == 2 else { throw LinkingHelperError("usage: already-loaded LIBRARY DIR") }
    let path = arguments[0], databasePath = arguments[1] + "/refused.db"
    var facts: [String: Any] = ["libsqlite3_version": PlainSQLite.version]

    guard dlopen(path, RTLD_NOW | RTLD_LOCAL) != nil else {
        throw LinkingHelperError("dlopen(\(path)) failed: \(String(cString: dlerror()))")
    }
    do {
        let library = try SqlCipherLibrary.load(from: path)
        facts["load"] = ["case": "loaded", "cipher_version": library.cipherVersion]
    } catch {
        facts["load"] = loadErrorFields(error)
    }
    do {
        _ = try Database(path: databasePath, rawKey: Data(repeating: 7, count: 32))
        facts["database"] = ["case": "opened"]
    } catch {
        facts["database"] = loadErrorFields(error)
    }
    facts["database_file_created"] = FileManager.default.fileExists(atPath: databasePath)
    facts["libsqlite3_still_works"] = (try? PlainSQLite.run(":memory:", "SELECT 6 * 7").first?.first) == "42"
    reportJSON(facts)
    let refused = { (value: Any?) in ((value as? [String: Any])?["case"] as? String) == "bindingConflict" }
    return refused(facts["load"]) && refused(facts["database"]) ? 0 : 1
}
