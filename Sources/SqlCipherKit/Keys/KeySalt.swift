import Foundation

/// The salt to derive a file's key with, found the way SQLCipher finds it, without a key and
/// without SQLite.
///
/// SQLCipher derives the key from the passphrase and a 16-byte salt: the first 16 bytes of the
/// database file, or, for a new file, random bytes that it then writes there. A key derived once
/// from the same salt and keyed as `x'<key><salt>'` reads and writes the same file
/// (KeyDerivation.swift). Files with a plaintext header keep SQLite's header there instead, so
/// their salt must come from the caller.
enum KeySalt {
    /// Where a salt came from.
    enum Origin: Sendable, Equatable {
        /// The first 16 bytes of the database file.
        case databaseFile
        /// The first 16 bytes of page 1's newest committed image in the `-wal` file: the database
        /// file is shorter than a page (a crash before the first checkpoint).
        case walFrame
        /// Random bytes for a new (missing or empty) file.
        case fresh
        /// Given by the caller (files with a plaintext header).
        case given
    }

    /// What ``lookup(path:settings:pageSize:given:)`` found.
    enum Lookup: Equatable {
        /// The salt to derive with.
        case salt(Data, Origin)
        /// No salt can be told without SQLCipher: key each connection with the passphrase instead,
        /// and let SQLCipher (and the opener's checks) judge the file.
        case fallback(reason: String)
    }

    /// The salt length of every SQLCipher version.
    static let length = 16

    /// The salt to key `path` with under `settings`.
    ///
    /// - `settings.plaintextHeaderSize` above 0: the file does not store the salt; `given` is
    ///   returned, and without it the call throws.
    /// - A missing or empty file: a fresh random salt, or `given`. (SQLite deletes the `-wal` of an
    ///   empty database file when it opens it, measured with both libraries, so nothing else can be
    ///   in it.)
    /// - A file at least a page long (`pageSize`, the cipher page size SQLCipher reports for the
    ///   settings): its first 16 bytes.
    /// - A shorter file: page 1's newest committed image in the `-wal`, or a fallback.
    ///
    /// - Throws: ``SqlCipherError/keyFailed(path:reason:)`` for a plaintext SQLite file, for a
    ///   file with a plaintext header opened without ``CipherSettings/plaintextHeaderSize``, for a
    ///   plaintext header without a salt, and when `given` differs from the salt the file stores;
    ///   ``SqlCipherError/invalidQuery(reason:)`` when `given` is not 16 bytes.
    static func lookup(path: String, settings: CipherSettings, pageSize: Int, given: Data? = nil) throws -> Lookup {
        if let given, given.count != length {
            throw SqlCipherError.invalidQuery(reason: "a salt must be exactly \(length) bytes, not \(given.count)")
        }
        if path.isEmpty || path == ":memory:" || path.hasPrefix("file:") {
            return .fallback(reason: "\(path.isEmpty ? "an empty path" : path) names no database file to read a salt from")
        }
        var info = stat()
        let exists = stat(path, &info) == 0
        if (settings.plaintextHeaderSize ?? 0) > 0 {
            guard let given else { throw plaintextHeaderWithoutSalt(path: path, exists: exists && info.st_size > 0) }
            return .salt(given, .given)
        }
        guard exists, info.st_size > 0 else {
            // An empty file whose -wal holds a committed page 1: another connection created the
            // database and has not checkpointed yet (a creation by this package checkpoints before
            // it releases the creation lock; an older one, or a crash, may not have). Its salt,
            // not a fresh one: a fresh salt would key this pool for a file that is not there.
            if exists, let stored = committedPageOneSalt(walPath: path + "-wal") {
                if let given, given != stored {
                    throw SqlCipherError.keyFailed(
                        path: path,
                        reason: "the salt given differs from the one the database's -wal holds in page 1; leave the "
                            + "salt out for files without a plaintext header")
                }
                return .salt(stored, .walFrame)
            }
            return .salt(given ?? fresh(), given == nil ? .fresh : .given)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            return .fallback(reason: "\(path) is not a regular file")
        }
        guard let header = FileHeader(path: path) else {
            return .fallback(reason: "\(path) cannot be read")
        }
        if header.looksPlaintextSQLite {
            throw SqlCipherError.keyFailed(
                path: path,
                reason: "it is a plaintext SQLite database. Open it with Database(unencryptedPath:), or make an "
                    + "encrypted copy with Database.encrypt(plaintextAt:to:key:)")
        }
        if header.looksPlaintextHeaderSQLCipher {
            throw SqlCipherError.keyFailed(path: path, reason: plaintextHeaderWithoutSetting)
        }
        let stored: Data
        let origin: Origin
        if header.fileSize >= pageSize && header.bytes.count >= length && !header.hasPlaintextMagic {
            stored = Data(header.bytes.prefix(length))
            origin = .databaseFile
        } else if let salt = committedPageOneSalt(walPath: path + "-wal") {
            stored = salt
            origin = .walFrame
        } else {
            return .fallback(
                reason: "\(path) is \(header.fileSize) bytes, shorter than one \(pageSize)-byte page, and its -wal "
                    + "holds no committed image of page 1, so the salt SQLCipher would use cannot be told")
        }
        if let given, given != stored {
            throw SqlCipherError.keyFailed(path: path, reason: givenSaltDiffers)
        }
        return .salt(stored, origin)
    }

    /// The error for an opening refused as `keyFailed` with a key that named a salt (`given`): when
    /// the file has no plaintext header and stores another salt in its first 16 bytes, that is
    /// said, rather than the generic "the key is wrong (or, for a plaintext header, the salt)" of a
    /// user whose passphrase or key is right. Any other error is returned as it is. Asked only
    /// after a refusal: an opening that succeeds reads nothing more.
    static func explainingRefusal(_ error: any Error, given: Data?, settings: CipherSettings) -> any Error {
        guard case SqlCipherError.keyFailed(let path, _) = error, let given, (settings.plaintextHeaderSize ?? 0) == 0,
              let header = FileHeader(path: path), header.fileSize >= 1024, header.bytes.count >= length,
              !header.hasPlaintextMagic, Data(header.bytes.prefix(length)) != given else { return error }
        return SqlCipherError.keyFailed(path: path, reason: givenSaltDiffers)
    }

    /// Why a file with a plaintext header, opened without ``CipherSettings/plaintextHeaderSize``,
    /// is refused: the one wording of the opener and of the pool's salt lookup.
    static let plaintextHeaderWithoutSetting = "it is a SQLCipher database with a plaintext header. Open it with "
        + "Database(path:key:cipher:), key: .passphrase(passphrase, salt: salt) or .rawKey(key, salt: salt) with the "
        + "salt kept when it was created, and cipher: CipherSettings(plaintextHeaderSize:) with its header size"

    /// Why a key with a salt does not open a file that stores another salt.
    static let givenSaltDiffers = "the salt given differs from the file's first \(length) bytes, where a file without "
        + "a plaintext header stores its salt; leave the salt out for such files (.passphrase(passphrase) or "
        + ".rawKey(key)): SQLCipher reads the salt from the file"

    /// 16 bytes from the system's random number generator.
    static func fresh() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    private static func plaintextHeaderWithoutSalt(path: String, exists: Bool) -> SqlCipherError {
        let why = exists
            ? "with a plaintext header (CipherSettings.plaintextHeaderSize) the file's first bytes hold SQLite's "
                + "header, not the key-derivation salt, so a passphrase alone does not give its key. Open it with "
                + "Database(path:key:cipher:) with key: .passphrase(passphrase, salt: salt) or .rawKey(key, salt: salt) and the salt kept when it was created (PRAGMA cipher_salt)"
            : "with a plaintext header (CipherSettings.plaintextHeaderSize) the key-derivation salt is not stored in "
                + "the file, so a file created from a passphrase alone could not be opened with it again. Create it "
                + "with Database(path:key:cipher:) with key: .passphrase(passphrase, salt: salt) or .rawKey(key, salt: salt) and keep the salt"
        return SqlCipherError.keyFailed(path: path, reason: why)
    }

    // MARK: The -wal file (https://sqlite.org/fileformat2.html#walformat)

    /// The WAL header and frame header lengths.
    static let walHeaderLength = 32
    static let walFrameHeaderLength = 24

    /// The first 16 bytes of page 1's newest image in a committed transaction of the `-wal` at
    /// `walPath`, or nil when there is none. Reads frames as SQLite's recovery does: from the
    /// header on, while each frame carries the header's salts and continues the checksum chain;
    /// frames after the last commit frame are not part of the database.
    static func committedPageOneSalt(walPath: String) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: walPath) else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: walHeaderLength), header.count == walHeaderLength else {
            return nil
        }
        let bytes = [UInt8](header)
        let magic = bigEndian(bytes, 0)
        guard magic == 0x377F_0682 || magic == 0x377F_0683, bigEndian(bytes, 4) == 3_007_000 else { return nil }
        let pageSize = Int(bigEndian(bytes, 8))
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return nil }
        let bigEndianChecksum = magic & 1 == 1
        var sums = walChecksum(bytes[0..<24], bigEndian: bigEndianChecksum, (0, 0))
        guard sums == (bigEndian(bytes, 24), bigEndian(bytes, 28)) else { return nil }
        let salts = Array(bytes[16..<24])

        var newestPageOne: Data?
        var committedPageOne: Data?
        let frameLength = walFrameHeaderLength + pageSize
        while let frame = try? handle.read(upToCount: frameLength), frame.count == frameLength {
            let frameBytes = [UInt8](frame)
            guard Array(frameBytes[8..<16]) == salts else { break }
            sums = walChecksum(frameBytes[0..<8], bigEndian: bigEndianChecksum, sums)
            sums = walChecksum(frameBytes[walFrameHeaderLength...], bigEndian: bigEndianChecksum, sums)
            guard sums == (bigEndian(frameBytes, 16), bigEndian(frameBytes, 20)) else { break }
            if bigEndian(frameBytes, 0) == 1 {
                newestPageOne = Data(frameBytes[walFrameHeaderLength..<(walFrameHeaderLength + length)])
            }
            if bigEndian(frameBytes, 4) != 0 { committedPageOne = newestPageOne }
        }
        return committedPageOne
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// SQLite's WAL checksum (walChecksumBytes): 32-bit words in the byte order the magic number
    /// names, two running sums.
    static func walChecksum(_ data: ArraySlice<UInt8>, bigEndian: Bool, _ start: (UInt32, UInt32)) -> (UInt32, UInt32) {
        var (s1, s2) = start
        var index = data.startIndex
        func word(_ at: Int) -> UInt32 {
            let b = (UInt32(data[at]), UInt32(data[at + 1]), UInt32(data[at + 2]), UInt32(data[at + 3]))
            return bigEndian ? b.0 << 24 | b.1 << 16 | b.2 << 8 | b.3 : b.3 << 24 | b.2 << 16 | b.1 << 8 | b.0
        }
        while index + 8 <= data.endIndex {
            s1 = s1 &+ word(index) &+ s2
            s2 = s2 &+ word(index + 4) &+ s1
            index += 8
        }
        return (s1, s2)
    }
}
