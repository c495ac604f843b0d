import Foundation

/// A `google.protobuf.Any` read off the wire (`type_url` = 1, `value` = 2), for the typed
/// decoding (`ProtoSchema`) and for a rich error's details (`GRPCStatusDetails`).
struct ProtoAny {
    var typeURL = ""
    var value: ArraySlice<UInt8> = []
    /// The number of the first field that is not one of the two (or not bytes), if any.
    var unexpectedField: Int?

    /// The packed message's type: the `type_url` after its last `/`.
    var typeName: String { typeURL.split(separator: "/").last.map(String.init) ?? typeURL }

    /// - Throws: `ProtoWireError` for damaged wire format.
    init(_ bytes: ArraySlice<UInt8>) throws(ProtoWireError) {
        var reader = ProtoWireReader(bytes)
        while let (number, field) = try reader.next() {
            switch (number, field) {
            case (1, .bytes(let text)): typeURL = String(decoding: text, as: UTF8.self)
            case (2, .bytes(let packed)): value = packed
            default: if unexpectedField == nil { unexpectedField = number }
            }
        }
    }
}

/// Base64 whose padding may be missing (gRPC's binary metadata, a Connect error detail's `value`,
/// a Connect GET's `message`): the standard alphabet, and with `urlSafe` the URL-safe one too
/// (RFC 4648 §5). Nil when it is not base64.
func unpaddedBase64Decoded(_ text: some Collection<UInt8>, urlSafe: Bool) -> [UInt8]? {
    var standard = urlSafe ? text.map { byte -> UInt8 in
        switch byte {
        case UInt8(ascii: "-"): UInt8(ascii: "+")
        case UInt8(ascii: "_"): UInt8(ascii: "/")
        default: byte
        }
    } : Array(text)
    while let last = standard.last, last == UInt8(ascii: "=") { standard.removeLast() }
    guard standard.count % 4 != 1 else { return nil }
    standard += Array(repeating: UInt8(ascii: "="), count: (4 - standard.count % 4) % 4)
    return Data(base64Encoded: Data(standard)).map { Array($0) }
}
