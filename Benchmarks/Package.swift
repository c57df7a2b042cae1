// swift-tools-version:6.2
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which is whatever the clone was called
// ("wire", "main", ...): derive it so `.product(... package:)` works in every checkout.
let wirePackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

// Benchmarks live in their own package so that Wire's library targets keep no dependency.
let package = Package(
    name: "WireBenchmarks",
    dependencies: [
        .package(path: ".."),
        // The peer measured against: NIO's HTTP/1.1 decoder wraps llhttp.
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.2"),
    ],
    targets: [
        // Event-loop figures: cross-thread wake-up latency, timer lateness, idle CPU.
        .executableTarget(
            name: "LoopFigures",
            dependencies: [.product(name: "Wire", package: wirePackage)]
        ),
        // Client-engine figures: requests/s and client CPU per request through HTTPClient.
        .executableTarget(
            name: "ClientFigures",
            dependencies: [.product(name: "Wire", package: wirePackage)]
        ),
        // Parser figures: ns per message and bytes per second, Wire's HTTP1Parser against NIO's HTTP decoders.
        .executableTarget(
            name: "ParseFigures",
            dependencies: [
                .product(name: "Wire", package: wirePackage),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
