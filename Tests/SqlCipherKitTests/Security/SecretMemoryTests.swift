import Foundation
import Glibc
import Testing
@testable import SqlCipherKit

/// No passphrase and no derived key is left in the process's memory once the `Database` or the
/// pool that used it is closed, nor after a rekey replaced it: the test reads its own anonymous and
/// heap mappings through `/proc/self/mem` and counts the secret's bytes.
///
/// The secrets are random, and the test keeps its own copies where the scan does not count them:
/// the needles live in a mapping of their own that the scan skips, and the test's `String` and
/// `Data` arguments are cleared in place once the package has them. What is left to find is what
/// the package (or SQLCipher) kept.
@Suite(.serialized) struct SecretMemoryTests {
    @Test func aClosedDatabaseLeavesNoPassphraseOrKeyBehind() async throws {
        let scanner = try MemoryScanner()
        let dir = TemporaryDirectory()
        let path = dir.path("db.db")
        let first = scanner.randomNeedle(), second = scanner.randomNeedle()
        let third = scanner.randomNeedle()

        var key = String(decoding: first.bytes, as: UTF8.self)
        // The scan works: it finds the test's own copy.
        #expect(try scanner.isPresent(first), "\(scanner.lastScan)")
        let db = try Database(path: path, key: key, cipher: fastCipher)
        wipe(&key)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")

        var secondKey = String(decoding: second.bytes, as: UTF8.self)
        try await db.rekey(.passphrase(secondKey))
        wipe(&secondKey)
        var thirdKey = Data(third.bytes)
        try await db.rekey(.passphrase(thirdKey))
        thirdKey.resetBytes(in: 0..<thirdKey.count)
        #expect(try await db.query("SELECT x FROM t").first?.get(0, as: Int.self) == 1)
        await db.close()

        for (name, needle) in [("first (String, at open)", first), ("second (String, rekey)", second),
                               ("third (Data, rekey)", third)] {
            #expect(try scanner.count(needle) == 0, "the \(name) passphrase is still in memory after close")
        }
    }

    @Test func aClosedPoolLeavesNoPassphraseOrDerivedKeyBehind() async throws {
        let scanner = try MemoryScanner()
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        let first = scanner.randomNeedle(), second = scanner.randomNeedle()
        let third = scanner.randomNeedle()

        var key = String(decoding: first.bytes, as: UTF8.self)
        let pool = try DatabasePool(path: path, key: key, cipher: fastCipher)
        wipe(&key)
        _ = try await pool.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let firstKey = try scanner.derivedKeyNeedle(first, path: path)
        // The scan works: the pool keeps the derived key for readers opened later.
        #expect(try scanner.isPresent(firstKey.hex), "\(scanner.lastScan)")

        var secondKey = String(decoding: second.bytes, as: UTF8.self)
        try await pool.rekey(.passphrase(secondKey))
        wipe(&secondKey)
        let secondDerived = try scanner.derivedKeyNeedle(second, path: path)
        #expect(try scanner.isPresent(secondDerived.hex), "\(scanner.lastScan)")

        var thirdKey = Data(third.bytes)
        try await pool.rekey(.passphrase(thirdKey))
        thirdKey.resetBytes(in: 0..<thirdKey.count)
        let thirdDerived = try scanner.derivedKeyNeedle(third, path: path)
        #expect(try await pool.query("SELECT x FROM t").first?.get(0, as: Int.self) == 1)
        #expect(try scanner.isPresent(thirdDerived.hex), "\(scanner.lastScan)")
        #expect(try scanner.count(firstKey.hex) == 0, "a replaced derived key is still in memory")
        await pool.close()

        let secrets = [("first passphrase (String, at open)", first), ("second passphrase (String, rekey)", second),
                       ("third passphrase (Data, rekey)", third), ("first key text", firstKey.hex),
                       ("first key", firstKey.raw), ("second key text", secondDerived.hex),
                       ("second key", secondDerived.raw), ("third key text", thirdDerived.hex),
                       ("third key", thirdDerived.raw)]
        for (name, needle) in secrets {
            #expect(try scanner.count(needle) == 0, "the \(name) is still in memory after the pool closed")
        }
    }

    /// The conversions hand the target's passphrase to SQLite as a bound value of
    /// `ATTACH … KEY ?`, which SQLite copies into its own memory; once they return (and the source
    /// is closed), neither the passphrase nor its copy may be left in memory.
    @Test func conversionsLeaveNoTargetPassphraseBehind() async throws {
        let scanner = try MemoryScanner()
        let dir = TemporaryDirectory()
        let exported = scanner.randomNeedle(), encrypted = scanner.randomNeedle()

        let db = try Database(path: dir.path("source.db"), rawKey: rawKey(), cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        var exportKey = String(decoding: exported.bytes, as: UTF8.self)
        #expect(try scanner.isPresent(exported), "\(scanner.lastScan)")  // the scan sees the test's own copy
        try await db.export(to: dir.path("exported.db"), key: .passphrase(exportKey), cipher: fastCipher)
        wipe(&exportKey)
        await db.close()

        let plain = try Database(unencryptedPath: dir.path("plain.db"))
        try await plain.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        await plain.close()
        var encryptKey = String(decoding: encrypted.bytes, as: UTF8.self)
        try Database.encrypt(plaintextAt: dir.path("plain.db"), to: dir.path("encrypted.db"), key: .passphrase(encryptKey),
                             cipher: fastCipher)
        wipe(&encryptKey)

        #expect(try scanner.count(exported) == 0, "the export's passphrase is still in memory")
        #expect(try scanner.count(encrypted) == 0, "encrypt(plaintextAt:)'s passphrase is still in memory")
    }

    /// An opening that fails after the key was applied (the wrong key, a `Database` and a pool), a
    /// hot backup's key and `encryptInPlace`'s key leave nothing behind once the calls return.
    @Test func failedOpeningsBackupsAndInPlaceConversionsLeaveNoKeyBehind() async throws {
        let scanner = try MemoryScanner()
        let dir = TemporaryDirectory()
        let wrong = scanner.randomNeedle(), wrongPool = scanner.randomNeedle()
        let backup = scanner.randomNeedle(), inPlace = scanner.randomNeedle()

        let db = try Database(path: dir.path("db.db"), rawKey: rawKey(), cipher: fastCipher)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        var backupKey = String(decoding: backup.bytes, as: UTF8.self)
        #expect(try scanner.isPresent(backup), "\(scanner.lastScan)")
        try await db.backup(to: dir.path("backup.db"), key: .passphrase(backupKey))
        wipe(&backupKey)
        await db.close()

        var wrongKey = String(decoding: wrong.bytes, as: UTF8.self)
        #expect(throws: SqlCipherError.self) { _ = try Database(path: dir.path("db.db"), key: wrongKey, cipher: fastCipher) }
        wipe(&wrongKey)
        var wrongPoolKey = String(decoding: wrongPool.bytes, as: UTF8.self)
        #expect(throws: SqlCipherError.self) {
            _ = try DatabasePool(path: dir.path("db.db"), key: wrongPoolKey, cipher: fastCipher)
        }
        wipe(&wrongPoolKey)

        let plain = try Database(unencryptedPath: dir.path("plain.db"))
        try await plain.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        await plain.close()
        var inPlaceKey = String(decoding: inPlace.bytes, as: UTF8.self)
        try Database.encryptInPlace(path: dir.path("plain.db"), key: .passphrase(inPlaceKey), cipher: fastCipher)
        wipe(&inPlaceKey)

        for (name, needle) in [("wrong passphrase of a Database", wrong), ("wrong passphrase of a pool", wrongPool),
                               ("backup's passphrase", backup), ("encryptInPlace's passphrase", inPlace)] {
            #expect(try scanner.count(needle) == 0, "the \(name) is still in memory")
        }
    }
}

/// Clears a string's own storage in place: the test's copy of a passphrase, once handed over.
private func wipe(_ string: inout String) {
    string.withUTF8 { buffer in
        guard let base = buffer.baseAddress else { return }
        memset(UnsafeMutableRawPointer(mutating: base), 0, buffer.count)
    }
}

/// Reads the process's own writable anonymous and heap mappings through `/proc/self/mem`.
private final class MemoryScanner {
    /// Bytes to look for, in the scanner's own mapping, which no scan counts.
    struct Needle {
        let bytes: UnsafeRawBufferPointer
    }

    private let chunkSize = 1 << 20
    /// One mapping for the needles and one for the chunks read: both are skipped by address.
    private let needles: UnsafeMutableRawBufferPointer
    private var used = 0
    private let chunk: UnsafeMutableRawBufferPointer
    private let mapsText: UnsafeMutableRawBufferPointer
    private let regions: UnsafeMutableBufferPointer<Range<UInt>>
    private let fd: Int32
    /// The scanner's own mappings, which no scan reads.
    private let skipped: [Range<UInt>]

    init() throws {
        func map(_ size: Int) throws -> UnsafeMutableRawBufferPointer {
            let address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard let address, address != MAP_FAILED else { throw POSIXError(.ENOMEM) }
            return UnsafeMutableRawBufferPointer(start: address, count: size)
        }
        needles = try map(1 << 16)
        chunk = try map(chunkSize)
        mapsText = try map(32 << 20)
        regions = try map(8 << 20).bindMemory(to: Range<UInt>.self)
        skipped = [needles, chunk, mapsText, UnsafeMutableRawBufferPointer(regions)].map { buffer in
            let start = UInt(bitPattern: buffer.baseAddress)
            return start..<(start + UInt(buffer.count))
        }
        fd = open("/proc/self/mem", O_RDONLY)
        guard fd >= 0 else { throw POSIXError(.EACCES) }
    }

    deinit {
        memset(needles.baseAddress!, 0, needles.count)
        munmap(needles.baseAddress!, needles.count)
        munmap(chunk.baseAddress!, chunk.count)
        munmap(mapsText.baseAddress!, mapsText.count)
        munmap(UnsafeMutableRawPointer(regions.baseAddress!), regions.count * MemoryLayout<Range<UInt>>.stride)
        close(fd)
    }

    /// A random passphrase of 2000 letters and digits, written straight into the needles' mapping
    /// (a temporary array would leave a copy in freed memory): never found by chance, on the heap
    /// as a `String`, and in chunks large enough that malloc does not hand them out again at once.
    func randomNeedle() -> Needle {
        let alphabet: StaticString = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
        let start = used
        for _ in 0..<2000 {
            needles[used] = alphabet.utf8Start[Int.random(in: 0..<alphabet.utf8CodeUnitCount)]
            used += 1
        }
        return Needle(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(needles)[start..<used]))
    }

    func needle(_ bytes: some Collection<UInt8>) -> Needle {
        let start = used
        for byte in bytes {
            needles[used] = byte
            used += 1
        }
        return Needle(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(needles)[start..<used]))
    }

    /// The text the pool keys its connections with for `passphrase` (`x'<key><salt>'`), derived
    /// with the file's salt: written straight into the needles' mapping from the key's own memory.
    /// The derived key's 32 bytes come along as a second needle: SQLCipher and the package hold
    /// the key in both forms.
    func derivedKeyNeedle(_ passphrase: Needle, path: String) throws -> (hex: Needle, raw: Needle) {
        let material = try KeyMaterial(passphrase: passphrase.bytes)
        guard case .derived(let derived) = try KeyDerivation.derivedKey(
            passphrase: material, path: path, settings: fastCipher, library: try loadedLibrary()) else {
            throw SqlCipherError.invalidQuery(reason: "the test needs a derived key")
        }
        let hex = derived.key.withBytes { needle($0) }
        let raw = try derived.key.withRawKeyAndSalt { key, _ in needle(key) }
        return (hex, raw)
    }

    /// How many times the needle's bytes occur in the writable anonymous and heap mappings.
    ///
    /// Allocates nothing while it runs (the maps text, the regions and the chunks read all live in
    /// the scanner's own mappings): an allocation would reuse, and overwrite, exactly the freed
    /// memory where a forgotten copy of a secret lies.
    /// Whether `needle` is found, scanning again up to three times: the check that the scan sees
    /// what is there, before a count of zero is taken to mean that nothing is. Other tests run in
    /// this process meanwhile, and a mapping that changed between reading `/proc/self/maps` and
    /// reading the memory is read again at the next scan (CI once missed the test's own copy).
    func isPresent(_ needle: Needle) throws -> Bool {
        for _ in 0..<5 where try count(needle) >= 1 { return true }
        return false
    }

    /// What the last scan read, for the message of a failed self-check.
    private(set) var lastScan = ""

    /// The scan could not read every mapping: the test fails rather than count what it missed.
    struct ScanIncomplete: Error, CustomStringConvertible {
        let reason: String
        var description: String { "the memory scan is incomplete: \(reason)" }
    }

    func count(_ needle: Needle) throws -> Int {
        var found = 0
        let regionCount = try readRegions()
        lastScan = "\(regionCount) mappings read"
        for index in 0..<regionCount {
            let region = regions[index]
            var start = region.lowerBound
            while start < region.upperBound {
                let end = min(start + UInt(chunkSize), region.upperBound)
                found += count(needle, in: start..<end)
                start = end == region.upperBound ? end : end - UInt(needle.bytes.count - 1)
            }
        }
        return found
    }

    /// Occurrences in `piece`, read around the scanner's own mappings.
    private func count(_ needle: Needle, in piece: Range<UInt>) -> Int {
        guard !piece.isEmpty else { return 0 }
        if let skip = skipped.first(where: { $0.overlaps(piece) }) {
            return count(needle, in: piece.lowerBound..<max(piece.lowerBound, skip.lowerBound))
                + count(needle, in: min(piece.upperBound, skip.upperBound)..<piece.upperBound)
        }
        // A read can come back short, or fail, where a page changed under it (other tests run in
        // this process meanwhile): go on after what was read, and past a page that fails, rather
        // than drop the rest of the piece, so that a scan that finds nothing means nothing is there.
        var found = 0
        var start = piece.lowerBound
        while start < piece.upperBound {
            guard let got = read(start..<piece.upperBound) else {
                start = (start / 4096 + 1) * 4096
                continue
            }
            found += occurrences(of: needle, in: got)
            let end = start + UInt(got.count)
            if end >= piece.upperBound { break }
            start = max(start + 1, end - UInt(min(got.count, needle.bytes.count - 1)))
        }
        return found
    }

    /// Reads `/proc/self/maps` three times and puts the union of the `rw` mappings without a file
    /// (the heap, thread stacks, malloc arenas) into `regions`, sorted and merged; returns how many
    /// there are. Once is not enough while other tests run in this process: the kernel builds the
    /// text a piece at a time, and a mapping list that changes in between can leave a mapping out
    /// of one reading (the suite saw the scan miss the test's own copy of a passphrase).
    private func readRegions() throws -> Int {
        var count = 0
        for _ in 0..<3 { count = try readRegions(appendingAfter: count) }
        var sorted = UnsafeMutableBufferPointer(rebasing: regions[0..<count])
        sorted.sort { $0.lowerBound < $1.lowerBound }
        var merged = 0
        for index in 0..<count {
            let region = regions[index]
            if merged > 0, region.lowerBound <= regions[merged - 1].upperBound {
                let last = regions[merged - 1]
                regions[merged - 1] = last.lowerBound..<max(last.upperBound, region.upperBound)
            } else {
                regions[merged] = region
                merged += 1
            }
        }
        return merged
    }

    /// One reading of `/proc/self/maps`: its mappings, appended to `regions` after `existing`.
    private func readRegions(appendingAfter existing: Int) throws -> Int {
        let maps = open("/proc/self/maps", O_RDONLY)
        guard maps >= 0 else { return existing }
        defer { close(maps) }
        var length = 0
        while length < mapsText.count {
            let got = Glibc.read(maps, mapsText.baseAddress! + length, mapsText.count - length)
            if got <= 0 { break }
            length += got
        }
        // A scan that could not read every mapping must not pass for one that found nothing.
        guard length < mapsText.count else { throw ScanIncomplete(reason: "/proc/self/maps passed \(length) bytes") }
        var count = existing
        var lineStart = 0
        let text = UnsafeRawBufferPointer(mapsText)
        while lineStart < length {
            guard count < regions.count else { throw ScanIncomplete(reason: "more than \(count) mappings") }
            var lineEnd = lineStart
            while lineEnd < length && text[lineEnd] != 10 { lineEnd += 1 }
            if let region = parseLine(text, lineStart, lineEnd) {
                regions[count] = region
                count += 1
            }
            lineStart = lineEnd + 1
        }
        return count
    }

    /// `start-end perms offset dev inode [path]`: the range of a `rw` line whose path is empty or
    /// `[heap]`/`[stack]`.
    private func parseLine(_ text: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Range<UInt>? {
        var index = start
        func hexNumber() -> UInt {
            var value: UInt = 0
            while index < end {
                let byte = text[index]
                let digit: UInt
                switch byte {
                case 48...57: digit = UInt(byte - 48)
                case 97...102: digit = UInt(byte - 87)
                default: return value
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
        let low = hexNumber()
        index += 1  // '-'
        let high = hexNumber()
        index += 1  // ' '
        guard index + 1 < end, text[index] == UInt8(ascii: "r"), text[index + 1] == UInt8(ascii: "w") else {
            return nil
        }
        // Skip perms, offset, dev and inode; what is left is the path.
        var fields = 0
        while index < end && fields < 4 {
            while index < end && text[index] != 32 { index += 1 }
            while index < end && text[index] == 32 { index += 1 }
            fields += 1
        }
        if index < end && text[index] != UInt8(ascii: "[") { return nil }  // a file
        if index < end {
            let heap = end - index == 6 && text[index + 1] == UInt8(ascii: "h")
            let stack = end - index == 7 && text[index + 1] == UInt8(ascii: "s") && text[index + 2] == UInt8(ascii: "t")
            if !heap && !stack { return nil }
        }
        return low < high ? low..<high : nil
    }

    private func read(_ range: Range<UInt>) -> UnsafeRawBufferPointer? {
        let length = Int(range.upperBound - range.lowerBound)
        let got = pread(fd, chunk.baseAddress, length, off_t(Int64(bitPattern: UInt64(range.lowerBound))))
        guard got > 0 else { return nil }
        return UnsafeRawBufferPointer(start: chunk.baseAddress, count: got)
    }

    private func occurrences(of needle: Needle, in haystack: UnsafeRawBufferPointer) -> Int {
        // memchr for the first byte, memcmp for the rest (memmem is a GNU extension Swift does not see).
        guard let base = haystack.baseAddress, let wanted = needle.bytes.baseAddress, needle.bytes.count > 0 else {
            return 0
        }
        let first = Int32(needle.bytes[0])
        var found = 0
        var offset = 0
        while haystack.count - offset >= needle.bytes.count,
              let hit = memchr(base + offset, first, haystack.count - offset - needle.bytes.count + 1) {
            let position = UnsafeRawPointer(hit) - base
            if memcmp(hit, wanted, needle.bytes.count) == 0 { found += 1 }
            offset = position + 1
        }
        return found
    }
}
