/// The doctor's text output, one line at a time, safe to print on a terminal.
///
/// File names, table names, index names and SQLite's messages about them come from the files
/// inspected, which may be anyone's: a name holding an escape sequence (`\e]0;...\a`, a colour, a
/// cursor move), a carriage return or a newline was printed as it is, so that a hostile file could
/// rewrite the terminal's title or clipboard, or print a line of its own that read like the
/// doctor's verdict ("x.db: VERIFIED"). Every control character (C0, DEL, C1) and every Unicode
/// bidirectional control is written as an escape (`\u{1B}`) instead; the line breaks are the
/// doctor's own, between lines.
enum TerminalText {
    /// `line` with its control characters written as escapes.
    static func line(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: isControl) else { return line }
        var escaped = ""
        for scalar in line.unicodeScalars {
            if isControl(scalar) {
                escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Lines joined for printing, each escaped.
    static func lines(_ lines: [String]) -> String {
        lines.map(line).joined(separator: "\n")
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
