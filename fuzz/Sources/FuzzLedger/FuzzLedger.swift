import CFuzzer
import CertAuthority

/// The ledger reader on arbitrary bytes: records and problems, never a trap; every line is
/// either a record or a problem.
@_cdecl("FuzzLedger_main")
func fuzzLedgerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzLedger(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private func fuzzLedger(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let contents = Ledger.parse(bytes)
    let lines = bytes.split(separator: UInt8(ascii: "\n")).count
    if contents.records.count > lines { fatalError("more records than lines") }
    return 0
}
