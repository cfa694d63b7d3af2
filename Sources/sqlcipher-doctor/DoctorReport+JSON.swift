extension DoctorReport {
    /// The report as one JSON object. The keys are documented in docs/doctor.md.
    var json: JSONValue {
        var members: [(String, JSONValue)] = [("ok", .bool(ok))]
        members.append(("library", libraryJSON))
        members.append(("binding_audit", auditJSON))
        members.append(("process", processJSON))
        members.append(("self_test", selfTestJSON))
        if let error { members.append(("error", .string(error))) }
        return .object(members)
    }

    private var libraryJSON: JSONValue {
        .object([
            ("status", .string(libraryStatus.rawValue)),
            ("path", .optional(libraryPath)),
            ("requested_path", .optional(requestedPath)),
            ("source", .string(source.rawValue)),
            ("load_method", .optional(library?.loadMethod)),
            ("already_loaded", library.map { .bool($0.wasAlreadyLoaded) } ?? .null),
            ("sqlite_version", .optional(library?.sqliteVersion)),
            ("sqlite_version_number", library.map { .int($0.sqliteVersionNumber) } ?? .null),
            ("sqlite_source_id", .optional(library?.sqliteSourceID)),
            ("cipher_version", .optional(library?.cipherVersion)),
            ("cipher_provider", .optional(library?.cipherProvider)),
            ("cipher_provider_version", .optional(library?.cipherProviderVersion)),
        ])
    }

    private var auditJSON: JSONValue {
        let audit = self.audit
        return .object([
            ("status", .string(auditStatus.rawValue)),
            // A binding conflict is an audit result, so the audit ran.
            ("supported", library.map { .bool($0.bindingAudit.isSupported) } ?? (auditStatus == .fail ? .bool(true) : .null)),
            ("checked", audit.checked.map(JSONValue.int) ?? .null),
            ("foreign_count", .int(audit.foreignCount)),
            ("foreign", .array(audit.foreign.map { .object([("symbol", .string($0.symbol)), ("object", .string($0.object))]) })),
            // Added after the keys above, which keep their meaning (`checked` is the total).
            ("checked_sqlite3", auditFamilies.map { .int($0.sqlite3) } ?? .null),
            ("checked_sqlcipher", auditFamilies.map { .int($0.sqlcipher) } ?? .null),
            ("checked_other", auditFamilies.map { .int($0.other) } ?? .null),
        ])
    }

    private var processJSON: JSONValue {
        .object([
            ("other_sqlite_libraries", .array(otherLibraries.map { .string($0.path) })),
            ("other_sqlite_library_versions", .array(otherLibraries.map {
                .object([("path", .string($0.path)), ("version", .string($0.version))])
            })),
        ])
    }

    private var selfTestJSON: JSONValue {
        var members: [(String, JSONValue)] = [
            ("status", .string(selfTestStatus.rawValue)),
            ("header_encrypted", .bool(selfTest?.headerEncrypted ?? false)),
        ]
        if let selfTest {
            members.append(("key_kind", .string(selfTest.keyKind.rawValue)))
            members.append(("checks", .array(selfTest.checks.map {
                .object([("name", .string($0.name.rawValue)), ("passed", .bool($0.passed)), ("detail", .string($0.detail))])
            })))
        } else {
            members.append(("checks", .array([])))
        }
        return .object(members)
    }
}
