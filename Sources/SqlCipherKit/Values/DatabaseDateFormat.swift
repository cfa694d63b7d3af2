import Foundation

/// The one text format SqlCipherKit writes dates in: `YYYY-MM-DD HH:MM:SS.SSS`, UTC.
///
/// Written by hand rather than with `DateFormatter` so that it is exact, allocation-light and
/// free of locale and time-zone state.
///
/// The calendar form covers the years 0000 to 9999, the span SQLite's date functions handle
/// (https://sqlite.org/lang_datefunc.html). A `Date` outside it (a year beyond 9999 or before 0,
/// up to `±1.8e308` seconds, an infinity, or NaN) has no such text; binding one must not trap,
/// and ``DatabaseValueConvertible/databaseValue`` cannot throw, so it is written as its
/// `timeIntervalSince1970` in decimal text instead (Swift's shortest round-trip form: `1e+300`,
/// `-1e+20`, `inf`, `-inf`, `nan`). ``date(from:)`` reads that form back to the same number of
/// seconds since 1970 (Foundation may round the `Date` it makes by one unit in the last place),
/// and accepts it only for values outside the calendar span, so text such as `2024`
/// still reads as no date. Such values do not sort in time order with calendar text, and SQLite's
/// date functions return NULL for them.
enum DatabaseDateFormat {
    /// 0000-01-01 00:00:00.000 UTC, in milliseconds since 1970: the first instant of the calendar form.
    static let firstCalendarMillisecond: Double = -62_167_219_200_000
    /// 9999-12-31 23:59:59.999 UTC, in milliseconds since 1970: the last instant of the calendar form.
    static let lastCalendarMillisecond: Double = 253_402_300_799_999

    /// Formats `date` in UTC with millisecond precision (rounded to the nearest millisecond, so
    /// that a time like `.123`, which a `Double` holds as `.12299...`, keeps its digits). Dates
    /// outside the years 0000 to 9999 (and NaN) are written as decimal seconds since 1970.
    static func string(from date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        // Checked before any integer conversion: Int64(x) traps for NaN, infinities and values
        // beyond ±9.2e18, which a Date can hold.
        guard let totalMilliseconds = calendarMilliseconds(seconds) else { return String(seconds) }
        var days = totalMilliseconds / 86_400_000
        var milliseconds = totalMilliseconds % 86_400_000
        if milliseconds < 0 { milliseconds += 86_400_000; days -= 1 }
        let (year, month, day) = civil(fromDays: days)
        let secondOfDay = milliseconds / 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(milliseconds % 1000, 3))"
    }

    /// The milliseconds since 1970 of `seconds`, rounded, when they fall in the calendar form's
    /// span; nil for NaN, infinities and everything outside it.
    private static func calendarMilliseconds(_ seconds: Double) -> Int64? {
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds >= firstCalendarMillisecond, milliseconds <= lastCalendarMillisecond else { return nil }
        return Int64(milliseconds)
    }

    /// Reads the decimal seconds that ``string(from:)`` writes for dates outside the calendar
    /// span; nil for any other text, and for numbers inside the span (which are not its output).
    private static func outOfCalendarDate(from text: String) -> Date? {
        // Only what `String(Double)` produces: digits, sign, point, exponent, inf and nan.
        guard !text.isEmpty, text.utf8.count <= 32,
              text.utf8.allSatisfy({ (48...57).contains($0) || "+-.eEinfa".utf8.contains($0) }),
              let seconds = Double(text) else { return nil }
        guard calendarMilliseconds(seconds) == nil else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Parses the formats SQLite's date functions accept that carry a calendar date, and the
    /// decimal seconds that ``string(from:)`` writes for dates outside the years 0000 to 9999.
    static func date(from text: String) -> Date? {
        if let date = outOfCalendarDate(from: text) { return date }
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.expect(UInt8(ascii: "-")),
              let month = scanner.number(digits: 2), scanner.expect(UInt8(ascii: "-")),
              let day = scanner.number(digits: 2), (1...12).contains(month),
              (1...daysInMonth(year: year, month: month)).contains(day)
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
                      let offsetMinutes = scanner.number(digits: 2),
                      offsetHours <= 14, offsetMinutes < 60 else { return nil }  // SQLite's own limits
                let offset = Double(offsetHours * 3600 + offsetMinutes * 60)
                seconds -= sign == UInt8(ascii: "+") ? offset : -offset
            }
        }
        guard scanner.atEnd else { return nil }
        let days = daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day))
        return Date(timeIntervalSince1970: Double(days) * 86_400 + seconds)
    }

    /// The days of `month` in `year` (proleptic Gregorian): a day past them is no date, not the
    /// first days of the next month.
    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
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
