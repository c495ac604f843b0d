// swift-tools-version:6.0
// A measurement, not part of DevProxy: does an epoll event loop beat a thread per connection
// on this machine? See docs/performance.md, "An event loop instead of a thread per connection".
import PackageDescription

let package = Package(
    name: "loop-vs-threads",
    targets: [
        .target(name: "CEpoll"),
        .executableTarget(name: "loop-vs-threads", dependencies: ["CEpoll"]),
    ]
)
