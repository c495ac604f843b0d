// swift-tools-version:6.0
// libFuzzer targets for DevProxy's parsers. A package of its own so that the main build and
// `swift test` never see -sanitize=fuzzer: build and run with `fuzz/run TARGET SECONDS`.
import Foundation
import PackageDescription

// A local dependency's identity is its directory name, which differs between checkouts and
// worktrees; read it instead of hard-coding it.
let main = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let mainPackage = main.lastPathComponent.lowercased()

/// One fuzz target: an executable whose `main` comes from libFuzzer.
func fuzzTarget(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["CFuzzer"] + products.map { .product(name: $0, package: mainPackage) },
        path: "Sources/\(name)"
    )
}

let package = Package(
    name: "DevProxyFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: main.path)],
    targets: [
        .target(name: "CFuzzer"),
        fuzzTarget("FuzzHTTP1Request", ["HTTP1"]),
        fuzzTarget("FuzzHTTP1Response", ["HTTP1"]),
        fuzzTarget("FuzzChunked", ["HTTP1"]),
        fuzzTarget("FuzzHTTP2", ["HTTP2"]),
        fuzzTarget("FuzzClientHello", ["DevProxy"]),
        fuzzTarget("FuzzTrustKit", ["PinningPolicy"]),
        fuzzTarget("FuzzAndroidNSC", ["PinningPolicy"]),
        fuzzTarget("FuzzOkHttp", ["PinningPolicy"]),
        fuzzTarget("FuzzLedger", ["CertAuthority"]),
        fuzzTarget("FuzzPEM", ["CertAuthority"]),
        fuzzTarget("FuzzGRPC", ["GRPCWire"]),
        fuzzTarget("FuzzSOCKS5", ["SOCKS5"]),
        fuzzTarget("FuzzSessionImport", ["SessionStore"]),
    ],
    swiftLanguageModes: [.v6]
)
