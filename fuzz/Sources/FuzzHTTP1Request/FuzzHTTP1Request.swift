import CFuzzer
import HTTP1

/// Requests parsed from arbitrary bytes: never a trap, and the same events whether the bytes
/// arrive at once or split in two at a point the input chooses (the parser must not depend on
/// how reads fall).
@_cdecl("FuzzHTTP1Request_main")
func fuzzHTTP1RequestMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzHTTP1Request(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzHTTP1Request(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = events(bytes, split: bytes.count)
    let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    let parts = events(bytes, split: split)
    if whole != parts {
        fatalError("events differ when the input is split at \(split): \(whole) vs \(parts)")
    }
    return 0
}

/// Every event (and the error that ended parsing) with the input fed in two parts.
private func events(_ bytes: [UInt8], split: Int) -> [String] {
    var parser = HTTP1RequestParser(limits: HTTP1Limits(maxStartLineLength: 256, maxHeaderBlockSize: 1024,
                                                        maxHeaderCount: 16, maxChunkExtensionLength: 64,
                                                        maxTrailerBlockSize: 512, maxTrailerCount: 8))
    var result: [String] = []
    var body: [UInt8] = []
    func drain(_ step: () throws(HTTP1ParseError) -> HTTP1RequestEvent?) -> Bool {
        do {
            while let event = try step() {
                switch event {
                case .head(let head): result.append("head \(head.method) \(head.target) \(head.headers.count)")
                case .body(let chunk): body += chunk
                case .end(let trailers): result.append("end \(body.count) \(trailers.count)"); body = []
                }
                if case .head(let head) = event, head.method == "CONNECT" { return false }
            }
            return true
        } catch {
            // Only the status must agree: where a line is cut decides which of two faults (a bare
            // LF, a bad size digit) is seen first, and either answer is a 400.
            result.append("error \(error.status)")
            return false
        }
    }
    parser.feed(bytes[..<split])
    guard drain({ () throws(HTTP1ParseError) in try parser.next() }) else { return result }
    parser.feed(bytes[split...])
    guard drain({ () throws(HTTP1ParseError) in try parser.next() }) else { return result }
    _ = drain({ () throws(HTTP1ParseError) in try parser.finish() })
    if !body.isEmpty { result.append("partial body \(body.count)") }
    return result
}
