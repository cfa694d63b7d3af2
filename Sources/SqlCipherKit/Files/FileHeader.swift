import Foundation

/// The first bytes of a database file, read without a key and without SQLite.
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

    /// Up to the first 100 bytes of the file.
    let bytes: [UInt8]
    /// The file's size in bytes.
    let fileSize: Int
    /// The byte right after the header (offset 100): on page 1 of a plain SQLite file, the b-tree
    /// page type of the schema table. Nil when the file is shorter.
    let firstPageType: UInt8?

    /// Reads the header of `path`, or nil when the file does not exist or cannot be read.
    init?(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: Self.length + 1),
              let size = try? handle.seekToEnd() else {
            if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
               let size = attributes[.size] as? Int, size == 0 {
                self.init(bytes: [], fileSize: 0)
                return
            }
            return nil
        }
        self.init(bytes: [UInt8](data), fileSize: Int(clamping: size))
    }

    /// A header made of bytes already read (the first 100 are kept, and the page type after them).
    init(bytes: some Collection<UInt8>, fileSize: Int) {
        self.bytes = Array(bytes.prefix(Self.length))
        self.fileSize = fileSize
        self.firstPageType = bytes.dropFirst(Self.length).first
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

    /// Whether a readable header says WAL (file format bytes 18-19 are 2).
    var isWAL: Bool? {
        guard hasPlaintextMagic, bytes.count > 19 else { return nil }
        return bytes[18] == 2 && bytes[19] == 2
    }

    /// Whether everything after the magic reads as plain SQLite too: payload fractions 64/32/32,
    /// the 20 expansion bytes zero, and page 1 starting a table b-tree page (leaf 13 or interior 5).
    /// SQLCipher's plaintext header keeps only the first bytes readable (32 by default) and
    /// encrypts the rest of page 1, so this tells its files from plain SQLite files whose pages
    /// reserve bytes for something else (a checksum VFS, `SQLITE_FCNTL_RESERVE_BYTES`).
    var hasPlainSQLiteLayout: Bool {
        hasValidPayloadFractions && expansionBytesAreZero && (firstPageType == 13 || firstPageType == 5)
    }

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
