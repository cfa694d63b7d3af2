import Foundation
import Synchronization

/// The key a ``DatabasePool`` opens its connections with, kept for readers opened later.
///
/// With a passphrase, it is the key derived once from it (``KeyDerivation``) with the file's salt
/// (a ``DatabaseKey`` of kind ``DatabaseKey/Kind/derived``), so no connection of the pool runs
/// SQLCipher's key derivation; when derivation is not possible in this process, the passphrase
/// itself. Its bytes are zeroed when the pool closes (and when a rekey replaces them); after that
/// no connection can be opened with it.
final class PoolKey: Sendable {
    private let key: Mutex<DatabaseKey?>
    /// Set (under the lock of `key`) by ``wipe()``: no key is kept after it.
    private let isWiped = Atomic<Bool>(false)

    /// Keeps `key`, which must be the pool's own copy (see ``DatabaseKey/copy()``): its bytes are
    /// zeroed here.
    init(_ key: DatabaseKey) {
        self.key = Mutex(key)
    }

    /// A new ``KeyMaterial`` for one connection (zeroed when that connection's opening is done
    /// with it), or ``SqlCipherError/databaseClosed`` once the key was wiped.
    func material() throws -> KeyMaterial {
        try key.withLock { key in
            guard let key else { throw SqlCipherError.databaseClosed }
            return try key.material()
        }
    }

    /// Whether connections are keyed with the passphrase (each one then runs the key derivation).
    var isPassphrase: Bool {
        key.withLock { $0?.kind == .passphrase }
    }

    /// The salt kept with a raw key, if one was given: a rekey to a new raw key keeps it, since a
    /// file with a plaintext header does not store its salt.
    var salt: Data? {
        key.withLock { $0?.kind == .raw ? $0?.salt : nil }
    }

    /// Replaces the key (after a rekey), zeroing the old bytes. After ``wipe()`` (a close that
    /// raced the rekey) the new bytes are zeroed instead of kept. `new` must be the pool's own copy.
    func replace(with new: DatabaseKey) {
        key.withLock { key in
            if isWiped.load(ordering: .relaxed) {
                new.zero()
                return
            }
            key?.zero()
            key = new
        }
    }

    /// Zeroes the bytes and forgets them.
    func wipe() {
        key.withLock { key in
            isWiped.store(true, ordering: .relaxed)
            key?.zero()
            key = nil
        }
    }
}
