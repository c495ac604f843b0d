import Foundation

/// A flow record with its bodies' text cut short (`GET /api/flows/ID?preview=N`).
///
/// The flow log writes a body's text (or base64) up to `--body-limit`, so a record can hold tens
/// of megabytes; the detail pane shows bodies from `…/body` (streamed into its worker) and needs
/// from the record only the facts and a short prefix for when the body cannot be loaded. Parsing
/// a 28 MB record took the page's main thread 350 ms, and JSONSerialization on the server took
/// 8.5 s for a 60 MB one, so the cut works on the bytes: the flow log's writer emits compact JSON,
/// and `"body":{` can only be a key (inside a string every `"` is escaped), as can `"text":"`.
enum FlowRecordPreview {
    /// Records this small go out as they are.
    static let untouchedBelow = 64 * 1024

    /// `json` with the `text`/`base64` of every `"body"` object cut to at most `limit` bytes (on a
    /// character and escape boundary; base64 on a multiple of 4) and `"preview":true` added to a
    /// body that was cut. Unchanged when small or when nothing is long.
    static func cut(_ json: String, limit: Int) -> String {
        let bytes = Array(json.utf8)
        guard bytes.count > untouchedBelow else { return json }
        var output: [UInt8] = []
        var copied = 0
        var changed = false
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            while let body = find(bodyKey, in: buffer, from: index) {
                index = body + bodyKey.count
                // The body object's fields: `"key":value`, values strings, numbers or booleans.
                var cutHere: [(start: Int, end: Int, keep: Int)] = []
                while index < buffer.count && buffer[index] == quote {
                    guard let keyEnd = stringEnd(buffer, from: index + 1), keyEnd + 1 < buffer.count,
                          buffer[keyEnd + 1] == colon else { return }
                    let key = Array(buffer[(index + 1)..<keyEnd])
                    var value = keyEnd + 2
                    if value < buffer.count && buffer[value] == quote {
                        guard let end = stringEnd(buffer, from: value + 1) else { return }
                        let isText = key == Array("text".utf8), isBase64 = key == Array("base64".utf8)
                        if (isText || isBase64) && end - (value + 1) > limit {
                            var keep = prefixLength(buffer, from: value + 1, end: end, limit: limit)
                            if isBase64 { keep -= keep % 4 }
                            cutHere.append((value + 1, end, keep))
                        }
                        value = end + 1
                    } else {
                        while value < buffer.count && buffer[value] != comma && buffer[value] != closeBrace {
                            value += 1
                        }
                    }
                    index = value
                    if index < buffer.count && buffer[index] == comma { index += 1 }
                }
                guard !cutHere.isEmpty else { continue }
                if !changed { output.reserveCapacity(bytes.count / 4) }
                changed = true
                output.append(contentsOf: buffer[copied..<(body + bodyKey.count)])
                output.append(contentsOf: Array("\"preview\":true,".utf8))
                copied = body + bodyKey.count
                for (start, end, keep) in cutHere {
                    output.append(contentsOf: buffer[copied..<(start + keep)])
                    copied = end
                }
            }
        }
        guard changed else { return json }
        output.append(contentsOf: bytes[copied...])
        return String(decoding: output, as: UTF8.self)
    }

    private static let bodyKey = Array("\"body\":{".utf8)
    private static let quote = UInt8(ascii: "\""), colon = UInt8(ascii: ":"), comma = UInt8(ascii: ",")
    private static let closeBrace = UInt8(ascii: "}"), backslash = UInt8(ascii: "\\")

    /// The first index of `pattern` at or after `from` (memchr on its first byte).
    private static func find(_ pattern: [UInt8], in buffer: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let base = buffer.baseAddress else { return nil }
        var index = from
        while index + pattern.count <= buffer.count {
            guard let hit = memchr(base + index, Int32(pattern[0]), buffer.count - index) else { return nil }
            let position = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if position + pattern.count <= buffer.count
                && memcmp(base + position, pattern, pattern.count) == 0 { return position }
            index = position + 1
        }
        return nil
    }

    /// The index of the `"` that ends the string whose content starts at `from`.
    private static func stringEnd(_ buffer: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let base = buffer.baseAddress else { return nil }
        var index = from
        while index < buffer.count {
            guard let hit = memchr(base + index, Int32(quote), buffer.count - index) else { return nil }
            let position = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            var slashes = 0
            while position - slashes - 1 >= from && buffer[position - slashes - 1] == backslash { slashes += 1 }
            if slashes % 2 == 0 { return position }
            index = position + 1
        }
        return nil
    }

    /// How many bytes of the string content at `from..<end` to keep: at most `limit`, never
    /// splitting an escape (`\"`, `\uXXXX`) or a UTF-8 sequence.
    private static func prefixLength(_ buffer: UnsafeBufferPointer<UInt8>, from: Int, end: Int, limit: Int) -> Int {
        var index = from
        while index < end {
            let byte = buffer[index]
            let length: Int
            if byte == backslash {
                length = index + 1 < end && buffer[index + 1] == UInt8(ascii: "u") ? 6 : 2
            } else if byte >= 0xF0 {
                length = 4
            } else if byte >= 0xE0 {
                length = 3
            } else if byte >= 0xC0 {
                length = 2
            } else {
                length = 1
            }
            if index + length - from > limit { break }
            index += length
        }
        return index - from
    }
}
