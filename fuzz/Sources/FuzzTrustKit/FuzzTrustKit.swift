import CFuzzer
import Foundation
import PinningPolicy

/// TrustKit configurations (plist XML, binary plist or JSON) from arbitrary bytes: a policy or
/// a thrown `PolicyError`, never a trap.
@_cdecl("FuzzTrustKit_main")
func fuzzTrustKitMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzTrustKit(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzTrustKit(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? TrustKitPolicyParser().parse(Data(bytes: data, count: size))
    return 0
}
