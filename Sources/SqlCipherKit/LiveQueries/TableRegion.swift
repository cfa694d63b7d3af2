/// A set of tables, or every table: what a statement may read or write, and what an observation
/// depends on.
///
/// Names are folded to lowercase because SQLite compares identifiers without regard to ASCII case.
/// The schema (`main`, `temp`, an attached name) is ignored: two tables of the same name in
/// different schemas count as one, which can only cause an extra fetch, never a missed change.
struct TableRegion: Equatable {
    private(set) var tables: Set<String> = []
    private(set) var isEverything = false

    /// Every table, for statements whose effect cannot be known (see ``StatementAccess``).
    static var everything: TableRegion {
        var region = TableRegion()
        region.isEverything = true
        return region
    }

    var isEmpty: Bool { !isEverything && tables.isEmpty }

    mutating func insert(_ name: String) {
        guard !isEverything else { return }
        tables.insert(name.lowercased())
    }

    mutating func formUnion(_ other: TableRegion) {
        if other.isEverything {
            self = .everything
        } else if !isEverything && !other.tables.isEmpty {
            tables.formUnion(other.tables)
        }
    }

    func intersects(_ other: TableRegion) -> Bool {
        if isEmpty || other.isEmpty { return false }
        if isEverything || other.isEverything { return true }
        return !tables.isDisjoint(with: other.tables)
    }
}
