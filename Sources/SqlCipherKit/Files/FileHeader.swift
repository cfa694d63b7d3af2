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

    /// Up to the first 100 bytes of the file.
    let bytes: [UInt8]
    /// The file's size in bytes.
    let fileSize: Int

    /// Reads the header of `path`, or nil when the file does not exist or cannot be read.
    init?(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 100),
              let size = try? handle.seekToEnd() else {
            if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
               let size = attributes[.size] as? Int, size == 0 {
                self.bytes = []
                self.fileSize = 0
                return
            }
            return nil
        }
        self.bytes = [UInt8](data)
        self.fileSize = Int(size)
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

    /// A plain SQLite file: readable header and no reserved space for a cipher.
    var looksPlaintextSQLite: Bool { hasPlaintextMagic && reservedBytes == 0 }

    /// A SQLCipher file that keeps its SQLite header readable.
    var looksPlaintextHeaderSQLCipher: Bool { hasPlaintextMagic && (reservedBytes ?? 0) > 0 }
}
