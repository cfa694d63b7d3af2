import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells what a file is without a key and without SQLite: missing, empty, plaintext SQLite,
/// SQLCipher with a plaintext header, encrypted, or not a database (with the reason).
///
/// ```swift
/// let report = DatabaseFileInspector.inspect("/data/store.db")
/// print(report.kind.rawValue, "-", report.detail)
/// // encrypted - no readable header; 61440 bytes = 15 pages of 4096 bytes (SQLCipher 4's default) ...
/// ```
///
/// The inspector only reads: it opens the file read-only, reads the header (the first 100 bytes,
/// https://sqlite.org/fileformat2.html#the_database_header), page 1 and up to three samples of 16 KiB,
/// and never writes, locks or truncates anything. It never opens the file with SQLite, which
/// could replay a hot journal or checkpoint a `-wal` into it.
///
/// How it decides, in order:
/// - no file: ``DatabaseFileInspection/Kind/missing``; zero bytes: ``DatabaseFileInspection/Kind/empty``;
/// - `SQLite format 3\0` with a valid header: ``DatabaseFileInspection/Kind/plaintext`` (page size,
///   journal mode from bytes 18-19), unless bytes are reserved per page (byte 20) and page 1 past
///   the header is not proven plain SQLite (its schema cells do not parse, or the end of the page
///   is random-looking), which is how SQLCipher's plaintext header looks, however many bytes it
///   keeps readable: ``DatabaseFileInspection/Kind/plaintextHeader``;
/// - a SQLite `-wal` or `-journal` file, a known non-database format, a size that no page size
///   (512 to 65536) divides, or content that is not random-looking: ``DatabaseFileInspection/Kind/notADatabase``;
/// - otherwise ``DatabaseFileInspection/Kind/encrypted``: SQLCipher output is indistinguishable
///   from random bytes, so only the key can prove it is a database.
public enum DatabaseFileInspector {
    /// The smallest entropy, in bits per byte, of a sample that counts as random-looking.
    /// Random 512-byte samples measure about 7.6 and 16 KiB samples about 7.99; text is below 5.
    static let randomEntropyThreshold = 7.0

    /// The size of each content sample.
    static let sampleSize = 16 * 1024

    /// Inspects the file at `path`. Never throws: an unreadable file is reported as such.
    public static func inspect(_ path: String) -> DatabaseFileInspection {
        // C reads a path only up to a NUL: the file found would be another one's.
        guard !path.utf8.contains(0) else {
            return make(path, .notADatabase, "cannot be examined: " + DatabasePath.nulReason + " (C reads a path only up to "
                + "it, which names another file)", size: nil)
        }
        if let masked = DatabasePath.keyURI(path) {
            return make(masked, .notADatabase, "cannot be examined: " + DatabasePath.keyURIReason, size: nil)
        }
        // Beside the file a symbolic link leads to, where SQLite (and every opening of the
        // package, which resolves the path first) keeps the -wal and -journal.
        let companions = companionFiles(of: SnapshotFiles.resolvedPath(path))
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR {
                let leftovers = companions.isEmpty ? "" : ", but " + companions.map { "\($0.suffix) (\($0.size) bytes)" }
                    .joined(separator: ", ") + " of a database by that name exist: the database file itself was "
                    + "moved or deleted without them"
                if let target = danglingLinkTarget(path) {
                    // Not "nothing here": an opening follows the link and creates a new, empty
                    // database where it points, which is rarely what a dangling link meant.
                    return make(path, .missing, "a symbolic link to \(target), where there is no file (a dangling link)"
                        + "\(leftovers); opening the path would create a new database there. Point the link at the "
                        + "database file, or remove it", size: nil, companions: companions)
                }
                return make(path, .missing, "no file at this path\(leftovers)", size: nil, companions: companions)
            }
            return make(path, .notADatabase, "cannot be examined (\(String(cString: strerror(code)))), so it cannot be "
                + "identified; check the path and its permissions", size: nil)
        }
        let size = Int(info.st_size)
        if let kind = SnapshotFiles.specialKind(mode: info.st_mode) {
            let advice = kind == "a directory" ? "give the path of a database file inside it" : "give the path of a database file"
            return make(path, .notADatabase, "it is \(kind), not a regular file; \(advice)", size: nil)
        }
        if size == 0 {
            return make(path, .empty, "0 bytes: SQLite and SQLCipher treat it as a new, empty database"
                + companionSentence(companions), size: 0, companions: companions)
        }
        // Through OpenFiles: an inspection must not take the locks of this process's connections.
        let inspected = OpenFiles.withReadDescriptor(path) { descriptor, _ -> DatabaseFileInspection in
            guard let first = OpenFiles.read(descriptor, offset: 0, count: min(size, sampleSize)) else {
                return make(path, .notADatabase, "reading it failed, so it cannot be identified", size: size,
                            companions: companions)
            }
            // Page 1 whole, not only its first 100 bytes: a plaintext header may reach past them.
            let header = FileHeader(bytes: FileHeader.readPageOne(descriptor) ?? first, fileSize: size)
            if header.hasPlaintextMagic {
                return inspectReadableHeader(path, header: header, companions: companions)
            }
            return inspectUnreadableHeader(path, descriptor: descriptor, first: first, size: size, companions: companions)
        }
        guard var inspected else {
            return make(path, .notADatabase, "cannot be read (\(String(cString: strerror(errno)))), so it cannot be "
                + "identified; run as a user who can read it", size: size, companions: companions)
        }
        if info.st_nlink > 1 {
            // What every writable opening refuses (DatabaseOpener.refuseOtherNames), said up front.
            inspected = make(path, inspected.kind, inspected.detail + "; the file has \(info.st_nlink) names (hard links), so "
                + "SqlCipherKit opens it only with readOnly: true (each name would get its own -wal and -journal)",
                size: inspected.size, pageSize: inspected.pageSize, journal: inspected.journalMode,
                reserved: inspected.reservedBytes, pageCount: inspected.pageCount, assumedPageSize: inspected.assumedPageSize,
                ambiguous: inspected.pageCountIsAmbiguous, companions: inspected.companionFiles)
        }
        return inspected
    }

    // MARK: Files that start with "SQLite format 3\0"

    private static func inspectReadableHeader(_ path: String, header: FileHeader,
                                              companions: [DatabaseFileInspection.CompanionFile]) -> DatabaseFileInspection {
        let size = header.fileSize
        guard size >= FileHeader.length else {
            return make(path, .notADatabase, "it starts with the SQLite header but has only \(size) bytes, fewer than the "
                + "100-byte header", size: size, companions: companions)
        }
        guard header.hasValidPageSize, let pageSize = header.pageSize else {
            let raw = Int(header.bytes[16]) << 8 | Int(header.bytes[17])
            return make(path, .notADatabase, "it starts with the SQLite header but its page size field (\(raw)) is not a "
                + "power of two from 512 to 65536", size: size, companions: companions)
        }
        let reserved = header.reservedBytes ?? 0
        let journal = header.journalMode
        let journalText = journalDescription(header)
        if header.looksPlaintextHeaderSQLCipher {
            var facts = ["page size \(pageSize)", "journal mode \(journalText)"]
            facts.append(pageArithmetic(size: size, pageSize: pageSize))
            let detail = "SQLCipher database with a plaintext header (byte 20 reserves \(reserved) bytes per page for the "
                + "IV and HMAC, and the rest of the first page is ciphertext): \(facts.joined(separator: ", ")). "
                + "Opening it needs the key, its salt (not stored in the file) and the same "
                + "cipher_plaintext_header_size" + companionSentence(companions)
            return make(path, .plaintextHeader, detail, size: size, pageSize: pageSize, journal: journal,
                         reserved: reserved, pageCount: nil, companions: companions)
        }
        guard header.hasValidPayloadFractions else {
            return make(path, .notADatabase, "it starts with the SQLite header but its payload fractions (bytes 21-23) are "
                + "not 64/32/32, which every SQLite database has", size: size, companions: companions)
        }
        var facts = ["page size \(pageSize)", "journal mode \(journalText)"]
        let pageCount = header.headerPageCount
        if let pageCount { facts.append(pages(pageCount)) }
        if let encoding = header.textEncoding { facts.append("text encoding \(encoding)") }
        if let version = header.writerVersionNumber, version >= 3_000_000, version < 4_000_000 {
            facts.append("last written by SQLite \(version / 1_000_000).\(version / 1000 % 1000).\(version % 1000)")
        }
        if reserved > 0 {
            facts.append("\(reserved) bytes reserved per page by something other than SQLCipher (the whole header and "
                + "first page are readable)")
        }
        var detail = "plaintext SQLite database, not encrypted: \(facts.joined(separator: ", "))"
        if size % pageSize != 0 {
            detail += ". Its size (\(size) bytes) is not a whole number of pages: it may be truncated or damaged"
        } else if let pageCount, pageCount * pageSize > size {
            detail += ". The header counts \(pageCount) pages but the file holds \(size / pageSize): it may be truncated"
        }
        return make(path, .plaintext, detail + companionSentence(companions), size: size, pageSize: pageSize,
                     journal: journal, reserved: reserved, pageCount: pageCount, companions: companions)
    }

    private static func journalDescription(_ header: FileHeader) -> String {
        switch header.journalMode {
        case .wal?: return "wal (header bytes 18-19 = 2)"
        case .rollback?: return "rollback (header bytes 18-19 = 1)"
        case nil:
            let versions = header.formatVersions
            return "unknown (header bytes 18-19 = \(versions?.write ?? 0)/\(versions?.read ?? 0))"
        }
    }

    // MARK: Files without a readable header

    private static func inspectUnreadableHeader(_ path: String, descriptor: Int32, first: [UInt8], size: Int,
                                                companions: [DatabaseFileInspection.CompanionFile]) -> DatabaseFileInspection {
        if let format = sqliteSideFileDescription(first, size: size, path: path) {
            return make(path, .notADatabase, format, size: size, companions: companions)
        }
        if let format = knownFormat(first) {
            return make(path, .notADatabase, "it is \(format), not a database", size: size, companions: companions)
        }
        if size < 512 || size % 512 != 0 {
            return make(path, .notADatabase, "it has no SQLite header and its size (\(size) bytes) is not a multiple of any "
                + "page size (512 to 65536 bytes), as every SQLCipher database's is", size: size, companions: companions)
        }
        var samples = [first]
        if size > sampleSize {
            let middle = (size / 2) / 512 * 512
            let last = max(0, size - sampleSize)
            for offset in [middle, last] where offset >= sampleSize {
                if let sample = OpenFiles.read(descriptor, offset: offset, count: min(sampleSize, size - offset)) { samples.append(sample) }
            }
        }
        if first.allSatisfy({ $0 == 0 }) {
            return make(path, .notADatabase, "it has no SQLite header and its content is all zero bytes (a preallocated or "
                + "wiped file)", size: size, companions: companions)
        }
        let entropies = samples.map(entropy)
        let lowest = entropies.min() ?? 0
        if lowest < randomEntropyThreshold {
            let text = isMostlyText(first) ? ", and it looks like text" : ""
            return make(path, .notADatabase, "it has no SQLite header and its content is not random-looking "
                + "(\(format(lowest)) bits of entropy per byte; SQLCipher output measures about 8)\(text)",
                size: size, companions: companions)
        }
        let walPage = companions.first(where: { $0.suffix == "-wal" }).flatMap { walPageSize(of: $0.path) }
        var detail = "no readable header; \(size) bytes of random-looking content (\(format(lowest)) bits per byte), a whole "
            + "number of pages: \(pageSizeReading(size: size, walPageSize: walPage)). Consistent with a SQLCipher "
            + "database; only the right key can confirm it (other random data looks the same)"
        if walPage != nil { detail += ". The -wal beside it means it is in WAL mode" }
        let estimate = estimatedPageCount(size: size, walPageSize: walPage)
        return make(path, .encrypted, detail + companionSentence(companions), size: size, pageSize: walPage,
                     journal: walPage != nil ? .wal : nil, reserved: nil, pageCount: estimate?.count,
                     assumedPageSize: estimate?.pageSize, ambiguous: estimate?.ambiguous ?? false, companions: companions)
    }

    /// What the size says about the page size, in the terms of SQLCipher's defaults.
    private static func pageSizeReading(size: Int, walPageSize: Int?) -> String {
        if let walPageSize {
            return size % walPageSize == 0
                ? "\(pages(size / walPageSize)) of \(walPageSize) bytes (the page size in the -wal's header)"
                : "not a whole number of \(walPageSize)-byte pages (the page size in the -wal's header): it may be truncated"
        }
        var readings: [String] = []
        if size % 4096 == 0 { readings.append("\(pages(size / 4096)) of 4096 bytes (SQLCipher 4's default)") }
        if size % 1024 == 0 { readings.append("\(pages(size / 1024)) of 1024 bytes (SQLCipher 3's default)") }
        if readings.isEmpty {
            return "\(pages(size / 512)) of 512 bytes; not a multiple of 1024 or 4096, so with either default page size "
                + "it would be truncated"
        }
        var text = readings.joined(separator: " or ")
        if size % 4096 != 0 { text += "; not a multiple of 4096, so not a complete SQLCipher 4 file with default settings" }
        return text
    }

    /// Recognizes SQLite's own `-wal` and `-journal` files, whose headers stay plaintext in SQLCipher too.
    private static func sqliteSideFileDescription(_ bytes: [UInt8], size: Int, path: String) -> String? {
        guard bytes.count >= 28 else { return nil }
        let magic = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
        if (magic == 0x377F_0682 || magic == 0x377F_0683) && bytes.count >= 32 {
            let pageSize = bytes[8..<12].reduce(0) { $0 << 8 | Int($1) }
            let frames = pageSize > 0 ? (size - 32) / (24 + pageSize) : 0
            let database = path.hasSuffix("-wal") ? String(path.dropLast(4)) : "the database file beside it"
            return "it is a SQLite write-ahead log (-wal) with page size \(pageSize) and \(frames) frame\(frames == 1 ? "" : "s"), not a database. "
                + "It belongs to \(database): inspect that file, and keep the two together"
        }
        if bytes[0..<8].elementsEqual([0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]) {
            let pageSize = bytes[24..<28].reduce(0) { $0 << 8 | Int($1) }
            let database = path.hasSuffix("-journal") ? String(path.dropLast(8)) : "the database file beside it"
            return "it is a SQLite rollback journal (-journal, page size \(pageSize)), not a database. It belongs to "
                + "\(database); SQLite replays it when that database is next opened, so keep the two together"
        }
        return nil
    }

    /// Names a few common non-database formats by their magic bytes (at least 24 bits of them, so
    /// random SQLCipher salts match by chance at most once in 16 million files).
    private static func knownFormat(_ bytes: [UInt8]) -> String? {
        let signatures: [([UInt8], String)] = [
            ([0x1F, 0x8B, 0x08], "a gzip archive"),
            ([0x50, 0x4B, 0x03, 0x04], "a zip archive"),
            ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], "an xz archive"),
            ([0x28, 0xB5, 0x2F, 0xFD], "a zstd archive"),
            ([0x42, 0x5A, 0x68], "a bzip2 archive"),
            ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], "a 7z archive"),
            ([0x7F, 0x45, 0x4C, 0x46], "an ELF executable or library"),
            ([0x89, 0x50, 0x4E, 0x47], "a PNG image"),
            ([0xFF, 0xD8, 0xFF], "a JPEG image"),
            (Array("%PDF".utf8), "a PDF document"),
        ]
        return signatures.first { bytes.starts(with: $0.0) }?.1
    }

    /// The page size recorded in a `-wal` header, or nil.
    private static func walPageSize(of path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let bytes = read(handle, offset: 0, count: 12), bytes.count == 12 else { return nil }
        let magic = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard magic == 0x377F_0682 || magic == 0x377F_0683 else { return nil }
        let size = bytes[8..<12].reduce(0) { $0 << 8 | Int($1) }
        return size >= 512 && size <= 65536 && size & (size - 1) == 0 ? size : nil
    }

    // MARK: Helpers

    private static func pageArithmetic(size: Int, pageSize: Int) -> String {
        size % pageSize == 0
            ? pages(size / pageSize)
            : "\(size) bytes, not a whole number of pages (it may be truncated)"
    }

    /// "1 page", "15 pages".
    static func pages(_ count: Int) -> String {
        "\(count) page\(count == 1 ? "" : "s")"
    }

    /// The page count of an encrypted file, whose header is ciphertext, from its size: with the
    /// `-wal`'s page size when there is one, else SQLCipher 4's default (4096) when it fits, else
    /// SQLCipher 3's (1024). Ambiguous when the page size is not known from a `-wal` and a multiple
    /// of 4096 is also a multiple of 1024.
    static func estimatedPageCount(size: Int, walPageSize: Int?) -> (pageSize: Int, count: Int, ambiguous: Bool)? {
        if let walPageSize {
            return size % walPageSize == 0 ? (walPageSize, size / walPageSize, false) : nil
        }
        if size % 4096 == 0 { return (4096, size / 4096, true) }
        if size % 1024 == 0 { return (1024, size / 1024, false) }
        return nil
    }

    private static func companionFiles(of path: String) -> [DatabaseFileInspection.CompanionFile] {
        ["-wal", "-shm", "-journal"].compactMap { suffix in
            let companion = path + suffix
            guard let size = SnapshotFiles.regularFileSize(companion) else { return nil }
            return DatabaseFileInspection.CompanionFile(suffix: suffix, path: companion, size: size)
        }
    }

    /// What the symbolic link at `path` points to (its text, as `ls -l` shows it) when `path` is
    /// a link; nil for anything else.
    private static func danglingLinkTarget(_ path: String) -> String? {
        var link = stat()
        guard lstat(path, &link) == 0, (link.st_mode & S_IFMT) == S_IFLNK else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length >= 0 else { return "an unreadable target" }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The companions beside the file, and which of them SQLite did not write (``ForeignCompanion``:
    /// a database named like one, say), which were called the file's own: SQLite deletes or
    /// overwrites such a file when a program opens or writes the database. A `-shm` is read only
    /// when no connection of this process has the file open (its WAL locks are on it).
    private static func companionSentence(_ companions: [DatabaseFileInspection.CompanionFile]) -> String {
        guard !companions.isEmpty else { return "" }
        var own: [String] = []
        var foreign: [String] = []
        for companion in companions {
            let database = String(companion.path.dropLast(companion.suffix.count))
            if let what = ForeignCompanion.description(of: database, suffix: companion.suffix,
                                                       readsShm: !OpenFiles.hasConnections(to: database)) {
                foreign.append("\(companion.suffix) (\(companion.size) bytes) is \(what)")
            } else {
                own.append("\(companion.suffix) (\(companion.size) bytes)")
            }
        }
        var sentence = own.isEmpty ? "" : ". Beside it: \(own.joined(separator: ", ")); they belong to it, keep them together"
        if !foreign.isEmpty {
            sentence += ". Beside it, its " + foreign.joined(separator: "; its ") + ": SQLite takes such a file for the "
                + "database's own and deletes or overwrites it when a program opens or writes the database. Move it out "
                + "of the way (rename a database of its own to a name without that ending)"
        }
        return sentence
    }

    private static func read(_ handle: FileHandle, offset: Int, count: Int) -> [UInt8]? {
        guard count > 0 else { return [] }
        do {
            try handle.seek(toOffset: UInt64(offset))
            return [UInt8](try handle.read(upToCount: count) ?? Data())
        } catch {
            return nil
        }
    }

    /// Shannon entropy of the bytes, in bits per byte.
    static func entropy(_ bytes: [UInt8]) -> Double {
        guard !bytes.isEmpty else { return 0 }
        var counts = [Int](repeating: 0, count: 256)
        for byte in bytes { counts[Int(byte)] += 1 }
        let total = Double(bytes.count)
        return counts.reduce(0.0) { sum, count in
            guard count > 0 else { return sum }
            let p = Double(count) / total
            return sum - p * log2(p)
        }
    }

    private static func isMostlyText(_ bytes: [UInt8]) -> Bool {
        let printable = bytes.filter { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }.count
        return !bytes.isEmpty && Double(printable) / Double(bytes.count) >= 0.95
    }

    private static func format(_ value: Double) -> String {
        String(format: "%.2f", value)
    }

    private static func make(_ path: String, _ kind: DatabaseFileInspection.Kind, _ detail: String, size: Int?,
                             pageSize: Int? = nil, journal: JournalMode? = nil, reserved: Int? = nil,
                             pageCount: Int? = nil, assumedPageSize: Int? = nil, ambiguous: Bool = false,
                             companions: [DatabaseFileInspection.CompanionFile] = []) -> DatabaseFileInspection {
        DatabaseFileInspection(path: path, kind: kind, detail: detail, size: size, pageSize: pageSize,
                               journalMode: journal, reservedBytes: reserved, pageCount: pageCount,
                               assumedPageSize: assumedPageSize, pageCountIsAmbiguous: ambiguous,
                               companionFiles: companions)
    }
}
