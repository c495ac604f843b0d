import CFuzzer
import HTTP1

/// The chunked decoder behind a fixed request head: arbitrary bytes as the chunked body.
/// Never a trap; the decoded body is the same whether the input arrives at once or one byte
/// at a time, and is never longer than the input.
@_cdecl("FuzzChunked_main")
func fuzzChunkedMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzChunked(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzChunked(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = decode(bytes, step: max(1, bytes.count))
    let trickled = decode(bytes, step: 1)
    if whole.body != trickled.body || whole.outcome != trickled.outcome {
        fatalError("chunked decoding depends on read sizes: \(whole.outcome) vs \(trickled.outcome)")
    }
    if whole.body.count > bytes.count { fatalError("decoded more bytes than were fed") }
    return 0
}

private let head = Array("POST /upload HTTP/1.1\r\nHost: fuzz\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)

private func decode(_ bytes: [UInt8], step: Int) -> (body: [UInt8], outcome: String) {
    var parser = HTTP1RequestParser(limits: HTTP1Limits(maxChunkExtensionLength: 64, maxTrailerBlockSize: 512,
                                                        maxTrailerCount: 8))
    parser.feed(head)
    var body: [UInt8] = []
    var offset = 0
    do {
        guard case .head? = try parser.next() else { fatalError("the fixed head did not parse") }
        while true {
            while let event = try parser.next() {
                switch event {
                case .body(let chunk): body += chunk
                case .end(let trailers): return (body, "end \(trailers.count)")
                case .head: fatalError("a head inside a chunked body")
                }
            }
            guard offset < bytes.count else { break }
            parser.feed(bytes[offset..<min(bytes.count, offset + step)])
            offset += step
        }
        while let event = try parser.finish() {
            if case .end = event { return (body, "end at close") }
        }
        return (body, "incomplete")
    } catch {
        // The status, not the code: see FuzzHTTP1Request.
        return (body, "error \(error.status)")
    }
}
