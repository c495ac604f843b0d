/// How many errors a GraphQL response reports: the entries of its top-level `errors` list
/// (GraphQL spec, "Response Format"), summed over a batch's array of responses.
///
/// Read by skimming the JSON's bytes (strings and nested values are stepped over, nothing is
/// built), so a large `data` costs one pass and no memory.
enum GraphQLResponseErrors {
    /// The count, 0 when the response has no `errors` (or `null`, or `[]`); nil when the body is
    /// no JSON object or array of objects, or ends before the count is known (cut to the store's
    /// limit before `errors`).
    static func count(contentType: String?, body: StoredBody?) -> Int? {
        guard let body, let contentType, GraphQLCall.contains(contentType, "json") else { return nil }
        // Read in place: a response can be megabytes.
        if var text = body.text { return text.withUTF8 { count(in: $0) } }
        return body.bytes.withUnsafeBufferPointer { count(in: $0) }
    }

    private static func count(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var skimmer = Skimmer(bytes: bytes)
        skimmer.skipSpace()
        switch skimmer.peek {
        case UInt8(ascii: "{"):
            // A member's name is unique: the count is known once `errors` is read.
            return skimmer.errorsOfObject(stoppingAtErrors: true)
        case UInt8(ascii: "["):
            skimmer.index += 1
            var total = 0
            skimmer.skipSpace()
            if skimmer.peek == UInt8(ascii: "]") { return nil }
            while true {
                skimmer.skipSpace()
                guard skimmer.peek == UInt8(ascii: "{"), let count = skimmer.errorsOfObject() else { return nil }
                total += count
                skimmer.skipSpace()
                guard let next = skimmer.take() else { return nil }
                if next == UInt8(ascii: "]") { return total }
                guard next == UInt8(ascii: ",") else { return nil }
            }
        default:
            return nil
        }
    }

    private struct Skimmer {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func take() -> UInt8? {
            guard index < bytes.count else { return nil }
            index += 1
            return bytes[index - 1]
        }

        mutating func skipSpace() {
            while index < bytes.count, GraphQLCall.isSpace(bytes[index]) { index += 1 }
        }

        /// At a `{`: the entries of its `errors` member (0 without one); nil when it is malformed
        /// or ends before the object does (or, `stoppingAtErrors`, before its `errors` are read).
        mutating func errorsOfObject(stoppingAtErrors: Bool = false) -> Int? {
            index += 1
            var errors = 0
            skipSpace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return 0
            }
            while true {
                skipSpace()
                guard peek == UInt8(ascii: "\""), let key = string() else { return nil }
                skipSpace()
                guard take() == UInt8(ascii: ":") else { return nil }
                skipSpace()
                if key.elementsEqual("errors".utf8), peek == UInt8(ascii: "[") {
                    guard let count = entries() else { return nil }
                    if stoppingAtErrors { return count }
                    errors = count
                } else {
                    guard skipValue() else { return nil }
                }
                skipSpace()
                guard let next = take() else { return nil }
                if next == UInt8(ascii: "}") { return errors }
                guard next == UInt8(ascii: ",") else { return nil }
            }
        }

        /// At a `[`: how many values it holds, read past; nil when malformed or cut short.
        mutating func entries() -> Int? {
            index += 1
            skipSpace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return 0
            }
            var count = 0
            while true {
                skipSpace()
                guard skipValue() else { return nil }
                count += 1
                skipSpace()
                guard let next = take() else { return nil }
                if next == UInt8(ascii: "]") { return count }
                guard next == UInt8(ascii: ",") else { return nil }
            }
        }

        /// At a `"`: the string's raw bytes (escapes left as they are), read past.
        mutating func string() -> Slice<UnsafeBufferPointer<UInt8>>? {
            let start = index + 1
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    return bytes[start..<(index - 1)]
                default: index += 1
                }
            }
            return nil
        }

        /// Reads past one value (nested objects and arrays by their brackets, strings by their
        /// quotes); false when it is cut short.
        mutating func skipValue() -> Bool {
            guard let first = peek else { return false }
            if first == UInt8(ascii: "\"") { return string() != nil }
            if first != UInt8(ascii: "{") && first != UInt8(ascii: "[") {
                // A number, true, false or null: to the next delimiter.
                let start = index
                while index < bytes.count, !Self.ends(bytes[index]) { index += 1 }
                return index > start && index < bytes.count
            }
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard string() != nil else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return true
                    }
                default: break
                }
                index += 1
            }
            return false
        }

        private static func ends(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
                || GraphQLCall.isSpace(byte)
        }
    }
}
