import CFuzzer
import DevProxy

/// The ClientHello/SNI reader on arbitrary bytes: never a trap; a prefix of a complete hello
/// is never read as a different hello (it is incomplete or the same one).
@_cdecl("FuzzClientHello_main")
func fuzzClientHelloMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzClientHello(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzClientHello(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let result = ClientHello.parse(bytes)
    guard case .hello(let hello) = result, bytes.count > 5 else { return 0 }
    if let name = hello.serverName, name.isEmpty { fatalError("an empty server name was returned") }
    if case .hello(let other) = ClientHello.parse(Array(bytes.dropLast())), other != hello, bytes.count > 5 {
        // Dropping trailing bytes past the record must not change what was read.
        let recordEnd = 5 + (Int(bytes[3]) << 8 | Int(bytes[4]))
        if bytes.count - 1 >= recordEnd { fatalError("bytes after the record changed the hello") }
    }
    return 0
}
