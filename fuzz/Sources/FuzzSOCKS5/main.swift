import CFuzzer
import SOCKS5

/// The SOCKS5 handshake on arbitrary bytes, with and without username/password: never a trap,
/// the same actions whether the bytes come at once or one at a time, and a `.connect` only for
/// a target a resolver can take.
@_cdecl("FuzzSOCKS5_main")
func fuzzSOCKS5Main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzSOCKS5(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzSOCKS5(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The first byte picks the configuration, so the corpus reaches both methods.
    guard let selector = bytes.first else { return 0 }
    let input = Array(bytes.dropFirst())
    let configuration = selector & 1 == 0
        ? SOCKS5Configuration(maximumEarlyData: 64)
        : SOCKS5Configuration(authentication: .usernamePassword { $0 == "ana" && $1 == "pw" }, maximumEarlyData: 64)
    var whole = SOCKS5Handshake(configuration: configuration)
    let atOnce = whole.feed(input).filter { $0 != .needMore }
    var split = SOCKS5Handshake(configuration: configuration)
    var oneByOne: [SOCKS5Action] = []
    for byte in input { oneByOne += split.feed([byte]).filter { $0 != .needMore } }
    // Held early data is the one thing split differently: compare it when the tunnel opens.
    if atOnce != oneByOne { fatalError("whole \(atOnce) != byte at a time \(oneByOne)") }
    if whole.state != split.state { fatalError("states differ: \(whole.state) != \(split.state)") }
    for action in atOnce {
        if case .connect(let target) = action {
            if target.port == 0 || target.host.isEmpty { fatalError("connect to an unusable target \(target)") }
        }
    }
    if case .connecting = whole.state {
        let a = whole.connected(), b = split.connected()
        if a != b { fatalError("early data differs: \(a) != \(b)") }
    }
    return 0
}
