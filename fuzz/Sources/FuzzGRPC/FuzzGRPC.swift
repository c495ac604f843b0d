import CFuzzer
import GRPCWire

/// The gRPC splitter and the schema-less protobuf decoder on arbitrary bytes. Never a trap; the
/// splitter yields the same messages whether the body arrives at once, a byte at a time or in
/// 7-byte pieces; the decoding respects its field cap and reads back from its own JSON.
@_cdecl("FuzzGRPC_main")
func fuzzGRPCMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzGRPC(data ?? UnsafePointer(bitPattern: 1)!, size) }
}

private let decoderLimits = ProtobufRawDecoder.Limits(maxDepth: 16, maxFields: 500)
private let splitterLimits = GRPCMessageSplitter.Limits(keptBytes: 16, heldBytes: 256)

private func fuzzGRPC(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    let decoded = ProtobufRawDecoder(limits: decoderLimits).decode(bytes)
    if count(decoded) > decoderLimits.maxFields { fatalError("more fields than the cap") }
    let info = GRPCFlowInfo(messages: [GRPCMessageRecord(direction: .request, compressed: false, length: size,
                                                         firstBytesBase64: "", decoded: decoded)])
    guard let readBack = try? GRPCFlowInfo(json: info.json), readBack == info else {
        fatalError("the decoding does not read back from its JSON")
    }

    let whole = split(bytes, step: max(1, size))
    if split(bytes, step: 1) != whole || split(bytes, step: 7) != whole {
        fatalError("splitting depends on chunk sizes")
    }
    for message in whole.messages where message.bytes.count > max(splitterLimits.keptBytes, splitterLimits.heldBytes) {
        fatalError("a message kept more bytes than the limits allow")
    }

    var recorder = GRPCFlowRecorder(path: "/fuzz.Service/Method", requestHeaders: [("grpc-encoding", "gzip")],
                                    limits: .init(splitter: splitterLimits, recordedMessages: 8, decoder: decoderLimits))
    recorder.requestBody(bytes)
    recorder.responseBody(bytes)
    let record = recorder.finish()
    if record.messages.count > 8 { fatalError("recorded more messages than the cap") }
    return 0
}

private struct Split: Equatable {
    var messages: [GRPCWireMessage]
    var cut: GRPCWireMessage?
    var error: GRPCSplitError?
}

private func split(_ bytes: [UInt8], step: Int) -> Split {
    var splitter = GRPCMessageSplitter(limits: splitterLimits)
    var messages: [GRPCWireMessage] = []
    var offset = 0
    while offset < bytes.count {
        messages += splitter.feed(Array(bytes[offset..<min(bytes.count, offset + step)]))
        offset += step
    }
    let cut = splitter.finish()
    return Split(messages: messages, cut: cut, error: splitter.error)
}

/// Fields in a decoding, nested ones included.
private func count(_ message: ProtobufRawMessage) -> Int {
    message.fields.reduce(0) { total, field in
        switch field.value {
        case .message(let nested), .group(let nested): return total + 1 + count(nested)
        default: return total + 1
        }
    }
}
