import CSqlCipherBridge

extension SqlCipherLibrary {
    /// The SQLite libraries mapped into this process right now, other than the one SqlCipherKit
    /// loaded (all of them when none is loaded yet, or when loading failed).
    ///
    /// Unlike ``otherSQLiteLibraries`` this needs no loaded library, so a diagnosis can show what
    /// else is in the process after a refused load, e.g. the libsqlite3 behind a binding conflict.
    ///
    /// ```swift
    /// for other in SqlCipherLibrary.sqliteLibrariesInProcess {
    ///     print(other.path, other.version)   // /lib/x86_64-linux-gnu/libsqlite3.so.0 3.40.1
    /// }
    /// ```
    package static var sqliteLibrariesInProcess: [OtherSQLiteLibrary] {
        var result: [OtherSQLiteLibrary] = []
        var path = [CChar](repeating: 0, count: 4096)
        var version = [CChar](repeating: 0, count: 128)
        var index: Int32 = 0
        while scb_other_sqlite_library(index, &path, path.count, &version, version.count) != 0 {
            result.append(OtherSQLiteLibrary(path: string(path), version: string(version)))
            index += 1
        }
        return result
    }

    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
