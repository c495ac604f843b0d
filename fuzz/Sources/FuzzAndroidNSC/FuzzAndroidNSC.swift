import CFuzzer
import Foundation
import PinningPolicy

/// Android network security configuration XML from arbitrary bytes: a policy or a thrown
/// `PolicyError`, never a trap.
@_cdecl("FuzzAndroidNSC_main")
func fuzzAndroidNSCMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzAndroidNSC(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzAndroidNSC(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    _ = try? AndroidNSCParser().parse(bytes)
    _ = try? AndroidNSCParser(debuggable: true).parse(bytes)
    return 0
}
