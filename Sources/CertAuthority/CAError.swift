import CTLS

/// The one error type of the CertAuthority module.
///
/// `code` is closed so callers can switch on it; `reason` is one human line that says what is
/// wrong and, where it helps, what to do. Only the CLI turns it into `error: …` and an exit code.
public struct CAError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is.
    public enum Code: String, Sendable {
        case openSSL
        case invalidInput
        case wrongPassphrase
        case passphraseRequired
        case corruptKey
        case corruptCertificate
        case keyMismatch
        case caMissing
        case caExists
        case notWritable
        case io
        case signerExpired
        case signerRevoked
        case signerNotYetValid
        case nameNotPermitted
        case ledgerCorrupt
        case notFound
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    /// Builds an error from OpenSSL's error queue, which it drains.
    ///
    /// - Parameters:
    ///   - code: the code to report.
    ///   - context: what we were doing, e.g. "signing the certificate".
    static func openSSL(_ context: String, code: Code = .openSSL) -> CAError {
        let details = OpenSSLErrorQueue.drain()
        let suffix = details.isEmpty ? "" : ": " + details.joined(separator: "; ")
        return CAError(code, context + suffix)
    }
}

/// Reads and clears OpenSSL's per-thread error queue.
public enum OpenSSLErrorQueue {
    /// Clears the queue; call before an OpenSSL operation whose failure we will report.
    public static func clear() {
        // ERR_clear_error wipes all sixteen slots (~400 instructions) even when the queue is
        // empty, and TLS reads and writes call this every time; a peek tells first.
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    /// Removes every queued error and returns their reason strings, oldest first.
    public static func drain() -> [String] {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if let reason = ERR_reason_error_string(code) {
                messages.append(String(cString: reason))
            } else {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &buffer, buffer.count)
                messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return messages
    }
}
