import Foundation

/// What a file and its `-wal` say, without a key, about the page size it was made with: the one
/// cipher setting an encrypted file gives away. A key that does not open page 1 is the same
/// failure whatever setting differs, so the error for it listed every setting; when the file says
/// its page size is another than the settings tried, the error names that page size instead.
enum PageSizeEvidence {
    /// The page sizes the file at `path` can have been made with, largest first, when `tried` is
    /// not one of them, and what shows it; nil when nothing contradicts `tried`.
    ///
    /// Three facts count: a `-wal` or live `-journal` beside the file whose header (plaintext in
    /// SQLCipher too) records another page size (that one page size), and a file size that is not a whole number of
    /// `tried`-byte pages (every SQLCipher file is whole pages): its pages are then smaller, one of
    /// the page sizes from 1024 up to the largest that divides the size.
    static func likelyPageSizes(of path: String, tried: Int) -> (pageSizes: [Int], evidence: String)? {
        if let wal = walPageSize(path + "-wal"), wal != tried {
            return ([wal], "its -wal's header records \(wal)-byte pages, and the settings tried give \(tried)-byte pages, "
                + "so it was made with a page size of \(wal)")
        }
        // A hot -journal's header is plaintext too (the openings refuse one of another page size
        // by it before SQLite rolls it back; sqlcipher-doctor verify reads the file beside it).
        if let journal = ReadOnlyOpening.liveJournalPageSize(path + "-journal"), journal != tried {
            return ([journal], "its -journal's header records \(journal)-byte pages, and the settings tried give "
                + "\(tried)-byte pages, so it was made with a page size of \(journal)")
        }
        guard let size = SnapshotFiles.regularFileSize(path), size > 0, size % tried != 0 else { return nil }
        let sizes = [65536, 32768, 16384, 8192, 4096, 2048, 1024].filter { $0 < tried && size % $0 == 0 }
        guard !sizes.isEmpty else { return nil }
        return (sizes, "its size (\(size) bytes) is not a whole number of the \(tried)-byte pages the settings tried "
            + "give, so it was made with smaller pages: " + sizes.map { "\($0)" }.joined(separator: " or ") + " bytes")
    }

    /// The page size in the header of the `-wal` at `path`, when it has a valid one.
    static func walPageSize(_ path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let bytes = [UInt8]((try? handle.read(upToCount: 12)) ?? Data())
        guard bytes.count == 12 else { return nil }
        let magic = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard magic == 0x377F_0682 || magic == 0x377F_0683 else { return nil }
        let size = bytes[8..<12].reduce(0) { $0 << 8 | Int($1) }
        return size >= 512 && size <= 65536 && size & (size - 1) == 0 ? size : nil
    }
}
