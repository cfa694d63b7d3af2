import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place where the package copies a database's files to read them elsewhere (the private
/// copy that `sqlcipher-doctor verify` opens): bytes are copied, never links; only regular files
/// are read; every file is created new in a private folder; a `-wal` is copied only as far as its
/// header and frames are valid.
///
/// Why each rule (<doc:Security>, "Which files a call reads and writes"):
/// - A copied symbolic link would point back at the original, and SQLite, opening the copy
///   read-write, would recover the WAL or truncate a `-wal` there: the original must only be read.
/// - Opening a named pipe for reading waits for a writer forever, and a device or socket is no
///   database file; they are refused with a typed error, after an `open` with `O_NONBLOCK` that
///   cannot wait and an `fstat` of what was opened (no window between check and use).
/// - A `-wal` is as long as its largest transaction ever made it; SQLite reads only the frames
///   whose salts match the header's and stops at the first that does not. A sparse `-wal` of a
///   terabyte costs nothing on disk but would fill the temporary folder if copied whole.
enum SnapshotFiles {
    /// What a companion file is, as far as the copy is concerned.
    struct Source {
        /// The path read.
        let path: String
        /// The file's size.
        let size: Int
        /// How many bytes of it are copied: the whole file, or the valid part of a `-wal`.
        let copyLength: Int
    }

    /// `path` with its symbolic links resolved (the file SQLite itself opens, and beside which it
    /// looks for the `-wal` and `-journal`), or `path` unchanged when it cannot be resolved.
    static func resolvedPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The kind of a non-regular file, for a message; nil for a regular or missing file.
    ///
    /// The package's one test of "is this a regular file": the opener's checks of a path and its
    /// companions, the read-only open's look at the `-wal` and `-journal`, the inspector and the
    /// copies here all ask it, so that a named pipe, socket or device is named the same way
    /// everywhere.
    static func specialKind(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return specialKind(mode: info.st_mode)
    }

    /// The size of the regular file at `path`; nil when there is none or it is not a regular file.
    static func regularFileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, specialKind(mode: info.st_mode) == nil else { return nil }
        return Int(info.st_size)
    }

    /// How many names (hard links) the regular file at `path` has, following a symbolic link (as
    /// `lstat` does not) or, with `following` false, not; 1 for anything else, or nothing. The
    /// package's one count of a file's names: the openings, `ATTACH`, and the in-place conversions
    /// refuse a file or companion with more than theirs.
    static func nameCount(_ path: String, following: Bool = true) -> Int {
        var info = stat()
        guard (following ? stat(path, &info) : lstat(path, &info)) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return 1 }
        return Int(info.st_nlink)
    }

    /// ``specialKind(_:)`` for the mode of a file already examined (`stat` or `fstat`).
    static func specialKind(mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFIFO: return "a named pipe (FIFO)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFDIR: return "a directory"
        default: return "not a regular file"
        }
    }

    /// The error for a database file or companion that is not a regular file.
    static func notRegular(_ path: String, database: String, kind: String) -> SqlCipherError {
        .cannotOpen(path: database, reason: "\(path) is \(kind), not a regular file; SQLite would block on it or "
            + "misread it. Remove it (a database's -wal and -journal are always regular files) or verify a copy "
            + "of the database made without it")
    }

    /// Opens `path` for reading without following it into a wait: `O_NONBLOCK` (a named pipe
    /// opens at once), then `fstat` of the descriptor; returns nil when the file does not exist.
    /// The caller gives the descriptor back with ``OpenFiles/release(_:)``, never `close`: this
    /// process's connections may have the file open, and a close would drop their locks.
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` for anything but a regular file.
    static func openRegular(_ path: String, database: String) throws -> (descriptor: Int32, size: Int)? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw SqlCipherError.cannotOpen(path: database, reason: "\(path) cannot be read: "
                + String(cString: strerror(errno)))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            OpenFiles.release(descriptor)
            throw SqlCipherError.cannotOpen(path: database, reason: "\(path) cannot be examined: \(reason)")
        }
        if let kind = specialKind(mode: info.st_mode) {
            OpenFiles.release(descriptor)
            throw notRegular(path, database: database, kind: kind)
        }
        return (descriptor, Int(info.st_size))
    }

    /// How many bytes of a `-wal` SQLite would read: the 32-byte header and the frames after it
    /// whose salts match the header's, up to the first that does not (https://sqlite.org/fileformat2.html#the_write_ahead_log).
    /// 0 when the header is not a valid WAL header, which SQLite ignores as it would an empty file.
    static func validWALLength(descriptor: Int32, size: Int) -> Int {
        guard size >= 32, let header = readBytes(descriptor, offset: 0, count: 32) else { return 0 }
        let magic = uint32(header, 0)
        let pageSize = uint32(header, 8)
        guard magic == 0x377F_0682 || magic == 0x377F_0683, uint32(header, 4) == 3_007_000,
              pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return 0 }
        let salts = header[16..<24]
        let frame = 24 + pageSize
        var length = 32
        while length + frame <= size {
            guard let frameHeader = readBytes(descriptor, offset: length, count: 24),
                  frameHeader[8..<16].elementsEqual(salts), uint32(frameHeader, 0) != 0 else { break }
            length += frame
        }
        return length
    }

    /// Makes a new folder under the temporary directory that only this user can enter.
    static func makePrivateDirectory(prefix: String, for database: String) throws -> String {
        let base = NSTemporaryDirectory()
        var template = Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast())
            + Array((prefix + "-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw SqlCipherError.cannotOpen(path: database, reason: "cannot create a private folder in \(base): "
                + String(cString: strerror(errno)))
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Checks the database and its `-wal` and `-journal` (nil entries are missing files) and says
    /// how much of each a copy takes. Nothing is read beyond the `-wal` headers.
    /// - Throws: ``SqlCipherError/cannotOpen(path:reason:)`` when one is not a regular file.
    static func sources(of database: String) throws -> [String: Source] {
        var found: [String: Source] = [:]
        for suffix in ["", "-wal", "-journal"] {
            let path = database + suffix
            guard let (descriptor, size) = try openRegular(path, database: database) else { continue }
            defer { OpenFiles.release(descriptor) }
            let length = suffix == "-wal" ? validWALLength(descriptor: descriptor, size: size) : size
            found[suffix] = Source(path: path, size: size, copyLength: length)
        }
        return found
    }

    /// Copies the database and its `-wal` and `-journal` into `directory` under the database's
    /// file name: each file's bytes (a `-wal` only as far as it is valid), into files created new
    /// (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600).
    static func copy(_ database: String, into directory: String) throws {
        let name = DatabasePath.lastComponent(of: database)
        for (suffix, source) in try sources(of: database) where source.copyLength > 0 || suffix == "" {
            try copyBytes(source.path, to: directory + "/" + name + suffix, length: source.copyLength, database: database)
        }
    }

    /// Copies the bytes of the regular file `source` (a symbolic link is read through, never
    /// copied as a link) into a new file `target`, created with mode 0600: the copy a conversion
    /// works on beside the original (``Database/upgradeFromSqlCipher3(path:key:progress:)``).
    static func copyFile(_ source: String, to target: String) throws {
        guard let (descriptor, size) = try openRegular(source, database: source) else {
            throw SqlCipherError.cannotOpen(path: source, reason: "there is no file there")
        }
        OpenFiles.release(descriptor)
        try copyBytes(source, to: target, length: size, database: source)
    }

    /// Copies the first `length` bytes of `source` into a new file `target`.
    private static func copyBytes(_ source: String, to target: String, length: Int, database: String) throws {
        guard let (input, _) = try openRegular(source, database: database) else {
            throw SqlCipherError.cannotOpen(path: database, reason: "\(source) disappeared while it was copied")
        }
        defer { OpenFiles.release(input) }
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard output >= 0 else {
            throw SqlCipherError.cannotOpen(path: database, reason: "cannot create \(target): " + String(cString: strerror(errno)))
        }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var copied = 0
        while copied < length {
            let wanted = min(buffer.count, length - copied)
            let got = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress, wanted, off_t(copied)) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                if got == 0 { break }
                throw SqlCipherError.cannotOpen(path: database, reason: "reading \(source) failed: " + String(cString: strerror(errno)))
            }
            var written = 0
            while written < got {
                let result = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, got - written) }
                if result < 0 && errno == EINTR { continue }
                guard result > 0 else {
                    throw SqlCipherError.cannotOpen(path: database, reason: "writing \(target) failed: "
                        + String(cString: strerror(errno)))
                }
                written += result
            }
            copied += got
        }
    }

    private static func readBytes(_ descriptor: Int32, offset: Int, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return got == count ? bytes : nil
    }

    private static func uint32(_ bytes: [UInt8], _ offset: Int) -> Int {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
    }
}
