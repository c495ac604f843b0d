// swift-tools-version:6.0
import PackageDescription

// Release builds of the modules on every proxied request's path skip Swift's run-time
// exclusivity checks (each `var` of a class touched in place costs a `swift_beginAccess` and an
// `endAccess`; callgrind of an h2 keep-alive stream: ~140 of them, ~11k of its ~270k
// instructions, most in the HTTP/2 session's state fed from libnghttp2's callbacks). Debug
// builds, which `swift test` runs, keep them, so the tests still trap on an overlapping access.
let hotPath: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "DevProxy",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "devproxy", targets: ["DevProxyCLI"]),
        .executable(name: "devproxy-load", targets: ["DevProxyLoad"]),
        .library(name: "CertAuthority", targets: ["CertAuthority"]),
        .library(name: "DevProxy", targets: ["DevProxy"]),
        // For the fuzzing package in fuzz/, which builds these with -sanitize=fuzzer.
        .library(name: "HTTP1", targets: ["HTTP1"]),
        .library(name: "HTTP2", targets: ["HTTP2"]),
        .library(name: "HTTPTypes", targets: ["HTTPTypes"]),
        .library(name: "GRPCWire", targets: ["GRPCWire"]),
        .library(name: "PinningPolicy", targets: ["PinningPolicy"]),
        .library(name: "SessionStore", targets: ["SessionStore"]),
        .library(name: "SOCKS5", targets: ["SOCKS5"]),
        .library(name: "QRCode", targets: ["QRCode"]),
    ],
    targets: [
        // OpenSSL 3 headers plus one-line wrappers for what Swift cannot import. No logic.
        .target(
            name: "CTLS",
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),
        // C library declarations the Glibc module lacks (malloc_trim, mallopt). No logic.
        .target(name: "CSystem"),
        .target(name: "CertAuthority", dependencies: ["CTLS"]),
        // zlib, brotli and zstd, for showing gzip/deflate/br/zstd bodies as text and coding edited ones. No logic.
        .target(
            name: "CCompression",
            linkerSettings: [.linkedLibrary("z"), .linkedLibrary("brotlidec"), .linkedLibrary("brotlienc"),
                            .linkedLibrary("zstd")]
        ),
        // libnghttp2 headers plus one-line wrappers for its macros. No logic.
        .target(name: "CNGHTTP2", linkerSettings: [.linkedLibrary("nghttp2")]),
        // Sans-IO HTTP/2 codec over libnghttp2: bytes in, events out. Knows nothing of sockets or TLS.
        .target(name: "HTTP2", dependencies: ["CNGHTTP2", "HTTPTypes"], swiftSettings: hotPath),
        // gRPC and protobuf wire decoding for flow records: pure, no I/O, Foundation only.
        .target(name: "GRPCWire"),
        // Debian's libsqlite3 plus wrappers for the macros Swift cannot import. No logic.
        .target(name: "CSQLite", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The session store: flows in SQLite, one file per run, and the filter language compiled to SQL.
        .target(name: "SessionStore", dependencies: ["CSQLite", "CTLS", "CertAuthority", "CSystem", "CCompression", "HTTPTypes"],
                swiftSettings: hotPath),
        // Debian's libqrencode. No logic.
        .target(name: "CQRencode", linkerSettings: [.linkedLibrary("qrencode")]),
        // QR codes (the onboarding address): a module matrix as terminal text, SVG and PNG.
        .target(name: "QRCode", dependencies: ["CQRencode", "CCompression"]),
        // Sans-IO HTTP/1.1 codec: bytes in, parts out. Knows nothing of sockets or TLS.
        .target(name: "HTTP1", dependencies: ["HTTPTypes"], swiftSettings: hotPath),
        // Version-neutral HTTP messages (request and response heads, fields, trailers): no I/O, no
        // version. Both codecs convert to and from them; the engine's exchange speaks them.
        .target(name: "HTTPTypes", swiftSettings: hotPath),
        // Sans-IO SOCKS5 server handshake (RFC 1928, RFC 1929): bytes in, actions out. No dependencies.
        .target(name: "SOCKS5"),
        // Sans-IO WireGuard responder (Noise_IKpsk2 handshake, transport data, key rotation) over OpenSSL 3.
        .target(name: "WireGuard", dependencies: ["CTLS"]),
        // Pinning policies (TrustKit, Android NSC, OkHttp) and their evaluation.
        // libxml2 for the Android network security config, loaded with dlopen on first use instead
        // of linked (FoundationXML linked it, and ICU with it, into every process). Its headers
        // (Debian's libxml2-dev) live under /usr/include/libxml2. No policy logic.
        .target(name: "CLibXML2",
                cSettings: [.unsafeFlags(["-I/usr/include/libxml2"], .when(platforms: [.linux]))],
                linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(name: "PinningPolicy", dependencies: ["CertAuthority", .target(name: "CLibXML2", condition: .when(platforms: [.linux]))]),
        .target(name: "DevProxy", dependencies: ["CertAuthority", "HTTP1", "HTTP2", "PinningPolicy", "SOCKS5", "CTLS", "CCompression",
                                               "CSystem", "GRPCWire", "SessionStore", "QRCode", "HTTPTypes", "WireGuard"],
                swiftSettings: hotPath),
        // The web UI's server: its HTTP API over the session store, and the page's files (Assets/,
        // embedded at build time by the EmbedWebAssets plugin).
        .target(name: "WebUI",
                dependencies: ["DevProxy", "CertAuthority", "GRPCWire", "HTTP1", "HTTPTypes", "SessionStore", "QRCode"],
                exclude: ["Assets"], plugins: ["EmbedWebAssets"]),
        .executableTarget(name: "EmbedWebAssetsTool"),
        .plugin(name: "EmbedWebAssets", capability: .buildTool(), dependencies: ["EmbedWebAssetsTool"]),
        .executableTarget(name: "DevProxyCLI", dependencies: ["DevProxy", "CertAuthority", "PinningPolicy", "CTLS", "SessionStore",
                                                             "WebUI", "QRCode", "CSystem", "GRPCWire", "HTTPTypes",
                                                             // --version reads these libraries' own versions.
                                                             "CNGHTTP2", "CSQLite", "CCompression"]),
        // Load generator for bench/run: multi-threaded HTTPS client over OpenSSL; HTTP/2 through the codec.
        .executableTarget(name: "DevProxyLoad", dependencies: ["CTLS", "HTTP2", "HTTPTypes"]),
        // Shared by the test targets: processes, temporary directories, PKI fixtures, vectors.
        .target(name: "TestSupport", dependencies: ["CertAuthority"], path: "Tests/TestSupport", exclude: ["Resources"]),
        .testTarget(name: "CertAuthorityTests", dependencies: ["CertAuthority", "CTLS", "TestSupport"]),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1"]),
        .testTarget(name: "HTTP2Tests", dependencies: ["HTTP2", "TestSupport"]),
        .testTarget(name: "HTTPTypesTests", dependencies: ["HTTPTypes", "HTTP1", "HTTP2"]),
        .testTarget(name: "GRPCWireTests", dependencies: ["GRPCWire", "TestSupport"]),
        .testTarget(name: "SOCKS5Tests", dependencies: ["SOCKS5"]),
        .testTarget(name: "WireGuardTests", dependencies: ["WireGuard", "TestSupport"]),
        .testTarget(name: "PinningPolicyTests", dependencies: ["PinningPolicy", "CertAuthority", "TestSupport"]),
        .testTarget(name: "DevProxyTests", dependencies: ["DevProxy", "CertAuthority", "HTTP1", "HTTPTypes", "TestSupport",
                                                         "SessionStore", "WebUI", "WireGuard", "QRCode"]),
        // DevProxy only to write real flow logs and HAR files for the importers to read.
        .testTarget(name: "SessionStoreTests", dependencies: ["SessionStore", "CSQLite", "DevProxy", "GRPCWire", "TestSupport"]),
        .testTarget(name: "DevProxyLoadTests", dependencies: ["DevProxyLoad", "TestSupport", "CertAuthority"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
