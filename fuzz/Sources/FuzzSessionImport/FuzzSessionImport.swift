import CFuzzer
import Foundation
import SessionStore

/// `devproxy web FILE` on arbitrary bytes, read both as a HAR file and as a flow log into a fresh
/// temporary store, written through the store's writer: flows or a thrown `SessionStoreError`,
/// never a trap. (A HAR's `bodySize: -1` beside a body and a `time` of 1e300 ms each trapped the
/// writer or the timestamp formatter before this target existed.)
@_cdecl("FuzzSessionImport_main")
func fuzzSessionImportMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzSessionImport(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

/// One file per process, rewritten for each input.
private let inputPath = NSTemporaryDirectory() + "devproxy-fuzz-import-\(getpid()).input"

private func fuzzSessionImport(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard FileManager.default.createFile(atPath: inputPath, contents: Data(bytes: data, count: size)) else { return 0 }
    for importer in [SessionImport.har(at:into:), SessionImport.flowLog(at:into:)] {
        guard let store = try? SessionStore.temporary() else { continue }
        _ = try? importer(inputPath, store)
        store.close()
    }
    return 0
}
