import CNGHTTP2

/// Lends a list of fields to libnghttp2 as an `nghttp2_nv` array for the length of one call.
///
/// The library copies names and values during `submit_*` (we never set the NO_COPY flags), so the
/// pointers only need to live for `body`.
func withNameValueList<R>(_ fields: [HTTP2Field], _ body: (UnsafePointer<nghttp2_nv>?, Int) -> R) -> R {
    withNameValueList(fields, [], body)
}

/// `withNameValueList` of `first` then `second` (a block's pseudo-header and regular fields), read
/// through buffer pointers: iterating, or even subscripting the arrays, copies each field out, a
/// reference count for its name and value.
func withNameValueList<R>(_ first: [HTTP2Field], _ second: [HTTP2Field],
                          _ body: (UnsafePointer<nghttp2_nv>?, Int) -> R) -> R {
    first.withUnsafeBufferPointer { first in
        second.withUnsafeBufferPointer { second in
            nameValueList(first, second, body)
        }
    }
}

private func nameValueList<R>(_ first: UnsafeBufferPointer<HTTP2Field>, _ second: UnsafeBufferPointer<HTTP2Field>,
                              _ body: (UnsafePointer<nghttp2_nv>?, Int) -> R) -> R {
    // One buffer for every name and value (plus a byte, so an empty list still has an address).
    var size = 1
    for index in first.indices { size += first[index].name.count + first[index].value.count }
    for index in second.indices { size += second[index].name.count + second[index].value.count }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(size)
    for index in first.indices {
        bytes += first[index].name
        bytes += first[index].value
    }
    for index in second.indices {
        bytes += second[index].name
        bytes += second[index].value
    }
    bytes.append(0)
    return bytes.withUnsafeMutableBufferPointer { buffer in
        let base = buffer.baseAddress!
        var offset = 0
        var list: [nghttp2_nv] = []
        list.reserveCapacity(first.count + second.count)
        for part in [first, second] {
            for index in part.indices {
                let name = base + offset
                let value = name + part[index].name.count
                offset += part[index].name.count + part[index].value.count
                let flags = part[index].neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue)
                                                   : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
                list.append(nghttp2_nv(name: name, value: value, namelen: part[index].name.count,
                                       valuelen: part[index].value.count, flags: flags))
            }
        }
        return list.withUnsafeBufferPointer { body($0.baseAddress, $0.count) }
    }
}
