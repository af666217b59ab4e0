// swift-tools-version:6.2
import CompilerPluginSupport
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // Warnings fail the build: what `make test` and CI build is warning-free or red.
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "FeedbackHost",
    // The client library (FeedbackHostClient) is for apps: Mutex and Observation set the Apple minimums.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "FeedbackLoop", targets: ["FeedbackLoop"]),
        .library(name: "FeedbackJSON", targets: ["FeedbackJSON"]),
        .library(name: "Upstream", targets: ["Upstream"]),
        .library(name: "SystemKit", targets: ["SystemKit"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "CurlClient", targets: ["CurlClient"]),
        .library(name: "FeedbackService", targets: ["FeedbackService"]),
        .library(name: "Systems", targets: ["Systems"]),
        .library(name: "SessionJournal", targets: ["SessionJournal"]),
        .library(name: "SessionJournalPostgres", targets: ["SessionJournalPostgres"]),
        .library(name: "FeedbackTesting", targets: ["FeedbackTesting"]),
        .library(name: "FeedbackHostTesting", targets: ["FeedbackHostTesting"]),
        .library(name: "FeedbackHostClient", targets: ["FeedbackHostClient"]),
        .executable(name: "feedback-host", targets: ["feedback-host"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(
            url: "https://github.com/apple/swift-configuration.git",
            from: "1.4.0",
            traits: [.defaults, "CommandLineArguments"]
        ),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.1.0"),
        // The macros that derive an event's wire format and the JSON Schemas (FeedbackMacros); 603 goes with Swift 6.3.
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "603.0.1"..<"604.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // Test support: a SQLite VFS that fails writes or syncs on command (fault injection).
        .target(
            name: "CSQLiteFaults",
            dependencies: ["CSQLite"],
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .target(
            name: "SessionJournal",
            dependencies: [
                "CSQLite",
                "CZlib",
                "FeedbackJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // The journal in one PostgreSQL database shared by every replica (`--journal-url`): the only target with libpq.
        .target(
            name: "SessionJournalPostgres",
            dependencies: [
                "SessionJournal",
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            exclude: ["Schema"],
            swiftSettings: strict,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "FeedbackLoop",
            swiftSettings: strict
        ),
        .target(
            name: "FeedbackJSON",
            swiftSettings: strict
        ),
        .target(
            name: "Upstream",
            swiftSettings: strict
        ),
        // The compiler plug-in behind @FeedbackEvent and @FeedbackSchema (declared in SystemKit).
        .macro(
            name: "FeedbackMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "SystemKit",
            dependencies: [
                "FeedbackLoop",
                "FeedbackJSON",
                "FeedbackMacros",
                "Upstream",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Replays a session exported by GET /v1/sessions/{id}/export in `swift test`.
        .target(
            name: "FeedbackTesting",
            dependencies: ["SystemKit", "FeedbackLoop", "FeedbackJSON"],
            swiftSettings: strict
        ),
        // What an app links: a typed store over the HTTP API that predicts with the system's reducer (docs/CLIENT.md).
        .target(
            name: "FeedbackHostClient",
            dependencies: ["SystemKit", "FeedbackLoop", "FeedbackJSON"],
            swiftSettings: strict
        ),
        // Integration tests against a local instance: starts the feedback-host binary (docs/CLIENT.md).
        .target(
            name: "FeedbackHostTesting",
            dependencies: ["FeedbackHostClient", "SystemKit"],
            swiftSettings: strict
        ),
        .target(
            name: "HTTPServer",
            dependencies: [
                "FeedbackJSON",
                "CEpoll",
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "DemoUpstream",
            dependencies: ["HTTPServer"],
            swiftSettings: strict
        ),
        .target(
            name: "CurlClient",
            dependencies: [
                "CCurl",
                "Upstream",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // The session runtime: sessions (active or passive), activation, the journal glue, the clock, containment.
        // No HTTPServer here: `swift build --target SessionRuntime` builds without it.
        .target(
            name: "SessionRuntime",
            dependencies: [
                "FeedbackLoop",
                "FeedbackJSON",
                "Upstream",
                "SystemKit",
                "SessionJournal",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // Looking inside sessions, on the runtime: the inspection (history, states, diffs, the list, export, forks) and
        // the verification that replays the journal through this build (`feedback-host verify`, `verify.on.start`).
        .target(
            name: "SessionInspection",
            dependencies: [
                "SessionRuntime",
                "SessionJournal",
                "SystemKit",
                "FeedbackJSON",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Live state fan-out on the runtime: a session's stream hub, its subscribers, SSE framing.
        .target(
            name: "SessionStreams",
            dependencies: [
                "SessionRuntime",
                "HTTPServer",
                "FeedbackLoop",
                "FeedbackJSON",
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // Tokens and scopes: the only target that imports jwt-kit and swift-crypto.
        .target(
            name: "SessionAuth",
            dependencies: [
                "SessionRuntime",
                "FeedbackJSON",
                "SessionJournal",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "FeedbackService",
            dependencies: [
                "SessionRuntime",
                "SessionInspection",
                "SessionStreams",
                "SessionAuth",
                "FeedbackLoop",
                "FeedbackJSON",
                "Upstream",
                "SystemKit",
                "HTTPServer",
                "CurlClient",
                "SessionJournal",
                "SessionJournalPostgres",
                "DemoUpstream",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Web/Files"],
            swiftSettings: strict,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "Systems",
            dependencies: [
                "FeedbackLoop",
                "FeedbackJSON",
                "Upstream",
                "SystemKit",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "embed-files",
            swiftSettings: strict
        ),
        .plugin(
            name: "EmbedFiles",
            capability: .buildTool(),
            dependencies: ["embed-files"]
        ),
        .executableTarget(
            name: "feedback-host",
            dependencies: [
                "FeedbackService",
                "SessionInspection",
                "SessionJournal",
                "SessionJournalPostgres",
                "Systems",
                "HTTPServer",
                "CurlClient",
                "SystemKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FeedbackLoopTests",
            dependencies: ["FeedbackLoop"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FeedbackJSONTests",
            dependencies: ["FeedbackJSON"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FeedbackMacrosTests",
            dependencies: [
                "FeedbackMacros",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SystemKitTests",
            dependencies: ["SystemKit", "FeedbackLoop"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: [
                "HTTPServer",
                "FeedbackJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FeedbackServiceTests",
            dependencies: [
                "FeedbackService", "Systems", "CurlClient", "SessionJournal", "SessionJournalPostgres", "CSQLiteFaults",
                "FeedbackJSON", "PostgresFixture", "ConformanceChecks",
                "SystemKit", "Upstream", "FeedbackTesting",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            // Read by path (#filePath), not bundled: a journal written by an older build.
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FeedbackHostClientTests",
            dependencies: [
                "FeedbackHostTesting", "FeedbackHostClient", "Systems", "SystemKit", "FeedbackJSON",
                "ConformanceChecks",
                // A test signs its own short-lived tokens (HS256), as a deployment's backend does.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SystemsTests",
            dependencies: [
                "Systems", "FeedbackLoop", "FeedbackService", "CurlClient", "FeedbackJSON", "SystemKit", "Upstream",
                "ConformanceChecks",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FeedbackHostTests",
            dependencies: ["feedback-host", "FeedbackService", "Systems"],
            swiftSettings: strict
        ),
        // A host of one's own with four misbehaving systems beside the counter (Tests/Containment drives it).
        .executableTarget(
            name: "hostile-host",
            dependencies: [
                "FeedbackService", "Systems", "SystemKit", "FeedbackLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/HostileHost",
            swiftSettings: strict
        ),
        // Test support: every answer a test's request gets is checked for our Swift type names (AnswerWords, the
        // list derived from Sources/ by answer_words.py, which the Python tests import too); JSON checked against
        // the published schemas by a validator that is not ours (JSONSchemaValidator, Python's jsonschema).
        .target(
            name: "ConformanceChecks",
            dependencies: ["CurlClient", "Upstream", "FeedbackJSON"],
            path: "Tests/ConformanceChecks",
            exclude: ["answer_words.py"],
            swiftSettings: strict
        ),
        // Test support: a private PostgreSQL server (initdb into a temporary directory, a free port on 127.0.0.1).
        .target(
            name: "PostgresFixture",
            path: "Tests/PostgresFixture",
            swiftSettings: strict
        ),
        .testTarget(
            name: "SessionJournalTests",
            dependencies: [
                "SessionJournal", "SessionJournalPostgres", "CSQLiteFaults", "PostgresFixture",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CurlClientTests",
            dependencies: [
                "CurlClient", "CCurl", "Upstream",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
