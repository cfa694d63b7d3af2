import Foundation

/// Tells SQLCipher's ciphertext from plaintext by the bytes of the files alone.
///
/// SQLCipher encrypts every page with AES-256 under a fresh random IV and appends the IV and an
/// HMAC: a page it wrote is indistinguishable from random bytes, whatever the page held. A page
/// that SQLite wrote in the clear is not: at creation it is mostly zeros, b-tree headers and the
/// schema text. The test is Pearson's chi-square statistic of the byte counts against the uniform
/// distribution (255 degrees of freedom): random bytes give 255 on average with a standard
/// deviation of about 23, whatever the page size; a plaintext page gives thousands.
///
/// The limit, 600, is 15 standard deviations above the mean. For truly random bytes the chance
/// of exceeding it is about 10^-29 per page (and stays below 10^-12 for the shortest bodies judged,
/// whose tail is heavier), so real ciphertext never fails it. Measured on files written by
/// SQLCipher 4.6.1 and 3.4.1 (default settings, plaintext header, WAL, 1024 to 65536-byte pages,
/// 10,842 pages in all), the largest statistic was 351.
enum CiphertextProof {
    /// The largest chi-square statistic a page body may have and still pass as ciphertext.
    static let chiSquareLimit = 600.0

    /// Page bodies shorter than this are not judged: too few bytes to tell (only page 1 under a
    /// plaintext header nearly as long as the page can be that short).
    static let minimumBodyBytes = 64

    /// Pearson's chi-square statistic of `bytes`' byte counts against 256 equally likely values.
    static func chiSquare(_ bytes: UnsafeRawBufferPointer) -> Double {
        guard !bytes.isEmpty else { return 0 }
        var counts = [Int](repeating: 0, count: 256)
        let squares = counts.withUnsafeMutableBufferPointer { counts -> Int in
            for byte in bytes { counts[Int(byte)] &+= 1 }
            return counts.reduce(0) { $0 &+ $1 &* $1 }
        }
        // sum((c - e)^2 / e) with e = n / 256 is (256 / n) * sum(c^2) - n.
        let n = Double(bytes.count)
        return 256.0 * Double(squares) / n - n
    }

    /// What a scan of the files found.
    struct Scan {
        /// Page bodies judged.
        var pagesJudged = 0
        /// The database page numbers found on disk: pages of the database file, and the page
        /// numbers of `-wal` frames.
        var pagesFound: Set<Int> = []
        /// The largest statistic seen.
        var largestChiSquare = 0.0
        /// The first page that does not look like ciphertext, described; nil when all did.
        var failure: String?

        /// Judges one page body; records the first failure.
        mutating func judge(_ body: UnsafeRawBufferPointer, what: @autoclosure () -> String) {
            guard body.count >= CiphertextProof.minimumBodyBytes else { return }
            let statistic = CiphertextProof.chiSquare(body)
            pagesJudged += 1
            largestChiSquare = max(largestChiSquare, statistic)
            if statistic > CiphertextProof.chiSquareLimit && failure == nil {
                failure = "\(what()) does not look like ciphertext (its bytes' chi-square statistic is "
                    + "\(Int(statistic.rounded())); SQLCipher's pages stay below \(Int(CiphertextProof.chiSquareLimit)))"
            }
        }

        /// Judges every page of a database file: from `plaintextHeaderSize` on page 1, whole pages after.
        mutating func scanDatabase(_ data: Data, file: String, pageSize: Int, plaintextHeaderSize: Int) {
            guard pageSize > 0 else { return }
            data.withUnsafeBytes { bytes in
                var offset = 0, page = 1
                while offset < bytes.count {
                    let end = min(offset + pageSize, bytes.count)
                    let start = page == 1 ? min(offset + plaintextHeaderSize, end) : offset
                    if end - offset == pageSize { pagesFound.insert(page) }
                    judge(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), what: "page \(page) of \(file)")
                    offset = end
                    page += 1
                }
            }
        }

        /// Judges the page image of every frame of a `-wal` file (https://sqlite.org/fileformat2.html#walformat):
        /// a 32-byte header, then frames of a 24-byte header and one page. The headers are
        /// plaintext in SQLCipher too; the page images are encrypted like the database's pages.
        mutating func scanWAL(_ data: Data, file: String, pageSize fallback: Int, plaintextHeaderSize: Int) {
            guard data.count >= 32 else { return }
            data.withUnsafeBytes { bytes in
                let raw = Self.bigEndian32(bytes, at: 8)
                let stated = raw == 1 ? 65536 : raw
                let pageSize = stated >= 512 && stated <= 65536 && stated & (stated - 1) == 0 ? stated : fallback
                guard pageSize > 0 else { return }
                var offset = 32, frame = 1
                while offset + 24 + pageSize <= bytes.count {
                    let page = Self.bigEndian32(bytes, at: offset)
                    let imageStart = offset + 24, end = imageStart + pageSize
                    let start = page == 1 ? min(imageStart + plaintextHeaderSize, end) : imageStart
                    if page > 0 { pagesFound.insert(page) }
                    judge(UnsafeRawBufferPointer(rebasing: bytes[start..<end]),
                          what: "frame \(frame) (page \(page)) of \(file)")
                    offset = end
                    frame += 1
                }
            }
        }

        private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
            (Int(bytes[offset]) << 24) | (Int(bytes[offset + 1]) << 16) | (Int(bytes[offset + 2]) << 8) | Int(bytes[offset + 3])
        }
    }
}
