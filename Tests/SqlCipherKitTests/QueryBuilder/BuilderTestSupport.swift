import Foundation
@testable import SqlCipherKit

extension Database {
    /// The statement cache's counters, for tests.
    func builderCacheCounters() throws -> (hits: Int, misses: Int) {
        let connection = try liveConnection()
        return (connection.cache.hits, connection.cache.misses)
    }
}

/// A fresh encrypted database (raw key: no key derivation) in its own temporary directory.
func builderTestDatabase(_ dir: TemporaryDirectory, _ name: String = "test.db") throws -> Database {
    try Database(path: dir.path(name), rawKey: rawKey())
}
