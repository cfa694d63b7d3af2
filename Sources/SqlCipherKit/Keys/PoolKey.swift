import Foundation
import Synchronization

/// The key a ``DatabasePool`` opens its connections with, kept for readers opened later.
///
/// With a passphrase, it is the key derived once from it (``KeyDerivation``) with the file's salt,
/// so no connection of the pool runs SQLCipher's key derivation; when derivation is not possible
/// in this process, the passphrase itself. Its bytes are zeroed when the pool closes (and when a
/// rekey replaces them); after that no connection can be opened with it.
final class PoolKey: Sendable {
    /// The bytes, in a form that makes a fresh ``KeyMaterial`` for each connection.
    enum Secret {
        case passphrase(SecretBytes)
        case raw(key: SecretBytes, salt: SecretBytes?)
        /// SQLCipher's raw-key literal with the salt, `x'<key><salt>'`: the derived key.
        case literal(SecretBytes)
    }

    private let secret: Mutex<Secret?>
    /// Set (under the lock of `secret`) by ``wipe()``: no key is kept after it.
    private let isWiped = Atomic<Bool>(false)

    init(_ secret: Secret) {
        self.secret = Mutex(secret)
    }

    /// A new ``KeyMaterial`` for one connection (zeroed when that connection's opening is done
    /// with it), or ``SqlCipherError/databaseClosed`` once the key was wiped.
    func material() throws -> KeyMaterial {
        try secret.withLock { secret in
            switch secret {
            case .passphrase(let bytes):
                return try KeyMaterial(passphrase: bytes.collection)
            case let .raw(key, salt):
                return try KeyMaterial(rawKey: key.view, salt: salt?.view)
            case .literal(let text):
                return try KeyMaterial(literal: text.collection)
            case nil:
                throw SqlCipherError.databaseClosed
            }
        }
    }

    /// Whether connections are keyed with the passphrase (each one then runs the key derivation).
    var isPassphrase: Bool {
        secret.withLock { if case .passphrase? = $0 { return true } else { return false } }
    }

    /// The salt kept with a raw key, if one was given: a rekey to a new raw key keeps it, since a
    /// file with a plaintext header does not store its salt.
    var salt: SecretBytes? {
        secret.withLock { secret in
            if case .raw(_, let salt)? = secret, let salt { return SecretBytes(salt.collection) }
            return nil
        }
    }

    /// Replaces the key (after a rekey), zeroing the old bytes. After ``wipe()`` (a close that
    /// raced the rekey) the new bytes are zeroed instead of kept.
    func replace(with new: Secret) {
        secret.withLock { secret in
            if isWiped.load(ordering: .relaxed) {
                Self.zero(new)
                return
            }
            Self.zero(secret)
            secret = new
        }
    }

    /// Zeroes the bytes and forgets them.
    func wipe() {
        secret.withLock { secret in
            isWiped.store(true, ordering: .relaxed)
            Self.zero(secret)
            secret = nil
        }
    }

    private static func zero(_ secret: Secret?) {
        switch secret {
        case .passphrase(let bytes), .literal(let bytes): bytes.zero()
        case let .raw(key, salt):
            key.zero()
            salt?.zero()
        case nil: break
        }
    }
}
