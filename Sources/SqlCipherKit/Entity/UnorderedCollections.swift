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
    enum Step: Hashable {
        case key(String)
        case index(Int)
    }

    /// Where an unordered collection is in the JSON of a value, and how its array is reordered.
    struct Location {
        var path: [Step]
        /// A dictionary's array holds key, value, key, value, ...: pairs move together.
        var pairs: Bool
        /// How many elements its array holds (a dictionary's: two per entry). An array of another
        /// length at the path is not this collection's, and is left as it is.
        var count: Int
    }

    /// `json`, the encoding of `value`, with the array of every unordered collection inside `value`
    /// put in one order; `json` itself when `value` holds none.
    static func canonical<T: Encodable>(_ json: Data, of value: T) -> Data {
        // Both collections encode as arrays: JSON without a "[" holds none (and costs no walk).
        guard json.contains(UInt8(ascii: "[")) else { return json }
        let recorder = Recorder()
        recorder.visit(value, at: [])
        guard !recorder.found.isEmpty, var tree = JSONText.parse(json) else { return json }
        let root = Node()
        for location in recorder.found {
            var node = root
            for step in location.path { node = node.child(step) }
            node.collection = location
        }
        // One walk of the tree, innermost first: an inner array is reordered where its outer one
        // still has it (walking from the root once per collection was quadratic: 20,000 small
        // sets in an array took 6 s).
        tree.reorder(root)
        var output: [UInt8] = []
        output.reserveCapacity(json.count)
        tree.write(to: &output)
        return Data(output)
    }

    /// The locations found, as a tree of their paths.
    final class Node {
        var children: [Step: Node] = [:]
        var collection: Location?

        func child(_ step: Step) -> Node {
            if let existing = children[step] { return existing }
            let made = Node()
            children[step] = made
            return made
        }
    }

    /// Walks a value's encoding as JSONEncoder does, noting where the unordered collections are.
    ///
    /// It must see the shape JSONEncoder writes, or it sorts an array that is not a collection's
    /// (found by the review: a type that asked its encoder for a second unkeyed container had its
    /// `Set` noted at the index of the first container's ordered array, which was sorted): as
    /// there, every unkeyed container of one array continues its count, a member encoded again
    /// replaces the first, and a value sees the coding path JSONEncoder gives it.
    final class Recorder {
        var found: [Location] = []
        /// The next index of each array, by its path (``Counter``).
        private var counters: [[Step]: Counter] = [:]
        /// The members of each object encoded so far, by its path.
        private var members: [[Step]: Names] = [:]

        final class Counter {
            var next = 0
        }

        final class Names {
            var encoded: Set<String> = []
        }

        func visit<T: Encodable>(_ value: T, at path: [Step]) {
            // Scalars: the primitives (whose own encode(to:) hands themselves to a single-value
            // container, which would come back here), and what JSONEncoder writes as one scalar
            // without asking the value to encode itself.
            if value is String || value is Bool || value is any BinaryInteger || value is any BinaryFloatingPoint
                || value is Date || value is Data || value is URL || value is Decimal {
                return
            }
            if let marker = value as? any UnorderedCollection {
                found.append(Location(path: path, pairs: marker.encodesPairs, count: marker.encodedCount))
            }
            try? value.encode(to: PathEncoder(recorder: self, path: path))
        }

        /// The counter of the array at `path`, shared by every unkeyed container of it.
        func counter(at path: [Step]) -> Counter {
            if let existing = counters[path] { return existing }
            let made = Counter()
            counters[path] = made
            return made
        }

        /// The names of the members of the object at `path`, shared by its keyed containers.
        func names(at path: [Step]) -> Names {
            if let existing = members[path] { return existing }
            let made = Names()
            members[path] = made
            return made
        }

        /// Notes that the member `key` of the object at `path` is encoded (again): JSONEncoder
        /// keeps the last value of a member, so what was found in an earlier one is forgotten.
        func replacing(_ key: String, of names: Names, at path: [Step]) {
            guard !names.encoded.insert(key).inserted else { return }
            let member = path + [.key(key)]
            found.removeAll { $0.path.starts(with: member) }
            counters = counters.filter { !$0.key.starts(with: member) }
            members = members.filter { !$0.key.starts(with: member) }
        }
    }

    /// A coding key of a path, as JSONEncoder spells them: a member's name, an element's
    /// "Index n".
    struct PathKey: CodingKey {
        var stringValue: String
        var intValue: Int?

        init(stringValue: String) {
            self.stringValue = stringValue
            intValue = nil
        }

        init(intValue: Int) {
            stringValue = "Index \(intValue)"
            self.intValue = intValue
        }

        static func codingPath(_ path: [Step]) -> [any CodingKey] {
            path.map { step in
                switch step {
                case .key(let name): PathKey(stringValue: name)
                case .index(let index): PathKey(intValue: index)
                }
            }
        }
    }

    /// The encoder the recorder hands a value: it keeps the JSON path and nothing else.
    struct PathEncoder: Encoder {
        let recorder: Recorder
        let path: [Step]
        var codingPath: [any CodingKey] { PathKey.codingPath(path) }
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
        let names: Recorder.Names
        var codingPath: [any CodingKey] { PathKey.codingPath(path) }

        init(recorder: Recorder, path: [Step]) {
            self.recorder = recorder
            self.path = path
            names = recorder.names(at: path)
        }

        /// The path of the member `key`, whose earlier value (if any) it replaces.
        private func member(_ key: Key) -> [Step] {
            recorder.replacing(key.stringValue, of: names, at: path)
            return path + [.key(key.stringValue)]
        }

        mutating func encodeNil(forKey key: Key) throws { _ = member(key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            recorder.visit(value, at: member(key))
        }
        /// The path of the member `key` that a nested container writes: a second nested container of
        /// it adds to the first, as in JSONEncoder; a value encoded afterwards replaces both.
        private func nested(_ key: Key) -> [Step] {
            names.encoded.insert(key.stringValue)
            return path + [.key(key.stringValue)]
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(recorder: recorder, path: nested(key)))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unkeyed(recorder: recorder, path: nested(key))
        }
        mutating func superEncoder() -> any Encoder { PathEncoder(recorder: recorder, path: path + [.key("super")]) }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            PathEncoder(recorder: recorder, path: path + [.key(key.stringValue)])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let recorder: Recorder
        let path: [Step]
        let counter: Recorder.Counter
        var codingPath: [any CodingKey] { PathKey.codingPath(path) }
        var count: Int { counter.next }

        init(recorder: Recorder, path: [Step]) {
            self.recorder = recorder
            self.path = path
            counter = recorder.counter(at: path)
        }

        /// The path of the next element, counted.
        private func next() -> [Step] {
            defer { counter.next += 1 }
            return path + [.index(counter.next)]
        }

        mutating func encodeNil() throws { counter.next += 1 }
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
        var codingPath: [any CodingKey] { PathKey.codingPath(path) }

        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws { recorder.visit(value, at: path) }
    }
}

/// A collection whose encoding follows its hash table (``UnorderedCollections``).
protocol UnorderedCollection {
    /// Whether its JSON array holds key, value pairs (a dictionary) rather than elements.
    var encodesPairs: Bool { get }
    /// How many elements its JSON array holds.
    var encodedCount: Int { get }
}

extension Set: UnorderedCollection {
    var encodesPairs: Bool { false }
    var encodedCount: Int { count }
}

extension Dictionary: UnorderedCollection {
    var encodesPairs: Bool { true }
    var encodedCount: Int { count * 2 }
}

/// Compact JSON (JSONEncoder's output) as a tree of the bytes of its scalars, so that arrays can
/// be reordered and the text written again byte for byte as it was, order aside.
///
/// Read as UTF-8 bytes, never as `Character`s: a string whose first character is a combining
/// mark (U+0301) makes one grapheme with its opening quote, which a `Character` walk did not take
/// for a quote, so `["\u{301}m,z","\u{301}n"]` was cut at the comma inside the string, its pieces
/// sorted apart, and the column saved as text that is not JSON and never decoded again (found by
/// the review). No byte of a multi-byte UTF-8 sequence is a quote, a backslash or punctuation.
indirect enum JSONText {
    case scalar(ArraySlice<UInt8>)
    case array([JSONText])
    /// Members as they came: the key's bytes with its quotes, and the value.
    case object([(key: ArraySlice<UInt8>, value: JSONText)])

    /// The tree of `json`, or nil when it is not compact JSON (never, for JSONEncoder's output).
    static func parse(_ json: Data) -> JSONText? {
        let bytes = [UInt8](json)
        var index = 0
        guard let tree = parseValue(bytes, &index), index == bytes.count else { return nil }
        return tree
    }

    private static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    private static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    private static let comma = UInt8(ascii: ","), colon = UInt8(ascii: ":")
    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

    private static func parseValue(_ bytes: [UInt8], _ index: inout Int) -> JSONText? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case openBracket:
            index += 1
            var elements: [JSONText] = []
            if index < bytes.count, bytes[index] == closeBracket {
                index += 1
                return .array(elements)
            }
            while true {
                guard let element = parseValue(bytes, &index), index < bytes.count else { return nil }
                elements.append(element)
                let separator = bytes[index]
                index += 1
                if separator == closeBracket { return .array(elements) }
                guard separator == comma else { return nil }
            }
        case openBrace:
            index += 1
            var members: [(key: ArraySlice<UInt8>, value: JSONText)] = []
            if index < bytes.count, bytes[index] == closeBrace {
                index += 1
                return .object(members)
            }
            while true {
                guard let key = scanString(bytes, &index), index < bytes.count, bytes[index] == colon else { return nil }
                index += 1
                guard let value = parseValue(bytes, &index), index < bytes.count else { return nil }
                members.append((key, value))
                let separator = bytes[index]
                index += 1
                if separator == closeBrace { return .object(members) }
                guard separator == comma else { return nil }
            }
        case quote:
            return scanString(bytes, &index).map(JSONText.scalar)
        default:
            // A number, true, false or null: up to the next separator.
            let start = index
            while index < bytes.count, bytes[index] != comma, bytes[index] != closeBracket, bytes[index] != closeBrace {
                index += 1
            }
            return start == index ? nil : .scalar(bytes[start..<index])
        }
    }

    /// A string's bytes with its quotes, escapes and all.
    private static func scanString(_ bytes: [UInt8], _ index: inout Int) -> ArraySlice<UInt8>? {
        guard index < bytes.count, bytes[index] == quote else { return nil }
        let start = index
        index += 1
        var escaped = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if escaped {
                escaped = false
            } else if byte == backslash {
                escaped = true
            } else if byte == quote {
                return bytes[start..<index]
            }
        }
        return nil
    }

    /// Appends the compact JSON text of this tree to `output`.
    func write(to output: inout [UInt8]) {
        switch self {
        case let .scalar(bytes):
            output += bytes
        case let .array(elements):
            output.append(Self.openBracket)
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(Self.comma) }
                element.write(to: &output)
            }
            output.append(Self.closeBracket)
        case let .object(members):
            output.append(Self.openBrace)
            for (offset, member) in members.enumerated() {
                if offset > 0 { output.append(Self.comma) }
                output += member.key
                output.append(Self.colon)
                member.value.write(to: &output)
            }
            output.append(Self.closeBrace)
        }
    }

    /// The compact JSON text of this tree, as bytes.
    var bytes: [UInt8] {
        var output: [UInt8] = []
        write(to: &output)
        return output
    }

    /// Reorders the arrays of the collections under `node`, innermost first: each is sorted by
    /// its elements' bytes (SQLite's BINARY order), or by its pairs' keys' bytes. Anything else at
    /// a collection's path (an object, a scalar: a dictionary JSON could key; an array of another
    /// length) stays as it is.
    mutating func reorder(_ node: UnorderedCollections.Node) {
        if !node.children.isEmpty {
            switch self {
            case .array(var elements):
                // Taken out first, so that the elements are changed in place, not copied.
                self = .array([])
                for (step, child) in node.children {
                    guard case .index(let position) = step, elements.indices.contains(position) else { continue }
                    elements[position].reorder(child)
                }
                self = .array(elements)
            case .object(var members):
                self = .array([])
                for position in members.indices {
                    // The member's key is the name JSON-quoted; compare what it decodes to.
                    guard let name = JSONText.unquoted(members[position].key),
                          let child = node.children[.key(name)] else { continue }
                    members[position].value.reorder(child)
                }
                self = .object(members)
            case .scalar:
                break
            }
        }
        guard let collection = node.collection, case let .array(elements) = self,
              elements.count == collection.count else { return }
        if collection.pairs {
            guard elements.count % 2 == 0 else { return }
            let keyed = stride(from: 0, to: elements.count, by: 2).map { (key: elements[$0].bytes, pair: elements[$0...$0 + 1]) }
            self = .array(keyed.sorted { $0.key.lexicographicallyPrecedes($1.key) }.flatMap { $0.pair })
        } else {
            self = .array(elements.map { (bytes: $0.bytes, element: $0) }
                .sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }.map(\.element))
        }
    }

    /// The string a JSON string literal stands for (its quotes and escapes undone).
    static func unquoted(_ literal: ArraySlice<UInt8>) -> String? {
        guard literal.count >= 2 else { return nil }
        if !literal.contains(backslash) { return String(decoding: literal.dropFirst().dropLast(), as: UTF8.self) }
        return try? JSONDecoder().decode(String.self, from: Data(literal))
    }
}
