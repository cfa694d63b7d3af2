import Foundation
@testable import SqlCipherKit

/// A migration made of closures, for tests; `foreignKeyChecks` defaults as ``Migration``'s does.
struct StepMigration: Migration {
    let id: String
    let foreignKeyChecks: ForeignKeyChecks
    let upBody: @Sendable (MigrationContext) throws -> Void
    let downBody: (@Sendable (MigrationContext) throws -> Void)?

    init(_ id: String, foreignKeyChecks: ForeignKeyChecks = .immediate,
         up: @escaping @Sendable (MigrationContext) throws -> Void,
         down: (@Sendable (MigrationContext) throws -> Void)? = nil) {
        self.id = id
        self.foreignKeyChecks = foreignKeyChecks
        self.upBody = up
        self.downBody = down
    }

    func up(_ ctx: MigrationContext) throws { try upBody(ctx) }

    func down(_ ctx: MigrationContext) throws {
        guard let downBody else { throw SqlCipherError.migrationNotReversible(id: id) }
        try downBody(ctx)
    }
}

extension Database {
    /// The table's column names, in order.
    func builderColumns(_ table: String) async throws -> [String] {
        try await query("PRAGMA table_info(\(try SQLRenderer.quoteIdentifier(table)))").compactMap { $0.get("name", as: String.self) }
    }

    /// The names of the schema objects of one type, sorted.
    func builderSchemaNames(_ type: String) async throws -> [String] {
        try await query("SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name", type)
            .compactMap { $0.get("name", as: String.self) }
    }

    func builderScalarInt(_ sql: String) async throws -> Int? {
        try await query(sql).first?.get(0, as: Int.self)
    }
}
