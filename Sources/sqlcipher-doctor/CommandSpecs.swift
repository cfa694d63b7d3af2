extension CommandSpec {
    /// The synopsis of every command, at the top of the general help.
    static let synopsis = """
        usage: sqlcipher-doctor [--json] [--library PATH]
               sqlcipher-doctor inspect [--json] FILE...
               sqlcipher-doctor verify KEY-SOURCE [--json] [--library PATH] [SETTINGS] FILE...
               sqlcipher-doctor [COMMAND] --help
        """

    static let report = CommandSpec(
        command: .report, flags: ["--json"], valued: ["--library"], takesFiles: false, refused: [:],
        help: synopsis + """


            Without a command: loads the SQLCipher library the way SqlCipherKit does, proves the binding
            (relocation audit, cipher identity), lists the other SQLite libraries in the process and runs
            an encryption self-test in a temporary folder, then prints a report.

              --json          print one JSON object instead of the report
              --library PATH  use the SQLCipher library at PATH (default: $SQLCIPHERKIT_LIBRARY, then
                              discovery of libsqlcipher.so.1, then libsqlcipher.so.0)
              -h, --help      print this help

            Commands (each has its own --help):
              inspect FILE...  says what each file is without a key, and never modifies it
              verify FILE...   proves that a key opens each file and that it is intact, without
                               changing a byte of it

            Exit codes: 0 every check passed (inspect: every file was found and read; verify: every
            file verified), 1 a check failed (inspect: a file is missing or unreadable; verify: a file
            did not verify), 2 usage error.
            """)

    static let inspect = CommandSpec(
        command: .inspect, flags: ["--json"], valued: [], takesFiles: true, refused: [:],
        help: """
            usage: sqlcipher-doctor inspect [--json] [--] FILE...

            Says what each file is without a key: missing, empty, plaintext, plaintext-header,
            encrypted or not-a-database, with the facts read (page size, journal mode, page count,
            the -wal/-shm/-journal beside it). Reads at most the header and three 16 KiB samples and
            never opens the file with SQLite, so it never writes, locks or creates anything.

              --json      print one JSON object instead of the text
              --          every later argument is a file name, even one starting with -
              -h, --help  print this help

            Exit codes: 0 every file was found and read, 1 a file is missing or unreadable (the
            report still covers every file), 2 usage error.
            """)

    /// Why a key is never taken from the command line.
    static let keyOnCommandLine = "a key on the command line can be read by every user of this machine "
        + "(ps, /proc/PID/cmdline) while the doctor runs, and stays in the shell's history; give it with "
        + "--key-env NAME, --key-file PATH or --key-stdin (or --raw-key-env, --raw-key-file, --raw-key-stdin "
        + "for a raw key of 64 hex digits)"

    static let verify = CommandSpec(
        command: .verify,
        flags: ["--json", "--key-stdin", "--raw-key-stdin", "--no-hmac"],
        valued: ["--library", "--key-env", "--key-file", "--raw-key-env", "--raw-key-file",
                 "--cipher-compatibility", "--cipher-page-size", "--kdf-iter", "--kdf-algorithm", "--hmac-algorithm",
                 "--salt", "--plaintext-header-size"],
        takesFiles: true,
        refused: Dictionary(uniqueKeysWithValues: ["--key", "--raw-key", "--passphrase", "--password"].map {
            ($0, "\($0) is not accepted: " + keyOnCommandLine)
        }),
        help: """
            usage: sqlcipher-doctor verify KEY-SOURCE [--json] [--library PATH] [SETTINGS] [--] FILE...

            Proves that the key opens each file and that the file is intact, and changes nothing:
            the file is opened read-only as immutable (no lock, no journal, nothing created), or,
            when a -wal holds frames or a hot -journal exists, a private copy in $TMPDIR is checked
            instead. Reports whether the key was accepted, which settings opened the file (the
            library's defaults first; on SQLCipher 4 then SQLCipher 3's) and which SQLCipher
            versions can read it, the page count, cipher_integrity_check (SQLCipher 4.2 and later),
            integrity_check, and the tables with their row counts.

            KEY-SOURCE, exactly one (never the key itself: \(keyOnCommandLine.split(separator: ";")[0])):
              --key-env NAME          the passphrase is the value of environment variable NAME
              --key-file PATH         the passphrase is the content of PATH (one final newline removed)
              --key-stdin             the passphrase is read from standard input (one final newline
                                      removed; not echoed when it is a terminal)
              --raw-key-env NAME      a raw key, 64 hex digits (32 bytes), no key derivation: from NAME
              --raw-key-file PATH     ... from the file PATH
              --raw-key-stdin         ... from standard input

            SETTINGS, for files made with non-default settings (then only these are tried):
              --cipher-compatibility N  3 or 4: start from that version's defaults
              --cipher-page-size N      the page size (a power of two from 1024 to 65536)
              --kdf-iter N              the PBKDF2 iterations of a passphrase
              --kdf-algorithm D         the PBKDF2 digest: sha1, sha256 or sha512 (SQLCipher 4)
              --hmac-algorithm D        the page HMAC's digest: sha1, sha256 or sha512 (SQLCipher 4)
              --no-hmac                 a file written with PRAGMA cipher_use_hmac = OFF: its pages
                                        carry no HMAC, so cipher_integrity_check is skipped
              --salt HEX                for a file with a plaintext header, which does not store its
                                        salt: the salt it was created with, 32 hex digits (as PRAGMA
                                        cipher_salt prints it; x'...' accepted) (SQLCipher 4)
              --plaintext-header-size N the size of that header in bytes (default 32; with --salt)

              --json          print one JSON object instead of the text
              --library PATH  use the SQLCipher library at PATH (default: $SQLCIPHERKIT_LIBRARY, then
                              discovery)
              --              every later argument is a file name, even one starting with -
              -h, --help      print this help

            Exit codes: 0 every file verified, 1 a file did not (missing, not encrypted, key rejected,
            damaged, or not verifiable) or the library could not be loaded, 2 usage error (including a
            key source that gives no key).
            """)
}
