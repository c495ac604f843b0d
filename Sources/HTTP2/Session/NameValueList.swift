import CNGHTTP2

/// Lends a list of fields to libnghttp2 as an `nghttp2_nv` array for the length of one call.
///
/// The library copies names and values during `submit_*` (we never set the NO_COPY flags), so the
/// pointers only need to live for `body`.
func withNameValueList<R>(_ fields: [HTTP2Field], _ body: (UnsafePointer<nghttp2_nv>?, Int) -> R) -> R {
    // One buffer for every name and value (plus a byte, so an empty list still has an address).
    var bytes: [UInt8] = []
    bytes.reserveCapacity(fields.reduce(1) { $0 + $1.name.count + $1.value.count })
    for field in fields {
        bytes += field.name
        bytes += field.value
    }
    bytes.append(0)
    return bytes.withUnsafeMutableBufferPointer { buffer in
        let base = buffer.baseAddress!
        var offset = 0
        var list: [nghttp2_nv] = []
        list.reserveCapacity(fields.count)
        for field in fields {
            let name = base + offset
            let value = name + field.name.count
            offset += field.name.count + field.value.count
            let flags = field.neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
            list.append(nghttp2_nv(name: name, value: value, namelen: field.name.count,
                                   valuelen: field.value.count, flags: flags))
        }
        return list.withUnsafeBufferPointer { body($0.baseAddress, $0.count) }
    }
}
