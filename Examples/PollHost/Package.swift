// swift-tools-version:6.2
import PackageDescription

// A host of one's own, as a user writes it: FeedbackHost is a dependency (by path here; by URL and version in a
// project of yours), only its products are used, and one system of our own is served beside a built-in one.
let package = Package(
    name: "PollHost",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "FeedbackHost", path: "../.."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "Poll",
            dependencies: [
                .product(name: "SystemKit", package: "FeedbackHost"),
                .product(name: "FeedbackLoop", package: "FeedbackHost"),
            ]
        ),
        .executableTarget(
            name: "poll-host",
            dependencies: [
                "Poll",
                .product(name: "FeedbackService", package: "FeedbackHost"),
                .product(name: "Systems", package: "FeedbackHost"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "PollTests",
            dependencies: [
                "Poll",
                .product(name: "FeedbackTesting", package: "FeedbackHost"),
                .product(name: "FeedbackJSON", package: "FeedbackHost"),
                .product(name: "FeedbackLoop", package: "FeedbackHost"),
                .product(name: "SystemKit", package: "FeedbackHost"),
                .product(name: "Upstream", package: "FeedbackHost"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
