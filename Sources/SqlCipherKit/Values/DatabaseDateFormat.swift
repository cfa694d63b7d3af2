import Foundation

/// The one text format SqlCipherKit writes dates in: `YYYY-MM-DD HH:MM:SS.SSS`, UTC.
///
/// Written by hand rather than with `DateFormatter` so that it is exact, allocation-light and
/// free of locale and time-zone state.
enum DatabaseDateFormat {
    /// Formats `date` in UTC with millisecond precision (rounded to the nearest millisecond, so
    /// that a time like `.123`, which a `Double` holds as `.12299...`, keeps its digits).
    static func string(from date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var days = totalMilliseconds / 86_400_000
        var milliseconds = totalMilliseconds % 86_400_000
        if milliseconds < 0 { milliseconds += 86_400_000; days -= 1 }
        let (year, month, day) = civil(fromDays: days)
        let seconds = milliseconds / 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        let yearText = year < 0 ? "-" + pad(-year, 4) : pad(year, 4)
        return "\(yearText)-\(pad(month, 2))-\(pad(day, 2)) \(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):"
            + "\(pad(seconds % 60, 2)).\(pad(milliseconds % 1000, 3))"
    }

    /// Parses the formats SQLite's date functions accept that carry a calendar date.
    static func date(from text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.expect(UInt8(ascii: "-")),
              let month = scanner.number(digits: 2), scanner.expect(UInt8(ascii: "-")),
              let day = scanner.number(digits: 2), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var seconds: Double = 0
        if scanner.expect(UInt8(ascii: " ")) || scanner.expect(UInt8(ascii: "T")) {
            guard let hour = scanner.number(digits: 2), scanner.expect(UInt8(ascii: ":")),
                  let minute = scanner.number(digits: 2), hour < 24, minute < 60 else { return nil }
            seconds = Double(hour * 3600 + minute * 60)
            if scanner.expect(UInt8(ascii: ":")) {
                guard let second = scanner.number(digits: 2), second < 60 else { return nil }
                seconds += Double(second)
                if scanner.expect(UInt8(ascii: ".")) {
                    // Digits as one integer divided once: `.250` reads as exactly 0.25.
                    var fraction: Int64 = 0
                    var scale: Double = 1
                    var any = false
                    while let digit = scanner.digit() {
                        if scale < 1e15 {
                            fraction = fraction * 10 + Int64(digit)
                            scale *= 10
                        }
                        any = true
                    }
                    if !any { return nil }
                    seconds += Double(fraction) / scale
                }
            }
            if scanner.expect(UInt8(ascii: "Z")) {
            } else if let sign = scanner.peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                scanner.advance()
                guard let offsetHours = scanner.number(digits: 2), scanner.expect(UInt8(ascii: ":")),
                      let offsetMinutes = scanner.number(digits: 2) else { return nil }
                let offset = Double(offsetHours * 3600 + offsetMinutes * 60)
                seconds -= sign == UInt8(ascii: "+") ? offset : -offset
            }
        }
        guard scanner.atEnd else { return nil }
        let days = daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day))
        return Date(timeIntervalSince1970: Double(days) * 86_400 + seconds)
    }

    // Howard Hinnant's civil-calendar algorithms (proleptic Gregorian, days since 1970-01-01).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var atEnd: Bool { index == bytes.count }
        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }
        mutating func advance() { index += 1 }
        mutating func expect(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            index += 1
            return true
        }
        mutating func digit() -> Int? {
            guard let byte = peek(), byte >= 48, byte <= 57 else { return nil }
            index += 1
            return Int(byte - 48)
        }
        mutating func number(digits: Int) -> Int? {
            var value = 0
            for _ in 0..<digits {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }
    }
}
