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
        // Peers of the matrix (run.sh): NIO's HTTP client and a NIO-based server framework. Their optional
        // traits (swift-configuration support, full Foundation) are off: the benchmarks use neither.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: []),
        // EcosystemFigures' counting metrics backend (the version Wire's own manifest resolves).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
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
        // The floor under ClientFigures: the same keep-alive GETs with nothing but syscalls, on one thread (wrk's
        // shape) or from Swift tasks on the global executor crossing to a loop thread, for issue 33's first target.
        .target(name: "CFloorSyscalls"),
        .executableTarget(name: "CrossingFloor", dependencies: ["CFloorSyscalls"]),
        // HTTPClient's instructions per request under callgrind: a synchronous main and every task on the client's
        // loop, which valgrind can follow.
        .executableTarget(
            name: "ClientProfile",
            dependencies: [.product(name: "Wire", package: wirePackage)]
        ),
        // The manager's instructions per request under callgrind, beside HTTPClient's (issue 28): a synchronous main.
        .executableTarget(
            name: "ManagerProfile",
            dependencies: [
                .product(name: "Wire", package: wirePackage),
                .product(name: "WireClient", package: wirePackage),
            ]
        ),
        // WireEcosystem's client bridge: CPU per request with no listener, a counting listener, the bridge on no-op
        // backends, and on a counting metrics backend (issue 30). Depends on swift-metrics itself.
        .executableTarget(
            name: "EcosystemFigures",
            dependencies: [
                .product(name: "Wire", package: wirePackage),
                .product(name: "WireEcosystem", package: wirePackage),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // Manager-layer figures: the same GET through HTTPClient and through WireClient's HTTPSessionManager (data,
        // JSON and Decodable serializers), CPU per request, for issue 13's ratio.
        .executableTarget(
            name: "ManagerFigures",
            dependencies: [
                .product(name: "Wire", package: wirePackage),
                .product(name: "WireClient", package: wirePackage),
            ]
        ),
        // Large-body figures: a streamed multipart upload and a download task of 1 GiB, and the sink server they
        // upload to, for issue 14's rows beside curl -F and curl -o.
        .executableTarget(
            name: "TransferFigures",
            dependencies: [
                .product(name: "Wire", package: wirePackage),
                .product(name: "WireClient", package: wirePackage),
            ]
        ),
        // Resource-downloader figures: a memory-cache hit, and merged requests against the same requests through
        // the manager, for issue 16's rows.
        .executableTarget(
            name: "DownloaderFigures",
            dependencies: [
                .product(name: "Wire", package: wirePackage),
                .product(name: "WireClient", package: wirePackage),
            ]
        ),
        // TLS figures: CPU per new connection of a session with a pinned security policy, resumed or not, for issue
        // 27's rows.
        .executableTarget(
            name: "TLSFigures",
            dependencies: [
                .product(name: "Wire", package: wirePackage),
                .product(name: "WireTLS", package: wirePackage),
                .product(name: "WireClient", package: wirePackage),
            ]
        ),
        // Peer client: AsyncHTTPClient's keep-alive requests/s and CPU per request, for run.sh's client rows.
        .executableTarget(
            name: "AHCClient",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Peer client: Foundation's URLSession (FoundationNetworking, libcurl underneath), the same figures.
        .executableTarget(name: "URLSessionClient"),
        // Peer server: a Hummingbird 2 "Hello, World!" on one NIO event loop, for run.sh's server rows.
        .executableTarget(
            name: "HummingbirdHello",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
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
