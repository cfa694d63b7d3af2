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
        let first = scanner.needle(randomPassphrase()), second = scanner.needle(randomPassphrase())
        let third = scanner.needle(randomPassphrase())

        var key = String(decoding: first.bytes, as: UTF8.self)
        // The scan works: it finds the test's own copy.
        #expect(try scanner.count(first) >= 1)
        let db = try Database(path: path, key: key, cipher: fastCipher)
        wipe(&key)
        try await db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")

        var secondKey = String(decoding: second.bytes, as: UTF8.self)
        try await db.rekey(secondKey)
        wipe(&secondKey)
        var thirdKey = Data(third.bytes)
        try await db.rekey(thirdKey)
        thirdKey.resetBytes(in: 0..<thirdKey.count)
        #expect(try await db.query("SELECT x FROM t").first?.get(0, as: Int.self) == 1)
        await db.close()

        for needle in [first, second, third] {
            #expect(try scanner.count(needle) == 0, "a passphrase is still in memory after close")
        }
    }

    @Test func aClosedPoolLeavesNoPassphraseOrDerivedKeyBehind() async throws {
        let scanner = try MemoryScanner()
        let dir = TemporaryDirectory()
        let path = dir.path("pool.db")
        let first = scanner.needle(randomPassphrase()), second = scanner.needle(randomPassphrase())
        let third = scanner.needle(randomPassphrase())

        var key = String(decoding: first.bytes, as: UTF8.self)
        let pool = try DatabasePool(path: path, key: key, cipher: fastCipher)
        wipe(&key)
        _ = try await pool.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let firstHex = try scanner.derivedKeyNeedle(first, path: path)
        // The scan works: the pool keeps the derived key for readers opened later.
        #expect(try scanner.count(firstHex) >= 1)

        var secondKey = String(decoding: second.bytes, as: UTF8.self)
        try await pool.rekey(secondKey)
        wipe(&secondKey)
        let secondHex = try scanner.derivedKeyNeedle(second, path: path)
        #expect(try scanner.count(secondHex) >= 1)

        var thirdKey = Data(third.bytes)
        try await pool.rekey(thirdKey)
        thirdKey.resetBytes(in: 0..<thirdKey.count)
        let thirdHex = try scanner.derivedKeyNeedle(third, path: path)
        #expect(try await pool.query("SELECT x FROM t").first?.get(0, as: Int.self) == 1)
        #expect(try scanner.count(thirdHex) >= 1)
        #expect(try scanner.count(firstHex) == 0, "a replaced derived key is still in memory")
        await pool.close()

        for needle in [first, second, third, firstHex, secondHex, thirdHex] {
            #expect(try scanner.count(needle) == 0, "a secret is still in memory after the pool closed")
        }
    }

    /// A random passphrase of 40 letters and digits: long enough to live on the heap as a `String`,
    /// and never found by chance.
    private func randomPassphrase() -> [UInt8] {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789".utf8)
        return (0..<40).map { _ in alphabet.randomElement()! }
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
    private let fd: Int32

    init() throws {
        func map(_ size: Int) throws -> UnsafeMutableRawBufferPointer {
            let address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard let address, address != MAP_FAILED else { throw POSIXError(.ENOMEM) }
            return UnsafeMutableRawBufferPointer(start: address, count: size)
        }
        needles = try map(1 << 16)
        chunk = try map(chunkSize)
        fd = open("/proc/self/mem", O_RDONLY)
        guard fd >= 0 else { throw POSIXError(.EACCES) }
    }

    deinit {
        memset(needles.baseAddress, 0, needles.count)
        munmap(needles.baseAddress, needles.count)
        munmap(chunk.baseAddress, chunk.count)
        close(fd)
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
    func derivedKeyNeedle(_ passphrase: Needle, path: String) throws -> Needle {
        let material = try KeyMaterial(passphrase: passphrase.bytes)
        guard case .derived(let derived) = try KeyDerivation.derivedKey(
            passphrase: material, path: path, settings: fastCipher, library: try loadedLibrary()) else {
            throw SqlCipherError.invalidQuery(reason: "the test needs a derived key")
        }
        return derived.key.withBytes { needle($0) }
    }

    /// How many times the needle's bytes occur in the writable anonymous and heap mappings.
    func count(_ needle: Needle) throws -> Int {
        let skipped = [range(of: UnsafeRawBufferPointer(needles)), range(of: UnsafeRawBufferPointer(chunk))]
        var found = 0
        for region in try writableRegions() {
            var start = region.lowerBound
            while start < region.upperBound {
                let end = min(start + UInt(chunkSize), region.upperBound)
                defer { start = end == region.upperBound ? end : end - UInt(needle.bytes.count - 1) }
                if skipped.contains(where: { $0.overlaps(start..<end) }) {
                    // Only the scanner's own mappings: read around them.
                    found += try countAround(needle, in: start..<end, skipping: skipped)
                    continue
                }
                found += read(start..<end).map { occurrences(of: needle, in: $0) } ?? 0
            }
        }
        return found
    }

    private func countAround(_ needle: Needle, in range: Range<UInt>, skipping: [Range<UInt>]) throws -> Int {
        var pieces = [range]
        for skip in skipping {
            pieces = pieces.flatMap { piece -> [Range<UInt>] in
                guard piece.overlaps(skip) else { return [piece] }
                var parts: [Range<UInt>] = []
                if piece.lowerBound < skip.lowerBound { parts.append(piece.lowerBound..<skip.lowerBound) }
                if skip.upperBound < piece.upperBound { parts.append(skip.upperBound..<piece.upperBound) }
                return parts
            }
        }
        return pieces.reduce(0) { $0 + (read($1).map { occurrences(of: needle, in: $0) } ?? 0) }
    }

    private func read(_ range: Range<UInt>) -> UnsafeRawBufferPointer? {
        let length = Int(range.upperBound - range.lowerBound)
        let got = pread(fd, chunk.baseAddress, length, off_t(bitPattern: UInt64(range.lowerBound)))
        guard got > 0 else { return nil }
        return UnsafeRawBufferPointer(start: chunk.baseAddress, count: got)
    }

    private func occurrences(of needle: Needle, in haystack: UnsafeRawBufferPointer) -> Int {
        var found = 0
        var offset = 0
        while offset + needle.bytes.count <= haystack.count,
              let hit = memmem(haystack.baseAddress! + offset, haystack.count - offset,
                               needle.bytes.baseAddress, needle.bytes.count) {
            found += 1
            offset = UnsafeRawPointer(hit) - haystack.baseAddress! + 1
        }
        return found
    }

    private func range(of buffer: UnsafeRawBufferPointer) -> Range<UInt> {
        let start = UInt(bitPattern: buffer.baseAddress)
        return start..<(start + UInt(buffer.count))
    }

    /// The `rw` mappings without a file: the heap, thread stacks, malloc arenas, Swift's allocations.
    private func writableRegions() throws -> [Range<UInt>] {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        return maps.split(separator: "\n").compactMap { line -> Range<UInt>? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("rw") else { return nil }
            if fields.count >= 6 && fields[5] != "[heap]" && fields[5] != "[stack]" { return nil }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let low = UInt(bounds[0], radix: 16), let high = UInt(bounds[1], radix: 16) else {
                return nil
            }
            return low..<high
        }
    }
}
