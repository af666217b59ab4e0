// swift-tools-version:6.1
import PackageDescription

// Benchmarks and the peers they are measured against. Never a dependency of the product.
let package = Package(
    name: "FeedbackHostBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "FeedbackHost", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // Counts heap allocations for the benchmarks that report allocations per operation.
        .target(name: "MallocCounter"),
        .executableTarget(
            name: "LoopBenchmark",
            dependencies: [
                "MallocCounter",
                .product(name: "FeedbackLoop", package: "FeedbackHost"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: [.unsafeFlags(["-cross-module-optimization"])]
        ),
        .executableTarget(
            name: "HTTPServerBench",
            dependencies: [
                .product(name: "HTTPServer", package: "FeedbackHost"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.unsafeFlags(["-cross-module-optimization"])]
        ),
        .executableTarget(
            name: "HummingbirdPeer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "FeedbackLoop", package: "FeedbackHost"),
                .product(name: "FeedbackService", package: "FeedbackHost"),
                .product(name: "Systems", package: "FeedbackHost"),
            ]
        ),
        // SSE fan-out load client (C: epoll and raw sockets, one thread); see docs/BENCHMARKS.md "SSE fan-out".
        .executableTarget(name: "SSEFanout"),
        .executableTarget(name: "LoopbackFloor"),
        // The floor of a durable posted event (C: epoll, one SQLite writer thread); see docs/BENCHMARKS.md, issue 17.
        .executableTarget(name: "JournalFloor", linkerSettings: [.linkedLibrary("sqlite3")]),
        .executableTarget(
            name: "CurlBenchmark",
            dependencies: [
                .product(name: "CurlClient", package: "FeedbackHost"),
                .product(name: "Upstream", package: "FeedbackHost"),
            ],
            swiftSettings: [.unsafeFlags(["-cross-module-optimization"])]
        ),
        .executableTarget(
            name: "PagingBenchmark",
            dependencies: [
                .product(name: "CurlClient", package: "FeedbackHost"),
                .product(name: "Upstream", package: "FeedbackHost"),
            ]
        ),
        .executableTarget(
            name: "JournalBenchmark",
            dependencies: [
                .product(name: "SessionJournal", package: "FeedbackHost"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.unsafeFlags(["-cross-module-optimization"])]
        ),
        // verify throughput (issue 22): writes a journal as the recorder does; scripts/verify-bench.sh times verify.
        .executableTarget(
            name: "VerifyBenchmark",
            dependencies: [
                .product(name: "SessionJournal", package: "FeedbackHost"),
                .product(name: "SystemKit", package: "FeedbackHost"),
                .product(name: "Systems", package: "FeedbackHost"),
                .product(name: "FeedbackJSON", package: "FeedbackHost"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.unsafeFlags(["-cross-module-optimization"])]
        ),
        // A RemoteStore following a session that receives 1,000 events/s: lag and client CPU per event (issue 34).
        .executableTarget(
            name: "StoreFollow",
            dependencies: [
                .product(name: "FeedbackHostClient", package: "FeedbackHost"),
                .product(name: "FeedbackHostTesting", package: "FeedbackHost"),
                .product(name: "Systems", package: "FeedbackHost"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
