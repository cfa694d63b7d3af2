import Foundation

// How the values that hold key bytes print. Swift prints any value without being asked: `dump`,
// `Mirror(reflecting:)` and `String(reflecting:)` walk stored properties, and `Data` shows its
// bytes as decimal numbers when it is shorter than 64 bytes. A `DatabaseKey` made with
// `rawKey(_:salt:)` showed its salt that way, and its `SecretBytes` showed the address and length
// of the key. Every type that holds key material therefore says what it is and nothing more: no
// bytes, no length, no address, and a mirror without children, so nothing nested can be reached.
// (Security/SecretRenderingTests walks every public value and every way Swift prints one.)

extension DatabaseKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// What kind of key this is, never its bytes, their length or its salt: `DatabaseKey.passphrase(<redacted>)`,
    /// so that a key printed, interpolated or logged by mistake shows nothing of the secret.
    public var description: String {
        switch kind {
        case .passphrase:
            return salt == nil ? "DatabaseKey.passphrase(<redacted>)" : "DatabaseKey.passphrase(<redacted>, salt: <redacted>)"
        case .raw: return salt == nil ? "DatabaseKey.rawKey(<redacted>)" : "DatabaseKey.rawKey(<redacted>, salt: <redacted>)"
        case .derived: return "DatabaseKey.derived(<redacted>)"
        }
    }

    /// The same text as ``description``: `debugPrint` and `String(reflecting:)` show no more.
    public var debugDescription: String { description }

    /// A mirror with no children: `dump` and `Mirror(reflecting:)` cannot reach the key bytes
    /// or the salt.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

extension SecretBytes: CustomStringConvertible, CustomReflectable {
    var description: String { "SecretBytes(<redacted>)" }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

extension KeyMaterial: CustomStringConvertible, CustomReflectable {
    var description: String { "KeyMaterial(<redacted>)" }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

extension PoolKey: CustomStringConvertible, CustomReflectable {
    var description: String { "PoolKey(<redacted>)" }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}
