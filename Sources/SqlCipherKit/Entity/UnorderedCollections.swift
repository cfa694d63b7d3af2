import Foundation

/// One order for the collections whose encoding follows their hash table.
///
/// A `Set` encodes its elements, and a `Dictionary` whose keys JSON cannot name (neither `String`
/// nor `Int` nor `CodingKeyRepresentable`: an enum with a raw value, a `UUID`) encodes its keys and
/// values as one flat array, in the order of their hash table, which Swift seeds anew in every
/// process. The same value saved by two runs of a program was two different JSON texts: a
/// comparison of the column with a stored value, a `DISTINCT`, a `GROUP BY` or a unique index on it
/// went wrong, and an unchanged entity saved again rewrote its row. Their arrays in the JSON are
/// put in the order of their elements' JSON text (for a dictionary, of its keys' text), so one
/// value always has one text. Dictionaries with `String` or `Int` keys are JSON objects, whose keys
/// the encoder already sorts (`.sortedKeys`).
///
/// The JSON is reordered as text, never decoded into Foundation values, so every number keeps its
/// exact digits (`JSONSerialization` would turn a `UInt64` above `Int64.max` into a `Double`).
enum UnorderedCollections {
    /// One step into a JSON value: an object's member or an array's element.
    enum Step: Equatable {
        case key(String)
        case index(Int)
    }

    /// Where an unordered collection is in the JSON of a value, and how its array is reordered.
    struct Location {
        var path: [Step]
        /// A dictionary's array holds key, value, key, value, ...: pairs move together.
        var pairs: Bool
    }

    /// `json`, the encoding of `value`, with the array of every unordered collection inside `value`
    /// put in one order; `json` itself when `value` holds none.
    static func canonical<T: Encodable>(_ json: Data, of value: T) -> Data {
        // Both collections encode as arrays: JSON without a "[" holds none (and costs no walk).
        guard json.contains(UInt8(ascii: "[")) else { return json }
        let recorder = Recorder()
        recorder.visit(value, at: [])
        guard !recorder.found.isEmpty, var tree = JSONText.parse(json) else { return json }
        // Innermost first: an inner array is reordered where its outer one still has it.
        for location in recorder.found.sorted(by: { $0.path.count > $1.path.count }) {
            tree.reorder(at: location.path[...], pairs: location.pairs)
        }
        return Data(tree.text.utf8)
    }

    /// Walks a value's encoding as JSONEncoder does, noting where the unordered collections are.
    final class Recorder {
        var found: [Location] = []

        func visit<T: Encodable>(_ value: T, at path: [Step]) {
            // Scalars: the primitives (whose own encode(to:) hands themselves to a single-value
            // container, which would come back here), and what JSONEncoder writes as one scalar
            // without asking the value to encode itself.
            if value is String || value is Bool || value is any BinaryInteger || value is any BinaryFloatingPoint
                || value is Date || value is Data || value is URL || value is Decimal {
                return
            }
            if let marker = value as? any UnorderedCollection {
                found.append(Location(path: path, pairs: marker.encodesPairs))
            }
            try? value.encode(to: PathEncoder(recorder: self, path: path))
        }
    }

    /// The encoder the recorder hands a value: it keeps the JSON path and nothing else.
    struct PathEncoder: Encoder {
        let recorder: Recorder
        let path: [Step]
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Keyed<Key>(recorder: recorder, path: path))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(recorder: recorder, path: path) }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(recorder: recorder, path: path) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let recorder: Recorder
        let path: [Step]
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            recorder.visit(value, at: path + [.key(key.stringValue)])
        }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(recorder: recorder, path: path + [.key(key.stringValue)]))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unkeyed(recorder: recorder, path: path + [.key(key.stringValue)])
        }
        mutating func superEncoder() -> any Encoder { PathEncoder(recorder: recorder, path: path + [.key("super")]) }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            PathEncoder(recorder: recorder, path: path + [.key(key.stringValue)])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let recorder: Recorder
        let path: [Step]
        var codingPath: [any CodingKey] { [] }
        private(set) var count = 0

        init(recorder: Recorder, path: [Step]) {
            self.recorder = recorder
            self.path = path
        }

        /// The path of the next element, counted.
        private mutating func next() -> [Step] {
            defer { count += 1 }
            return path + [.index(count)]
        }

        mutating func encodeNil() throws { count += 1 }
        mutating func encode<T: Encodable>(_ value: T) throws { recorder.visit(value, at: next()) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(recorder: recorder, path: next()))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(recorder: recorder, path: next()) }
        mutating func superEncoder() -> any Encoder { PathEncoder(recorder: recorder, path: next()) }
    }

    struct Single: SingleValueEncodingContainer {
        let recorder: Recorder
        let path: [Step]
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws { recorder.visit(value, at: path) }
    }
}

/// A collection whose encoding follows its hash table (``UnorderedCollections``).
protocol UnorderedCollection {
    /// Whether its JSON array holds key, value pairs (a dictionary) rather than elements.
    var encodesPairs: Bool { get }
}

extension Set: UnorderedCollection {
    var encodesPairs: Bool { false }
}

extension Dictionary: UnorderedCollection {
    var encodesPairs: Bool { true }
}

/// Compact JSON (JSONEncoder's output) as a tree of the texts of its scalars, so that arrays can
/// be reordered and the text written again byte for byte as it was, order aside.
indirect enum JSONText {
    case scalar(Substring)
    case array([JSONText])
    /// Members as they came: the key's text with its quotes, and the value.
    case object([(key: Substring, value: JSONText)])

    /// The tree of `json`, or nil when it is not compact JSON (never, for JSONEncoder's output).
    static func parse(_ json: Data) -> JSONText? {
        let text = String(decoding: json, as: UTF8.self)
        var index = text.startIndex
        guard let tree = parseValue(text, &index), index == text.endIndex else { return nil }
        return tree
    }

    private static func parseValue(_ text: String, _ index: inout String.Index) -> JSONText? {
        guard index < text.endIndex else { return nil }
        switch text[index] {
        case "[":
            index = text.index(after: index)
            var elements: [JSONText] = []
            if index < text.endIndex, text[index] == "]" {
                index = text.index(after: index)
                return .array(elements)
            }
            while true {
                guard let element = parseValue(text, &index), index < text.endIndex else { return nil }
                elements.append(element)
                let separator = text[index]
                index = text.index(after: index)
                if separator == "]" { return .array(elements) }
                guard separator == "," else { return nil }
            }
        case "{":
            index = text.index(after: index)
            var members: [(key: Substring, value: JSONText)] = []
            if index < text.endIndex, text[index] == "}" {
                index = text.index(after: index)
                return .object(members)
            }
            while true {
                guard let key = scanString(text, &index), index < text.endIndex, text[index] == ":" else { return nil }
                index = text.index(after: index)
                guard let value = parseValue(text, &index), index < text.endIndex else { return nil }
                members.append((key, value))
                let separator = text[index]
                index = text.index(after: index)
                if separator == "}" { return .object(members) }
                guard separator == "," else { return nil }
            }
        case "\"":
            return scanString(text, &index).map(JSONText.scalar)
        default:
            // A number, true, false or null: up to the next separator.
            let start = index
            while index < text.endIndex, !",]}".contains(text[index]) { index = text.index(after: index) }
            return start == index ? nil : .scalar(text[start..<index])
        }
    }

    /// A string's text with its quotes, escapes and all.
    private static func scanString(_ text: String, _ index: inout String.Index) -> Substring? {
        guard index < text.endIndex, text[index] == "\"" else { return nil }
        let start = index
        index = text.index(after: index)
        var escaped = false
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if escaped {
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                return text[start..<index]
            }
        }
        return nil
    }

    /// The compact JSON text of this tree.
    var text: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case let .scalar(text):
            output += text
        case let .array(elements):
            output += "["
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output += "," }
                element.write(to: &output)
            }
            output += "]"
        case let .object(members):
            output += "{"
            for (offset, member) in members.enumerated() {
                if offset > 0 { output += "," }
                output += member.key
                output += ":"
                member.value.write(to: &output)
            }
            output += "}"
        }
    }

    /// Sorts the array at `path` by its elements' text, or by its pairs' keys' text when `pairs`;
    /// anything else at `path` (an object, a scalar: a dictionary JSON could key) stays as it is.
    mutating func reorder(at path: ArraySlice<UnorderedCollections.Step>, pairs: Bool) {
        guard let step = path.first else {
            guard case let .array(elements) = self else { return }
            if pairs {
                guard elements.count % 2 == 0 else { return }
                let keyed = stride(from: 0, to: elements.count, by: 2).map { (key: elements[$0].text, pair: elements[$0...$0 + 1]) }
                self = .array(keyed.sorted { $0.key < $1.key }.flatMap { $0.pair })
            } else {
                self = .array(elements.map { (text: $0.text, element: $0) }.sorted { $0.text < $1.text }.map(\.element))
            }
            return
        }
        switch (self, step) {
        case (.array(var elements), .index(let position)) where elements.indices.contains(position):
            elements[position].reorder(at: path.dropFirst(), pairs: pairs)
            self = .array(elements)
        case (.object(var members), .key(let name)):
            // The member's key text is the name JSON-quoted; compare what it decodes to.
            guard let position = members.firstIndex(where: { JSONText.unquoted($0.key) == name }) else { return }
            members[position].value.reorder(at: path.dropFirst(), pairs: pairs)
            self = .object(members)
        default:
            return
        }
    }

    /// The string a JSON string literal stands for (its quotes and escapes undone).
    static func unquoted(_ literal: Substring) -> String? {
        if !literal.contains("\\"), literal.count >= 2 { return String(literal.dropFirst().dropLast()) }
        return try? JSONDecoder().decode(String.self, from: Data(literal.utf8))
    }
}
