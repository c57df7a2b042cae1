// swift-tools-version:6.2
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which is whatever the clone was called ("wire", "main", ...):
// derive it so `.product(... package:)` works in every checkout.
let wirePackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

/// libFuzzer targets for Wire's HTTP/1.1 codec. Build with
/// `swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library`; see README.md.
let package = Package(
    name: "WireFuzz",
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        // Input decoding, the event-log driver and the property checks shared by every target.
        // Declares libFuzzer's LLVMFuzzerRunDriver, which the runtime linked by -sanitize=fuzzer defines.
        .target(name: "CFuzzerDriver"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzerDriver", .product(name: "Wire", package: wirePackage)]
        ),
        .executableTarget(
            name: "FuzzHTTP1Request",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
        .executableTarget(
            name: "FuzzHTTP1Response",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
        .executableTarget(
            name: "FuzzChunked",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
        .executableTarget(
            name: "FuzzRoundTrip",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
        // The state machines of a connection and of the pool, driven by event sequences. They are `package` or
        // internal in Wire, and neither reaches a package of its own such as this one, so these targets import it
        // @testable: run.sh builds with -enable-testing. (Wire's own tests import it plainly; harnesses are not tests.)
        .executableTarget(
            name: "FuzzServerConnection",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
        .executableTarget(
            name: "FuzzClientConnection",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
        .executableTarget(
            name: "FuzzConnectionPool",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
        // The routing netlink parser of reachability (package access in Wire, hence @testable and -enable-testing).
        .executableTarget(
            name: "FuzzRouteNetlink",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
        // The no_proxy matcher, proxy URLs and the route; the SOCKS handshakes fed arbitrary replies (package access
        // in Wire, hence @testable and -enable-testing).
        .executableTarget(
            name: "FuzzProxyRules",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
        .executableTarget(
            name: "FuzzSOCKS",
            dependencies: ["FuzzSupport", .product(name: "Wire", package: wirePackage)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
