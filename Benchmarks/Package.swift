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
    ],
    targets: [
        // Event-loop figures: cross-thread wake-up latency, timer lateness, idle CPU.
        .executableTarget(
            name: "LoopFigures",
            dependencies: [.product(name: "Wire", package: wirePackage)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
