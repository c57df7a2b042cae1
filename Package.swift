// swift-tools-version:6.2
import Foundation
import PackageDescription

/// Wire: a pure-Swift HTTP/1.1 stack for Linux, written from the socket up.
///
/// Wire, WireTLS and WireClient depend on no Swift package: only libc (through `CWireLinux`), for TLS the system's OpenSSL, and
/// for `WireClient` the toolchain's FoundationEssentials and the system's zlib. The command-line tool may use swift-argument-parser and, for
/// `wire bench`'s latency percentiles, hdrhistogram-swift. `WireLoad`, the load engine of
/// `wire bench` and `wire-profile`, is a target of its own above `Wire` and no product, so the
/// library users link does not carry it. `WireEcosystem`, a product a service opts into, is the only library target
/// on Swift packages: swift-log, swift-metrics, swift-distributed-tracing and swift-service-lifecycle.
///
/// CI (`CI=true`, as `.ci/run` runs) treats every warning as an error through the manifest rather than through
/// `-Xswiftc`, so its build, its DocC run and the README's `swift test` share one set of flags and one build. It also
/// compiles debug builds with line tables only: no debugger attaches there, a crash's backtrace and a sanitizer's
/// report still name files and lines, and the build takes about a fifth less time.
///
/// Release builds put every function in a section of its own (Swift does that only for public ones), so that the
/// release tool's link can gather the code its commands run into a few pages (LinkOrder/README.md). SwiftPM 6.2 and
/// later accept such flags in a dependency whose manifest is at tools version 6.2, as this one is. They also turn off
/// type-layout-based lowering (`-disable-type-layout`): with it, a copy or destroy of a value held in memory (an async
/// frame's slot, a class's field) often went through the type's metadata and value witness table, even for an
/// array, about 30 to 100 instructions where a retain or a few loads do; `HTTPClient` did that eleven times a request,
/// four without (BENCHMARKS.md, session 37: 18,312 → 17,787 instructions a request, for a 1% larger text).
let strictSettings: [SwiftSetting] =
    [
        .unsafeFlags(
            ["-Xfrontend", "-function-sections", "-Xfrontend", "-disable-type-layout"], .when(configuration: .release)),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
    + (Context.environment["CI"] == "true"
        ? [.treatAllWarnings(as: .error), .unsafeFlags(["-gline-tables-only"], .when(configuration: .debug))] : [])

/// LinkOrder/'s linker script, which gathers the code the tool's commands run at the start of its text (see its
/// README); a checkout without it links the tool in the default order.
let linkOrderFlags: [String] = {
    let script = "\(Context.packageDirectory)/LinkOrder/wire-text.ld"
    return FileManager.default.fileExists(atPath: script) ? ["-Xlinker", "-T", "-Xlinker", script] : []
}()

/// The directories of StaticLibraries/ whose static archives this system has (see its README): the release tool
/// links those archives instead of the shared libraries, and the shared ones where an archive is missing.
let staticLibraryPaths: [String] = {
    let files = FileManager.default
    let libraryDirectories = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"]
    let hasOpenSSL = libraryDirectories.contains {
        files.fileExists(atPath: "\($0)/libssl.a") && files.fileExists(atPath: "\($0)/libcrypto.a")
    }
    let gcc = "/usr/lib/gcc"
    let hasLibstdcxx = ((try? files.contentsOfDirectory(atPath: gcc)) ?? []).contains { triple in
        ((try? files.contentsOfDirectory(atPath: "\(gcc)/\(triple)")) ?? []).contains {
            files.fileExists(atPath: "\(gcc)/\(triple)/\($0)/libstdc++.a")
        }
    }
    // Only directories the checkout has (a trimmed copy of the package may leave them out).
    return ((hasLibstdcxx ? ["CXX"] : []) + (hasOpenSSL ? ["OpenSSL"] : []))
        .filter { files.fileExists(atPath: "\(Context.packageDirectory)/StaticLibraries/\($0)") }
}()

/// `scripts/test-sanitized` builds the tests under ThreadSanitizer or AddressSanitizer with `WIRE_SANITIZED_SUITES` set
/// to `thread` or `address`. SwiftPM builds every test target for any `swift test`, and a sanitizer's build is most of
/// its CI step, so in that build the package leaves out what none of that sanitizer's suites runs: WireEcosystem with
/// its four packages (about two minutes of swift-collections and swift-async-algorithms per build), and the test
/// folders of the tool's commands, of WireClient's pure value types and of the other sanitizer's suites. The README's
/// `swift test` builds and runs everything.
let sanitizer = Context.environment["WIRE_SANITIZED_SUITES"].flatMap { ["thread", "address"].contains($0) ? $0 : nil }
let sanitizedSuites = sanitizer != nil

/// WireEcosystem only: the libraries a service already runs its logs, metrics, traces and lifecycle with. Declared in
/// a sanitizer's build too, where no target uses them (nothing of them is built), so that its resolution writes the
/// same Package.resolved as every other build.
let ecosystemPackages: [Package.Dependency] = [
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.2.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
]

let package = Package(
    name: "Wire",
    products: [
        .library(name: "Wire", targets: ["Wire"]),
        .library(name: "WireTLS", targets: ["WireTLS"]),
        .library(name: "WireClient", targets: ["WireClient"]),
        // The bridge to the server-side Swift ecosystem's libraries: logs, metrics, traces and the service lifecycle.
        .library(name: "WireEcosystem", targets: ["WireEcosystem"]),
        .executable(name: "wire", targets: ["WireTool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // `swift package generate-documentation`: the DocC catalogs of the three libraries (CONTRIBUTING.md). A command
        // plugin only: nothing of it is linked into a product.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ] + ecosystemPackages,
    targets: [
        // Linux headers that Glibc's module map does not export (epoll, eventfd, timerfd)
        // and tiny shims for macros Swift cannot import. Every symbol is `c_wire_*`.
        .target(name: "CWireLinux"),
        .target(
            name: "Wire",
            dependencies: ["CWireLinux"],
            swiftSettings: strictSettings
        ),
        // The system's OpenSSL (libssl from Debian's libssl-dev, in the default header and library paths) and
        // static inline `c_wire_tls_*` shims for the macros Swift cannot import. Only WireTLS/OpenSSL/ imports it.
        // No pkg-config: all it adds is `-L/usr/lib/x86_64-linux-gnu`, which would come before the tool's release
        // library path and so always find the shared libssl (see StaticLibraries/README.md).
        .systemLibrary(name: "CWireOpenSSL"),
        // The system's zlib (libz from Debian's zlib1g-dev) for WireClient's content decoding (gzip, deflate) and the
        // compressed histograms of `wire bench --hlog`.
        // Only WireClient/Decoding/ZlibStream.swift and WireTool/Bench/HistogramCoding.swift import it. No pkg-config,
        // as for OpenSSL.
        .systemLibrary(name: "CWireZlib"),
        .target(
            name: "WireTLS",
            dependencies: ["Wire", "CWireOpenSSL"],
            swiftSettings: strictSettings
        ),
        // The manager layer (AFNetworking's design on Wire): sessions, tasks, request and response serializers.
        // It may import the toolchain's FoundationEssentials (Data, URL, JSON and property-list coders) and only
        // that: never Foundation, FoundationNetworking or a Swift package. Nothing in Wire or WireTLS imports it.
        .target(
            name: "WireClient",
            dependencies: ["Wire", "WireTLS", "CWireZlib"],
            swiftSettings: strictSettings
        ),
        // Wire's events told to swift-log, swift-metrics and swift-distributed-tracing, and `HTTPServer` as a
        // swift-service-lifecycle service. The only target that depends on those packages, so that Wire, WireTLS and
        // WireClient keep their rule; nothing imports it but its users and its tests.
        .target(
            name: "WireEcosystem",
            dependencies: [
                "Wire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The load engine behind `wire bench` and `wire-profile`: connections, workers and counters on
        // Wire's own loops. A target of its own so that the `Wire` library users link does not carry
        // it; not a product, since only the tools and the tests use it (through `package` access).
        .target(
            name: "WireLoad",
            dependencies: ["Wire"],
            swiftSettings: strictSettings
        ),
        // The hostile server of `wire serve --faults`: a JSON scenario played over raw sockets. A target of its own, as
        // WireLoad, so that the tool and the tests run one implementation (through `package` access); not a product.
        .target(
            name: "WireFaults",
            dependencies: ["Wire"],
            swiftSettings: strictSettings
        ),
        // The `wire` command (its product's name). The folder and module are `WireTool`, not `wire`: a name that differs
        // from `Wire` only by case cannot be checked out (or built: Wire.swiftmodule beside wire.swiftmodule) on a
        // case-insensitive file system.
        .executableTarget(
            name: "WireTool",
            dependencies: [
                "Wire",
                "WireTLS",
                "WireLoad",
                "WireFaults",
                // `wire get --retry` decides with WireClient's `RetryPolicy`.
                "WireClient",
                // `wire bench --hlog`: HdrHistogram's compressed histograms are zlib streams (WireClient links it already).
                "CWireZlib",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strictSettings,
            // Release builds are linked for a small resident set (BENCHMARKS.md, "Peak RSS of the tool"): a shared
            // library costs every page its loading touches, used or not. The Swift runtime and FoundationEssentials
            // (which swift-argument-parser imports) are linked statically, and so are libstdc++ and OpenSSL, through
            // the linker scripts of StaticLibraries/ (see its README for the trade-off); GNU ld packs the relative
            // relocations (DT_RELR, glibc 2.36) instead of reading 1 MiB of them at start, and exports no symbols;
            // LinkOrder/'s script puts the code the commands run first, together. Debug builds stay dynamic: the test bundle links this target beside the dynamic Testing and
            // Foundation, which need the shared runtime.
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims",
                    ] + staticLibraryPaths.map { "-L\(Context.packageDirectory)/StaticLibraries/\($0)" } + [
                        "-use-ld=bfd", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
                    ] + linkOrderFlags, .when(configuration: .release))
            ]
        ),
        // A fixed amount of HTTP/1.1 work on Wire's own loops with no Swift task, so that valgrind's callgrind
        // can count instructions per request (it cannot follow the global executor's threads).
        .executableTarget(
            name: "wire-profile",
            dependencies: ["Wire", "WireLoad"],
            swiftSettings: strictSettings
        ),
        // What both test targets share: the `.exclusiveIO` trait, which keeps their socket tests from overlapping (the
        // descriptor counts of WireTests' I/O suites are per process).
        .target(
            name: "WireTestSupport",
            path: "Tests/WireTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "WireTests",
            dependencies: [
                "Wire", "WireTLS", "WireLoad", "WireFaults", "WireClient", "CWireLinux", "WireTool", "WireTestSupport",
            ],
            exclude: ["Resources"],
            swiftSettings: strictSettings
        ),
        // The bridge tested with the libraries' own test backends.
        .testTarget(
            name: "WireEcosystemTests",
            dependencies: [
                "WireEcosystem", "Wire", "WireTestSupport",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // Imports WireClient and Wire without @testable: the public API is all a user (or an acceptance test) has.
        .testTarget(
            name: "WireClientTests",
            // WireFaults: the fault engine of `wire serve --faults` plays the hostile servers of the session tests.
            dependencies: ["WireClient", "Wire", "WireTLS", "WireFaults", "WireTestSupport"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

if sanitizedSuites {
    package.products.removeAll { $0.name == "WireEcosystem" }
    package.targets.removeAll { $0.name == "WireEcosystem" || $0.name == "WireEcosystemTests" }
    // Left out on purpose, though a pattern of scripts/test-sanitized names a few of their tests: the tool's commands
    // (`GetCommandTLSFlagsTests` and the like run the tool as a child process, which reports nothing to the test run),
    // and WireEcosystem's bridge (`HTTPServerServiceTests` runs `HTTPServer`, which the server's own suites cover).
    let unsanitized = [
        // The tool's commands, URL and body value types.
        "WireTests": ["Bench", "Body", "GetCommand", "Tool", "URL"],
        // Value types and policies with no loop, socket or raw memory of their own.
        "WireClientTests": ["Activity", "Chain", "Interception", "Reachability", "Security"],
    ]
    // What only the other sanitizer runs (scripts/test-sanitized lists the suites). ThreadSanitizer keeps Cache and
    // Cookies for `SessionCacheTests` and `SessionCookieTests`, sessions at work.
    let otherSanitizers = [
        "thread": ["WireTests": ["Buffer", "Connection", "HTTP1", "Parse"], "WireClientTests": ["Multipart"]],
        "address": [
            "WireTests": ["EventLoop", "Pool", "Resolver"],
            "WireClientTests": ["Cache", "Cookies", "HTTPSession", "Resources", "Session"],
        ],
    ]
    for target in package.targets {
        target.exclude += (unsanitized[target.name] ?? []) + (otherSanitizers[sanitizer ?? ""]?[target.name] ?? [])
    }
    // ThreadSanitizer's suites import nothing of the tool: those that run it start the plain debug build's `wire` as a
    // child (`WireToolRunner`), whose reports would not reach the run anyway. So its build leaves out the tool and
    // what only the tool uses (swift-argument-parser, hdrhistogram-swift): about a minute of instrumented compiling.
    // AddressSanitizer's build keeps it: `ParseCommandTests` runs the instrumented `wire parse`, whose own report
    // fails the test.
    if sanitizer == "thread" {
        package.products.removeAll { $0.name == "wire" }
        package.targets.removeAll { $0.name == "WireTool" || $0.name == "wire-profile" }
        for target in package.targets where target.name == "WireTests" {
            target.dependencies.removeAll {
                if case .byNameItem(let name, _) = $0 { return name == "WireTool" }
                return false
            }
        }
    }
}
