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
    ],
    targets: [
        .executableTarget(
            name: "LoopBenchmark",
            dependencies: [
                .product(name: "FeedbackLoop", package: "FeedbackHost"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: [.unsafeFlags(["-cross-module-optimization"])]
        ),
        .executableTarget(
            name: "CurlBenchmark",
            dependencies: [
                .product(name: "CurlClient", package: "FeedbackHost")
            ],
            swiftSettings: [.unsafeFlags(["-cross-module-optimization"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
