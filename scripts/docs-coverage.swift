// Lists SqlCipherKit's public symbols that have no doc comment; exits 1 when there is one.
// Run by scripts/docs.sh: swift scripts/docs-coverage.swift DIR (DIR holds SqlCipherKit*.symbols.json).
//
// A symbol counts when it is public and either
// - declared in Sources/SqlCipherKit (it has a source location there), or
// - inherited by one of the package's types from another module's protocol extension (Foundation's
//   LocalizedError defaults, say): DocC lists it on the type's page, so the type declares it and
//   says what it does.
// Members the compiler or the standard library generates (hashValue, hash(into:), init(rawValue:),
// literal initializers) have no source to comment and are left out, and so are the standard
// library's own algorithms a type inherits (AsyncSequence's map, filter, ... from _Concurrency):
// they are documented where they are declared.
//
// The total counts a member once per type DocC lists it on: a requirement's default implementation
// in a protocol extension of this package appears on the protocol and again on each conforming type
// (DatabaseAccess's methods on Database and DatabasePool). The script also prints how many distinct
// declarations those are, the size of the API a reader learns.
import Foundation

let directory = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : ".build/docs-symbol-graphs"
let files = (try? FileManager.default.contentsOfDirectory(atPath: directory))?
    .filter { $0.hasPrefix("SqlCipherKit") && $0.hasSuffix(".symbols.json") }.sorted() ?? []
guard files.contains("SqlCipherKit.symbols.json") else {
    FileHandle.standardError.write(Data("docs-coverage: no SqlCipherKit.symbols.json in \(directory)\n".utf8))
    exit(2)
}

var missing: [String] = []
var checked = 0
var declarations = Set<String>()
for file in files {
    let url = URL(fileURLWithPath: directory).appendingPathComponent(file)
    guard let graph = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any],
          let symbols = graph["symbols"] as? [[String: Any]] else {
        FileHandle.standardError.write(Data("docs-coverage: \(file) is not a symbol graph\n".utf8))
        exit(2)
    }
    let isMainGraph = file == "SqlCipherKit.symbols.json"
    for symbol in symbols {
        let access = symbol["accessLevel"] as? String ?? ""
        guard access == "public" || access == "open" else { continue }
        let uri = (symbol["location"] as? [String: Any])?["uri"] as? String ?? ""
        let extendedModule = (symbol["swiftExtension"] as? [String: Any])?["extendedModule"] as? String
        let declaredHere = uri.contains("/Sources/SqlCipherKit/")
        let standardLibrary = extendedModule == "Swift" || extendedModule == "_Concurrency"
        let inheritedFromLibrary = isMainGraph && uri.isEmpty && extendedModule != nil && !standardLibrary
        guard declaredHere || inheritedFromLibrary else { continue }
        checked += 1
        let identifier = (symbol["identifier"] as? [String: Any])?["precise"] as? String ?? ""
        declarations.insert(String(identifier.split(separator: "::SYNTHESIZED::", maxSplits: 1).first ?? ""))
        let lines = ((symbol["docComment"] as? [String: Any])?["lines"] as? [[String: Any]]) ?? []
        let text = lines.compactMap { $0["text"] as? String }.joined().trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty {
            let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
            let kind = (symbol["kind"] as? [String: Any])?["displayName"] as? String ?? "symbol"
            var place = "inherited from \(extendedModule ?? "another module")"
            if declaredHere, let range = uri.range(of: "/Sources/") {
                let position = (symbol["location"] as? [String: Any])?["position"] as? [String: Any]
                let line = (position?["line"] as? Int).map { ":\($0 + 1)" } ?? ""
                place = String(uri[range.lowerBound...].dropFirst()) + line
            }
            missing.append("\(path) (\(kind), \(place))")
        }
    }
}

if missing.isEmpty {
    print("docs-coverage: all \(checked) public symbols of SqlCipherKit have a doc comment "
        + "(\(declarations.count) declarations; the rest are default implementations listed again on conforming types)")
} else {
    print("docs-coverage: \(missing.count) public symbol(s) of SqlCipherKit have no doc comment; add a /// comment:")
    for entry in missing.sorted() { print("  \(entry)") }
    exit(1)
}
