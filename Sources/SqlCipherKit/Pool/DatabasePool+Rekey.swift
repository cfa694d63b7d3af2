import Foundation

extension DatabasePool {
    /// Changes the pool's key (a passphrase, a string literal, passphrase bytes or a raw key): a
    /// barrier for the whole pool.
    ///
    /// ```swift
    /// try await pool.rekey("new passphrase")
    /// ```
    ///
    /// New reads wait; the running ones finish; every reader is closed; the writer re-encrypts
    /// the file (``Database/rekey(_:progress:)``); a fresh connection proves the new
    /// key and becomes the first reader; then reads resume, on readers that all use the new key.
    /// Writes wait behind the rekey on the writer. With a passphrase, the new key is derived once,
    /// as when opening.
    ///
    /// `progress` and cancellation work as for ``Database/rekey(_:progress:)``. When the
    /// rewrite fails or is stopped by a cancellation, the file still opens with the old key and
    /// the pool is closed (as that ``Database`` closes itself): open it again with the old key. A
    /// rekey refused before the rewrite starts leaves the pool open and its key unchanged.
    /// - Throws: ``SqlCipherError/notEncrypted``, ``SqlCipherError/rekeyFailed(path:reason:)``,
    ///   ``SqlCipherError/databaseClosed``, `CancellationError`.
    public func rekey(_ key: DatabaseKey, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
        try await rekey(to: key, progress: progress)
    }

    /// Changes the pool's key to a raw 32-byte key. See ``rekey(_:progress:)``.
    public func rekey(rawKey: Data, progress: (@Sendable (DatabaseProgress) -> Void)? = nil) async throws {
        try await rekey(to: .rawKey(rawKey), progress: progress)
    }

    /// The one path of every rekey of a pool. `requested` is the caller's key, never cleared here
    /// (it may key another database); the pool keeps a copy of its own.
    private func rekey(to requested: DatabaseKey, progress: (@Sendable (DatabaseProgress) -> Void)?) async throws {
        // A file with a plaintext header keeps its salt outside itself: the one the pool was given.
        let requested = try requested.keepingSalt(key?.salt, of: cipherSettings)
            .resolved(for: cipherSettings, library: library)
        let material = try requested.material()
        let (newKey, secret): (DatabaseKey, DatabaseKey)
        if requested.kind == .passphrase {
            (newKey, secret) = try Self.rekeyTarget(passphrase: requested, material: material, pool: self)
        } else {
            // A file with a plaintext header does not store its salt: readers keep the one given.
            (newKey, secret) = (requested, DatabaseKey(kind: .raw, secret: SecretBytes(requested.secret.bytes),
                                                       salt: key?.salt))
        }
        // A passphrase's derived key names the salt the pool read; a caller's raw key is checked.
        try await rekey(to: newKey, keeping: secret, checkingSalt: requested.kind != .passphrase, progress: progress)
    }

    /// Rekeys the writer with `newKey`, then keys readers with `secret` (the pool's own copy).
    private func rekey(to newKey: DatabaseKey, keeping secret: DatabaseKey, checkingSalt: Bool,
                       progress: (@Sendable (DatabaseProgress) -> Void)?) async throws {
        guard !isClosed else { throw SqlCipherError.databaseClosed }
        guard isEncrypted, let key else { throw SqlCipherError.notEncrypted }
        let relay = self.relay
        try await readers.exclusively {
            do {
                // Observers are woken on the writer's executor, before its next call can commit
                // (see _withConnection(.write)).
                try await writer.performRekey(newKey, checkingSalt: checkingSalt, progress: progress,
                                              afterwards: { relay.publish() })
            } catch {
                // A writer that closed itself is in the state a failed or stopped rewrite leaves;
                // one that refused to start (a cancelled task, an open transaction) is intact.
                if await writer.isClosed { await close() }
                throw error
            }
            // The file has the new key now: a close that raced this rekey ends the pool, not the
            // rekey, which succeeded (and whose new key is then not kept).
            key.replace(with: secret)
            guard !isClosed, let material = try? key.material() else { return }
            // The proof from a fresh connection, which then serves the next read.
            let reader = try Database(path: path, key: material, journalMode: .wal, cipher: cipherSettings,
                                      readOnly: false, setup: readerSetup)
            await readers.adopt(reader)
        }
    }

    /// What the writer is rekeyed with and what readers are keyed with afterwards: the new key
    /// derived once with the file's salt (which a rekey keeps), so that neither the rekey nor the
    /// readers run SQLCipher's derivation; the passphrase when the pool could not derive.
    private static func rekeyTarget(passphrase: DatabaseKey, material: KeyMaterial,
                                    pool: DatabasePool) throws -> (DatabaseKey, DatabaseKey) {
        let fallback = (passphrase, passphrase.copy())
        // A file with a plaintext header gives no salt to derive with: the writer's rekey refuses a
        // passphrase without one and says how to give it, as a Database's does (the derivation's
        // refusal said the key does not open the file, of a pool that had it open).
        guard pool.derivationFallback == nil, pool.key?.isPassphrase == false,
              (pool.cipherSettings.plaintextHeaderSize ?? 0) == 0 else { return fallback }
        switch try KeyDerivation.derivedKey(passphrase: material, path: pool.path, settings: pool.cipherSettings,
                                            library: pool.library) {
        case .derived(let derived):
            let newKey = try derived.key.withRawKeyAndSalt { key, salt in
                DatabaseKey(kind: .raw, secret: SecretBytes(key), salt: salt)
            }
            return (newKey, .derived(derived.key))
        case .fallback:
            return fallback
        }
    }
}
