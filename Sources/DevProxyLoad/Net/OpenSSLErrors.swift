import CTLS

/// Reads and clears OpenSSL's thread-local error queue.
enum OpenSSLErrors {
    /// All queued errors joined by "; ", or "no OpenSSL error" when the queue is empty.
    static func drain() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no OpenSSL error" : messages.joined(separator: "; ")
    }
}
