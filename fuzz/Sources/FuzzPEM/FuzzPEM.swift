import CFuzzer
import CertAuthority

/// The PEM/DER loaders on arbitrary bytes: certificates, pinnable keys or a thrown `CAError`,
/// never a trap or a memory error inside OpenSSL's decoders (build with address sanitizer).
@_cdecl("FuzzPEM_main")
func fuzzPEMMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzPEM(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzPEM(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let certificates = try? Certificate.all(from: bytes) {
        for certificate in certificates { _ = (certificate.subject, certificate.pin, certificate.notAfter) }
    }
    if let sources = try? PinSource.all(in: bytes) {
        for source in sources { _ = source.pin }
    }
    return 0
}
