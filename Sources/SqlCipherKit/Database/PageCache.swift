extension Database {
    /// The page cache each connection gets, in KiB: 8 MiB, four times SQLite's own default
    /// (`PRAGMA cache_size = -8192`, applied when the database opens).
    ///
    /// SQLCipher decrypts a page every time SQLite reads it from the file, and a page SQLite finds
    /// in its cache costs nothing. With SQLite's default, a table of a few megabytes read twice
    /// is decrypted twice; with a cache that holds it, once. The cache fills only as pages are
    /// read, so a small database never uses more than its size, and the memory is freed when the
    /// database closes. 8 MiB keeps a working set of that size decrypted once per connection
    /// while bounding what several connections (a pool's readers) can hold. Measured figures and
    /// guidance are in `docs/performance.md`.
    ///
    /// To give every connection of a database or pool another size, set
    /// ``DatabaseConfiguration/pageCacheKiB`` when it opens:
    ///
    /// ```swift
    /// var configuration = DatabaseConfiguration()
    /// configuration.pageCacheKiB = 64 * 1024   // 64 MiB, for a working set that large
    /// let pool = try DatabasePool(path: path, key: passphrase, configuration: configuration)
    /// ```
    public static let defaultPageCacheKiB = 8_192
}
