import CFuzzer
import PinningPolicy

/// OkHttp `CertificatePinner` text and Kotlin/Java source from arbitrary bytes: a policy or a
/// thrown `PolicyError`, never a trap.
@_cdecl("FuzzOkHttp_main")
func fuzzOkHttpMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOkHttp(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzOkHttp(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parser = OkHttpPinnerParser()
    _ = try? parser.parse(text)
    _ = try? parser.parseLines(text)
    _ = try? parser.parseSource(text)
    return 0
}
