import Foundation

/// `devproxy run`: the intercepting proxy.
enum RunCommand {
    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        throw CommandFailure("the proxy is not built yet")
    }
}
