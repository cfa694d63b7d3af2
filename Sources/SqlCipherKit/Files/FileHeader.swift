import Foundation

/// The first bytes of a database file (the 100-byte header and the rest of page 1), read without
/// a key and without SQLite: the one classification of "plain SQLite or SQLCipher with a plaintext
/// header" that the inspector, the opener, the conversions and the pool's salt reader share.
///
/// A SQLite file starts with the 16 bytes `SQLite format 3\0` (https://sqlite.org/fileformat2.html).
/// A SQLCipher file starts with its 16-byte random salt instead, unless it was made with a
/// plaintext header, in which case the SQLite header is readable and its reserved-space byte
/// (offset 20) is non-zero to hold the IV and HMAC.
struct FileHeader {
    /// The magic string of a plaintext SQLite header.
    static let sqliteMagic: [UInt8] = Array("SQLite format 3".utf8) + [0]

    /// The size of SQLite's database header.
    static let length = 100

    /// The most bytes of page 1 ever read: SQLite's largest page size.
    static let maximumPageLength = 65536

    /// Up to the first 100 bytes of the file.
    let bytes: [UInt8]
    /// Page 1 as far as it was read: the whole page (by the header's page size, at most 64 KiB)
    /// when the header is readable and the file is long enough, else what was given.
    let pageOne: [UInt8]
    /// The file's size in bytes.
    let fileSize: Int
    /// The byte right after the header (offset 100): on page 1 of a plain SQLite file, the b-tree
    /// page type of the schema table. Nil when the file is shorter.
    let firstPageType: UInt8?
    /// Whether page 1 was proven to be plain SQLite past the header (see ``hasPlainSQLiteLayout``),
    /// worked out once when the header is made if its pages reserve bytes: the only headers for
    /// which ``looksPlaintextSQLite`` and ``looksPlaintextHeaderSQLCipher`` ask. Nil otherwise, and
    /// worked out when asked (the proof, an entropy of up to 512 bytes, was a tenth of an
    /// unencrypted open's instructions; docs/performance.md, "Opening").
    private var pageOneIsPlain: Bool?

    /// Reads the header and page 1 of `path`, or nil when the file does not exist or cannot be read.
    /// The read goes through ``OpenFiles``, so that it leaves the locks of this process's
    /// connections to the file in place.
    init?(path: String) {
        guard let read = OpenFiles.withReadDescriptor(path, { descriptor, size in
            Self.readPageOne(descriptor).map { (bytes: $0, size: size) }
        }), let read else { return nil }
        self.init(bytes: read.bytes, fileSize: read.size)
    }

    /// Reads the first 101 bytes of an open file and, when they start a readable header with a
    /// valid page size, the rest of page 1 (at most 64 KiB): the one way page 1 is read for
    /// classifying a file, by ``init(path:)`` and ``DatabaseFileInspector``. Positional reads:
    /// the descriptor may be shared (``OpenFiles``).
    static func readPageOne(_ descriptor: Int32) -> [UInt8]? {
        // One read of the most common page size first (SQLCipher 4's and SQLite's default), so
        // that an opening reads page 1 with one call and one buffer; what lies past page 1, or
        // past the header when it is not readable, is dropped again.
        guard var bytes = OpenFiles.read(descriptor, offset: 0, count: firstRead) else { return nil }
        let probe = FileHeader(headerOnly: Array(bytes.prefix(length + 1)))
        guard probe.hasValidPageSize, let pageSize = probe.pageSize else {
            if bytes.count > length + 1 { bytes.removeSubrange((length + 1)...) }
            return bytes
        }
        let wanted = min(pageSize, maximumPageLength)
        if bytes.count > wanted {
            bytes.removeSubrange(wanted...)
        } else if bytes.count == firstRead && wanted > firstRead {
            guard let rest = OpenFiles.read(descriptor, offset: bytes.count, count: wanted - bytes.count) else { return nil }
            bytes += rest
        }
        return bytes
    }

    /// How many bytes ``readPageOne(_:)`` reads at first.
    private static let firstRead = 4096

    /// A header made of bytes already read from the start of the file: the first 100 are kept as
    /// ``bytes``, and up to one page (by the header's page size) as ``pageOne``.
    init(bytes: some Collection<UInt8>, fileSize: Int) {
        self.init(headerOnly: Array(bytes.prefix(Self.maximumPageLength)))
        self = FileHeader(bytes: self.bytes, pageOne: Array(bytes.prefix(self.pageLength)), fileSize: fileSize)
    }

    private init(headerOnly all: [UInt8]) {
        self.init(bytes: Array(all.prefix(Self.length)), pageOne: all, fileSize: all.count, classify: false)
    }

    private init(bytes: [UInt8], pageOne: [UInt8], fileSize: Int, classify: Bool = true) {
        self.bytes = bytes
        self.pageOne = pageOne
        self.fileSize = fileSize
        self.firstPageType = pageOne.count > Self.length ? pageOne[Self.length] : nil
        if !classify {
            pageOneIsPlain = false
        } else if (reservedBytes ?? 0) > 0 {
            pageOneIsPlain = PageOneReader(self).isPlainSQLite
        }
    }

    /// How many bytes of the file make page 1: the header's page size when valid (at most 64 KiB),
    /// else the header and the byte after it.
    private var pageLength: Int {
        hasValidPageSize ? min(pageSize ?? Self.length + 1, Self.maximumPageLength) : Self.length + 1
    }

    /// Whether the file starts with `SQLite format 3\0`.
    var hasPlaintextMagic: Bool {
        bytes.count >= 16 && Array(bytes[0..<16]) == Self.sqliteMagic
    }

    /// The reserved bytes per page (offset 20), when the header is readable.
    var reservedBytes: Int? {
        hasPlaintextMagic && bytes.count > 20 ? Int(bytes[20]) : nil
    }

    /// The page size from a readable header (offsets 16-17; 1 means 65536).
    var pageSize: Int? {
        guard hasPlaintextMagic, bytes.count > 17 else { return nil }
        let raw = Int(bytes[16]) << 8 | Int(bytes[17])
        return raw == 1 ? 65536 : raw
    }

    /// Whether page 1 is proven plain SQLite past the 100-byte header: payload fractions 64/32/32,
    /// the 20 expansion bytes zero, a valid table b-tree page header at offset 100 (leaf 13 or
    /// interior 5, cell count and offsets inside the usable page), every cell a `sqlite_schema`
    /// record (leaf) or a child pointer inside the file (interior), and the end of the usable page
    /// not random-looking.
    ///
    /// SQLCipher's plaintext header keeps the first N bytes of page 1 readable and encrypts the
    /// rest. N of 100 or more leaves the b-tree header and even the cell pointers readable, so the
    /// first byte after the header proves nothing; the cells, which SQLite writes at the end of
    /// the page, and the bytes there are ciphertext in such a file and SQL text or zeros in a plain
    /// one. This tells SQLCipher's files from plain SQLite files whose pages reserve bytes for
    /// something else (a checksum VFS, `SQLITE_FCNTL_RESERVE_BYTES`).
    var hasPlainSQLiteLayout: Bool { pageOneIsPlain ?? PageOneReader(self).isPlainSQLite }

    /// A plain SQLite file: readable header, and either no reserved space per page or a plain
    /// SQLite layout past the header (reserved bytes that are not SQLCipher's).
    var looksPlaintextSQLite: Bool {
        hasPlaintextMagic && (reservedBytes == 0 || hasPlainSQLiteLayout)
    }

    /// A SQLCipher file that keeps its SQLite header readable: bytes reserved per page (for the IV
    /// and HMAC) and the rest of the header or page 1 not plain SQLite. The one rule that
    /// ``DatabaseFileInspector`` and the opener share.
    var looksPlaintextHeaderSQLCipher: Bool {
        hasPlaintextMagic && (reservedBytes ?? 0) > 0 && !hasPlainSQLiteLayout
    }

    // MARK: Fields used by DatabaseFileInspector

    /// Whether ``pageSize`` is one SQLite accepts: a power of two from 512 to 65536.
    var hasValidPageSize: Bool {
        guard let size = pageSize else { return false }
        return size >= 512 && size <= 65536 && size & (size - 1) == 0
    }

    /// The file format write and read versions (offsets 18 and 19): 1 legacy (rollback), 2 WAL.
    var formatVersions: (write: UInt8, read: UInt8)? {
        guard hasPlaintextMagic, bytes.count > 19 else { return nil }
        return (bytes[18], bytes[19])
    }

    /// The journal mode bytes 18-19 stand for; nil when unreadable or not 1/1 or 2/2.
    var journalMode: JournalMode? {
        switch formatVersions.map({ ($0.write, $0.read) }) {
        case (1, 1)?: return .rollback
        case (2, 2)?: return .wal
        default: return nil
        }
    }

    /// Whether the payload fractions (offsets 21-23) hold the only values SQLite allows: 64, 32, 32.
    var hasValidPayloadFractions: Bool {
        hasPlaintextMagic && bytes.count > 23 && bytes[21] == 64 && bytes[22] == 32 && bytes[23] == 32
    }

    /// The big-endian 32-bit number at `offset` of a readable header.
    func uint32(at offset: Int) -> Int? {
        guard hasPlaintextMagic, bytes.count >= offset + 4 else { return nil }
        return bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// The database size in pages (offset 28), only when SQLite's own validity rule holds: the
    /// change counter (offset 24) equals the version-valid-for number (offset 92) and it is non-zero.
    var headerPageCount: Int? {
        guard let count = uint32(at: 28), count > 0, uint32(at: 24) == uint32(at: 92) else { return nil }
        return count
    }

    /// The text encoding (offset 56): 1 UTF-8, 2 UTF-16le, 3 UTF-16be; nil when unreadable or unset.
    var textEncoding: String? {
        switch uint32(at: 56) {
        case 1?: return "UTF-8"
        case 2?: return "UTF-16le"
        case 3?: return "UTF-16be"
        default: return nil
        }
    }

    /// The SQLite version number that last wrote the file (offset 96), e.g. 3040001.
    var writerVersionNumber: Int? { uint32(at: 96) }

    /// Whether the 20 bytes SQLite reserves for expansion (offsets 72-91) are zero, as SQLite
    /// always writes them. Encrypted bytes there mean only a short prefix of the header is plaintext.
    var expansionBytesAreZero: Bool {
        hasPlaintextMagic && bytes.count >= 92 && bytes[72..<92].allSatisfy { $0 == 0 }
    }
}

/// Reads page 1 of a file with a readable header as SQLite's b-tree format says it is laid out
/// (https://sqlite.org/fileformat2.html#b_tree_pages) and decides whether it is plain SQLite: the
/// one proof behind ``FileHeader/hasPlainSQLiteLayout``.
private struct PageOneReader {
    let page: [UInt8]
    let pageSize: Int
    let usable: Int
    let pageCount: Int
    let header: FileHeader

    init(_ header: FileHeader) {
        self.header = header
        page = header.pageOne
        pageSize = header.pageSize ?? 0
        usable = pageSize - (header.reservedBytes ?? 0)
        pageCount = pageSize > 0 ? max(1, header.fileSize / pageSize) : 0
    }

    var isPlainSQLite: Bool {
        guard header.hasPlaintextMagic, header.hasValidPageSize, header.hasValidPayloadFractions,
              header.expansionBytesAreZero, usable >= 480 else { return false }
        guard let cells = cellPointers() else { return false }
        let leaf = page[100] == 13
        for pointer in cells {
            guard leaf ? isSchemaRecord(at: pointer) : isChildPointer(at: pointer) else { return false }
        }
        if !leaf && !isChildPage(uint32(108)) { return false }
        return !tailLooksRandom(after: 100 + (leaf ? 8 : 12) + 2 * cells.count)
    }

    /// The cell pointers of a valid b-tree page header at offset 100, or nil.
    private func cellPointers() -> [Int]? {
        guard page.count > 112, page[100] == 13 || page[100] == 5 else { return nil }
        let headerLength = page[100] == 13 ? 8 : 12
        let freeblock = uint16(101)
        let count = uint16(103)
        let rawStart = uint16(105)
        let contentStart = rawStart == 0 ? 65536 : rawStart
        let pointersEnd = 100 + headerLength + 2 * count
        guard pointersEnd <= usable, pointersEnd <= page.count, page[107] <= 60,
              freeblock == 0 || (freeblock >= pointersEnd && freeblock + 4 <= usable),
              contentStart >= pointersEnd, contentStart <= usable || (count == 0 && rawStart == 0)
        else { return nil }
        var pointers: [Int] = []
        for index in 0..<count {
            let pointer = uint16(100 + headerLength + 2 * index)
            guard pointer >= contentStart, pointer < usable else { return nil }
            pointers.append(pointer)
        }
        return pointers
    }

    /// A leaf cell of `sqlite_schema`: payload size, rowid, then a record whose first column is
    /// the text `table`, `index`, `view` or `trigger`.
    private func isSchemaRecord(at offset: Int) -> Bool {
        var position = offset
        guard let payload = varint(&position), payload > 0, varint(&position) != nil else { return false }
        let recordStart = position
        guard let headerSize = varint(&position), headerSize >= 2, headerSize <= payload,
              let firstType = varint(&position), firstType >= 13, firstType % 2 == 1 else { return false }
        let length = (firstType - 13) / 2
        let textStart = recordStart + headerSize
        guard (5...7).contains(length), textStart + length <= min(usable, page.count) else { return false }
        let text = String(decoding: page[textStart..<(textStart + length)], as: UTF8.self)
        return ["table", "index", "view", "trigger"].contains(text)
    }

    /// An interior cell: a child page number inside the file, then a rowid.
    private func isChildPointer(at offset: Int) -> Bool {
        guard offset + 4 <= page.count else { return false }
        var position = offset + 4
        return isChildPage(uint32(offset)) && varint(&position) != nil
    }

    private func isChildPage(_ number: Int) -> Bool { number >= 2 && number <= pageCount }

    /// Whether the last bytes of the usable page (up to 512, after the cell pointers) look like
    /// ciphertext: their entropy is that of random bytes, which SQL text and zeros never reach.
    private func tailLooksRandom(after pointersEnd: Int) -> Bool {
        let end = min(usable, page.count)
        let start = max(pointersEnd, end - 512)
        guard end - start >= 64 else { return false }
        let window = Array(page[start..<end])
        // A random sample of n bytes measures about 8 - 255 / (2 n ln 2) bits per byte.
        let expected = 8 - 255 / (2 * Double(window.count) * log(2))
        return DatabaseFileInspector.entropy(window) > expected - 0.6
    }

    private func uint16(_ offset: Int) -> Int { Int(page[offset]) << 8 | Int(page[offset + 1]) }

    private func uint32(_ offset: Int) -> Int {
        guard offset + 4 <= page.count else { return 0 }
        return page[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// SQLite's variable-length integer (1 to 9 bytes), or nil when it runs past the usable page.
    private func varint(_ position: inout Int) -> Int? {
        var value = 0
        for index in 0..<9 {
            guard position < min(usable, page.count) else { return nil }
            let byte = Int(page[position])
            position += 1
            if index == 8 { return value &<< 8 | byte }
            value = value &<< 7 | (byte & 0x7F)
            if byte & 0x80 == 0 { return value }
        }
        return value
    }
}
