/// A JSON value with object keys kept in the order they were added, so the doctor's output reads
/// top-down (`ok` first) and is the same on every run.
enum JSONValue: Sendable, Equatable {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case int(Int)
    case bool(Bool)
    case null

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        lhs.serialized() == rhs.serialized()
    }

    /// A string, or null when nil.
    static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    /// The value as pretty-printed JSON text (two-space indent), without a trailing newline.
    func serialized(indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent + 1)
        let closing = String(repeating: "  ", count: indent)
        switch self {
        case let .object(members):
            if members.isEmpty { return "{}" }
            let lines = members.map { "\(pad)\(Self.quote($0.0)): \($0.1.serialized(indent: indent + 1))" }
            return "{\n" + lines.joined(separator: ",\n") + "\n\(closing)}"
        case let .array(items):
            if items.isEmpty { return "[]" }
            let lines = items.map { pad + $0.serialized(indent: indent + 1) }
            return "[\n" + lines.joined(separator: ",\n") + "\n\(closing)]"
        case let .string(text): return Self.quote(text)
        case let .int(number): return String(number)
        case let .bool(flag): return flag ? "true" : "false"
        case .null: return "null"
        }
    }

    /// A JSON string literal (RFC 8259): escapes quotes, backslashes and control characters.
    private static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
