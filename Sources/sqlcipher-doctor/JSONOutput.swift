import Foundation

/// The doctor's JSON: `Encodable` report types written by Foundation's `JSONEncoder`.
///
/// Property names become snake_case keys (`sqliteVersionNumber` is `sqlite_version_number`).
/// Keys are sorted: swift-foundation's encoder on Linux keeps an object's keys in a dictionary, so
/// without `.sortedKeys` their order changes from run to run (measured with Swift 6.3.1); sorted
/// output is the same for the same report on every run and platform. The schema is in docs/doctor.md.
enum JSONOutput {
    static func text(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            // The report types hold only strings, integers, booleans and arrays of them, which the
            // encoder always writes; a failure would be a bug, still reported as JSON.
            let message = "\(error)".replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "{\n  \"error\" : \"the report could not be encoded: \(message)\",\n  \"ok\" : false\n}"
        }
    }
}

// swift-format-ignore: UseSynthesizedInitializer
/// An optional written as `null` rather than left out, for keys that are always present.
/// (`Encodable`'s synthesized code skips a nil optional; a script reading `report["page_size"]`
/// should find the key.)
@propertyWrapper
struct Nullable<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    // Written out although swift-format calls it the synthesized one: without it, the memberwise
    // initializers of the types that use `@Nullable var x: T?` do not compile.
    init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(wrappedValue)
        } else {
            try container.encodeNil()
        }
    }
}
