import CFuzzer
import HTTP2

/// A server session fed arbitrary bytes after a valid client preface, answering every request and
/// consuming every body byte as a relay would, output drained after each feed: never a trap, and
/// never more output than the input can justify.
@_cdecl("FuzzHTTP2_main")
func fuzzHTTP2Main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzHTTP2(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzHTTP2(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var limits = HTTP2Limits()
    limits.maxHeaderListSize = 4096
    guard let session = try? HTTP2Session(role: .server, limits: limits) else { fatalError("no session") }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // The first input byte picks where the input is split, so frames cut across reads are fed too.
    let split = size == 0 ? 0 : Int(bytes[0]) % (size + 1)
    for part in [bytes[..<split], bytes[split...]] {
        guard let events = try? session.receive(part) else { break }
        act(on: events, session)
        _ = session.pendingOutput()
        act(on: session.takeEvents(), session)
    }
    _ = session.pendingOutput()
    return 0
}

/// Answers each request head with a small body and trailers; consumes what arrives.
private func act(on events: [HTTP2Event], _ session: HTTP2Session) {
    for event in events {
        switch event {
        case let .requestHead(stream, _, _):
            try? session.submitResponse(stream: stream, .response(status: 200), endStream: false)
            try? session.submitData(stream: stream, [0x6F, 0x6B], endStream: false)
            try? session.submitTrailers(stream: stream, [HTTP2Field("x-t", "1")])
        case let .data(stream, chunk, _):
            try? session.consume(stream: stream, count: chunk.count)
        default:
            break
        }
    }
}
