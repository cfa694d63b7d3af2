import SqlCipherKit

extension DoctorReport {
    /// The report for a person, one section per check, ending with the verdict.
    var text: String {
        var lines = ["sqlcipher-doctor: SQLCipher binding report", ""]
        lines += librarySection + [""] + auditSection + [""] + processSection + [""] + selfTestSection + [""]
        if ok {
            lines.append("Result: OK. Every check passed; SqlCipherKit can use this library in this process.")
        } else {
            lines.append("Result: FAILED. \(error ?? "A check failed.")")
        }
        return TerminalText.lines(lines)
    }

    private func heading(_ title: String, _ status: Status) -> String {
        title.padding(toLength: 24, withPad: " ", startingAt: 0) + status.rawValue.uppercased()
    }

    private func field(_ name: String, _ value: String) -> String {
        "  " + name.padding(toLength: 22, withPad: " ", startingAt: 0) + value
    }

    private var librarySection: [String] {
        var lines = [heading("Library", libraryStatus)]
        let chosen = requestedPath.map { "\(source.rawValue) (\($0))" } ?? source.rawValue
        lines.append(field("chosen by", chosen))
        if let library {
            lines.append(field("path", library.path))
            lines.append(field("loaded with", library.wasAlreadyLoaded
                ? "already in the process before SqlCipherKit loaded it (the isolating flags did not apply; "
                    + "the audit checked its existing bindings)"
                : library.loadMethod))
            lines.append(field("SQLite", "\(library.sqliteVersion) (\(library.sqliteVersionNumber))"))
            lines.append(field("SQLCipher", library.cipherVersion))
            let provider = [library.cipherProvider, library.cipherProviderVersion.map { "(\($0))" }]
                .compactMap { $0 }.joined(separator: " ")
            lines.append(field("crypto provider", provider.isEmpty ? "not reported" : provider))
            lines.append(field("at exit", Self.exitText(library.exitProtection)))
            let capabilities = library.capabilities
            let features = capabilities.features.sorted().map(\.rawValue).joined(separator: ", ")
            lines.append(field("features", features.isEmpty ? "none of those probed" : features))
            if !capabilities.missing.isEmpty {
                lines.append(field("missing", capabilities.missing.map(\.rawValue).joined(separator: ", ")))
            }
            lines += warnings.map { "  warning: " + $0 }
        } else {
            if let path = libraryPath { lines.append(field("path", path)) }
            lines.append(field("refused", loadError.map { Self.libraryErrorText($0, source: source, requested: requestedPath) }
                ?? "no library was loaded"))
        }
        return lines
    }

    /// What the bridge did so that a process exiting while threads still read cannot crash.
    static func exitText(_ protection: SqlCipherLibrary.ExitProtection) -> String {
        switch protection {
        case .cleanupOff:
            return "libcrypto's cleanup is off (libcrypto came with the library)"
        case .exitGate:
            return "libcrypto was loaded before the library, or the library (SQLCipher 4.7+) frees its own memory at exit: "
                + "an exit waits for calls in progress (up to 10 s)"
        case .notOpenSSL:
            return "the crypto provider is not libcrypto: nothing to do"
        }
    }

    private var auditSection: [String] {
        var lines = [heading("Binding audit", auditStatus)]
        let audit = self.audit
        switch auditStatus {
        case .pass:
            if library?.bindingAudit.isSupported == false {
                lines.append("  not available on this platform (two-level namespaces isolate the library instead)")
            } else {
                let families = auditFamilies.map {
                    " (\($0.sqlite3) sqlite3_*, \($0.sqlcipher) sqlcipher_*, \($0.other) other)"
                } ?? ""
                lines.append("  \(audit.checked ?? 0) relocations against the library's own functions checked\(families); "
                    + "all are bound inside the library")
            }
        case .fail:
            lines.append("  \(audit.foreignCount) of \(audit.checked ?? 0) relocations against the library's own functions "
                + "are bound outside it")
            for foreign in audit.foreign {
                lines.append("  e.g. \(foreign.symbol) -> \(foreign.object)")
            }
        case .skipped:
            lines.append("  no result: the library was refused (see Library above)")
        }
        return lines
    }

    private var processSection: [String] {
        var lines = ["Process"]
        if otherLibraries.isEmpty {
            lines.append("  other SQLite libraries: none")
        } else {
            lines.append(library != nil
                ? "  other SQLite libraries (the audit proved SQLCipher does not use them):"
                : "  other SQLite libraries:")
            for other in otherLibraries {
                lines.append("    \(other.path) (SQLite \(other.version))")
            }
        }
        return lines
    }

    private var selfTestSection: [String] {
        var lines = [heading("Encryption self-test", selfTestStatus)]
        guard let selfTest else {
            lines.append("  not run: no library was loaded")
            return lines
        }
        lines.append("  key: a random \(selfTest.keyKind == .passphrase ? "passphrase" : "raw key")")
        for check in selfTest.checks {
            lines.append("  [\(check.passed ? "pass" : "FAIL")] \(check.name.rawValue): \(check.detail)")
        }
        return lines
    }
}
