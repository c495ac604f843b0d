import CFuzzer
import HTTP1

/// Responses parsed from arbitrary bytes, answering a request whose method the first byte
/// picks (GET, HEAD, CONNECT, POST): never a trap, and every error carries status 502.
@_cdecl("FuzzHTTP1Response_main")
func fuzzHTTP1ResponseMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzHTTP1Response(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzHTTP1Response(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let methods = ["GET", "HEAD", "CONNECT", "POST"]
    var parser = HTTP1ResponseParser(limits: HTTP1Limits(maxStartLineLength: 256, maxHeaderBlockSize: 1024,
                                                         maxHeaderCount: 16, maxChunkExtensionLength: 64))
    for index in 0..<3 { parser.expectResponse(toMethod: methods[(Int(selector) >> (2 * index)) & 3]) }
    // Feed in slices of a size the second byte picks, as reads from a socket would arrive.
    let step = bytes.count > 1 ? Int(bytes[1]) % 17 + 1 : 1
    var offset = 1
    do {
        while offset < bytes.count {
            parser.feed(bytes[offset..<min(bytes.count, offset + step)])
            offset += step
            while let event = try parser.next() {
                if case .head(let head) = event, !(100...999).contains(head.status) {
                    fatalError("status \(head.status) outside 100...999")
                }
            }
            if parser.isTunnel { _ = parser.takeRemainingBytes(); return 0 }
        }
        while try parser.finish() != nil {}
    } catch {
        if error.status != 502 { fatalError("a response error with status \(error.status): \(error)") }
    }
    return 0
}
