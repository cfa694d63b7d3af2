// swift-tools-version: 6.2
import PackageDescription

// SqlCipherKit never links libsqlcipher (nor libsqlite3): the C bridge loads SQLCipher at run
// time from an explicit path and resolves every function from that handle. Only the test
// targets link the plaintext libsqlite3, on purpose, to prove the two can live side by side.
let package = Package(
    name: "SqlCipherKit",
    products: [
        .library(name: "SqlCipherKit", targets: ["SqlCipherKit"]),
        .executable(name: "sqlcipher-doctor", targets: ["sqlcipher-doctor"]),
        .executable(name: "sqlcipherkit-bench", targets: ["sqlcipherkit-bench"]),
    ],
    targets: [
        .target(
            name: "CSqlCipherBridge",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        .target(
            name: "SqlCipherKit",
            dependencies: ["CSqlCipherBridge"]
        ),
        .executableTarget(
            name: "sqlcipher-doctor",
            dependencies: ["SqlCipherKit"]
        ),
        // Plaintext system SQLite, for tests and test helpers only.
        .systemLibrary(name: "CSQLite3", path: "Sources/CSQLite3"),
        // A fault-injecting VFS over the loaded library's "unix" VFS, for the reliability tests.
        .target(
            name: "CSqlCipherTestVFS",
            dependencies: ["CSqlCipherBridge"]
        ),
        // A child process for linking, crash and fault scenarios; links libsqlite3 on purpose.
        .executableTarget(
            name: "sqlcipherkit-test-helper",
            dependencies: ["SqlCipherKit", "CSQLite3", "CSqlCipherTestVFS"]
        ),
        // The benchmark floor: the bench's loops in C, calling the bridge's loaded library.
        .target(
            name: "CSqlCipherBenchFloor",
            dependencies: ["CSqlCipherBridge"]
        ),
        // Benchmarks against that floor (docs/performance.md): swift run -c release sqlcipherkit-bench.
        .executableTarget(
            name: "sqlcipherkit-bench",
            dependencies: ["SqlCipherKit", "CSqlCipherBenchFloor"]
        ),
        // The seed's examples in every isolation context (top-level code, @MainActor, an actor,
        // an async function, Task.detached, a @Sendable handler): a compile error fails the build.
        .executableTarget(
            name: "sqlcipherkit-isolation-examples",
            dependencies: ["SqlCipherKit"]
        ),
        // The same examples in a module whose default isolation is the main actor (Swift 6.2, as
        // new app templates set it), which needs the 6.2 tools version above. The two upcoming
        // features are the rest of what those templates' "Approachable Concurrency" turns on (the
        // others are already part of Swift 6): nonisolated async functions run on the caller's
        // actor, and conformances of main-actor types are main-actor isolated where they can be.
        .executableTarget(
            name: "sqlcipherkit-isolation-examples-mainactor",
            dependencies: ["SqlCipherKit"],
            swiftSettings: [.defaultIsolation(MainActor.self),
                            .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
                            .enableUpcomingFeature("InferIsolatedConformances")]
        ),
        .testTarget(
            name: "SqlCipherKitTests",
            dependencies: ["SqlCipherKit", "CSQLite3", "sqlcipherkit-test-helper", "sqlcipher-doctor",
                           "sqlcipherkit-bench", "sqlcipherkit-isolation-examples",
                           "sqlcipherkit-isolation-examples-mainactor"]
        ),
    ],
    swiftLanguageModes: [.v6],
    cLanguageStandard: .c11
)
