import CertAuthority
import CTLS
import Foundation
import HTTP1

/// Computes a request's signature under a `SignatureScheme` and a shared key: what the app's
/// signer does, so DevProxy can check a captured request and re-sign a replayed one.
public struct RequestSigner: Sendable {
    public let key: [UInt8]
    public let scheme: SignatureScheme

    public init(key: [UInt8], scheme: SignatureScheme = .requestSigner) {
        self.key = key
        self.scheme = scheme
    }

    /// What is signed besides the key.
    public struct Input: Sendable {
        public var method: String
        public var path: String
        public var query: String
        public var host: String
        public var timestamp: String
        public var nonce: String
        /// SHA-256 of the body (32 bytes).
        public var bodySHA256: [UInt8]
        /// The request's headers, for `header:NAME` parts.
        public var headers: [[String]]

        public init(method: String, path: String, query: String, host: String, timestamp: String, nonce: String,
                    bodySHA256: [UInt8], headers: [[String]]) {
            self.method = method
            self.path = path
            self.query = query
            self.host = host
            self.timestamp = timestamp
            self.nonce = nonce
            self.bodySHA256 = bodySHA256
            self.headers = headers
        }
    }

    /// The signature as the scheme writes it in its header.
    public func signature(_ input: Input) -> String {
        let text = scheme.parts.map { part -> String in
            switch part {
            case .method: input.method
            case .path: input.path
            case .query: input.query
            case .host: input.host
            case .timestamp: input.timestamp
            case .nonce: input.nonce
            case .bodySHA256: input.bodySHA256.base64
            case .bodySHA256Hex: input.bodySHA256.hex
            case .header(let name): input.headers.first { $0.first?.equalsCaseInsensitive(name) == true }?.last ?? ""
            }
        }.joined(separator: scheme.separator)
        let mac = Self.hmac(scheme.hash, key: key, message: Array(text.utf8))
        return scheme.encoding == .base64 ? mac.base64 : mac.hex
    }

    /// The headers of a request to send again (a replay), re-signed with a fresh timestamp and
    /// nonce: the scheme's timestamp, nonce and signature headers are replaced (added when
    /// missing), every other header kept in order.
    ///
    /// - Parameters:
    ///   - method: the request method.
    ///   - url: the absolute URL (`https://host/path?query`).
    ///   - headers: `[name, value]` pairs as the flow log records them.
    ///   - body: the whole body to be sent.
    ///   - now: the time to sign with (whole seconds since 1970, as the article's signer writes).
    ///   - nonce: the nonce to sign with; a fresh UUID by default, as the article's signer uses.
    /// - Returns: nil when `url` is not an absolute http(s) URL.
    public func resign(method: String, url: String, headers: [[String]], body: [UInt8], now: Date = Date(),
                       nonce: String = UUID().uuidString) -> [[String]]? {
        guard let target = SignedTarget(url: url) else { return nil }
        let timestamp = String(Int(now.timeIntervalSince1970))
        var result = headers.filter { pair in
            guard let name = pair.first else { return true }
            return ![scheme.signatureHeader, scheme.timestampHeader, scheme.nonceHeader].contains {
                $0.equalsCaseInsensitive(name)
            }
        }
        if scheme.parts.contains(.timestamp) { result.append([scheme.timestampHeader, timestamp]) }
        if scheme.parts.contains(.nonce) { result.append([scheme.nonceHeader, nonce]) }
        let input = Input(method: method, path: target.foundationPath, query: target.query, host: target.host,
                          timestamp: timestamp, nonce: nonce, bodySHA256: Digest.sha256(body), headers: result)
        result.append([scheme.signatureHeader, signature(input)])
        return result
    }

    /// HMAC over OpenSSL's one-shot `HMAC()`.
    static func hmac(_ hash: SignatureScheme.Hash, key: [UInt8], message: [UInt8]) -> [UInt8] {
        let md: OpaquePointer? = switch hash {
        case .sha256: EVP_sha256()
        case .sha384: EVP_sha384()
        case .sha512: EVP_sha512()
        case .sha1: EVP_sha1()
        }
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let produced = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                HMAC(md, keyBytes.baseAddress, Int32(keyBytes.count),
                     messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count, &out, &length)
            }
        }
        precondition(produced != nil, "OpenSSL's HMAC failed for a digest its default provider has")
        return Array(out.prefix(Int(length)))
    }
}

/// The parts of a request URL a signature covers.
struct SignedTarget {
    let host: String
    /// The path as sent (percent-encoded), `/` when empty.
    let rawPath: String
    /// The query as sent, without `?`; empty when there is none.
    let query: String

    init?(url: String) {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = rest[authorityEnd...]
        if let hash = target.firstIndex(of: "#") { target = target[..<hash] }
        let question = target.firstIndex(of: "?")
        let path = question.map { target[..<$0] } ?? target
        host = String(authority)
        rawPath = path.isEmpty ? "/" : String(path)
        query = question.map { String(target[target.index(after: $0)...]) } ?? ""
    }

    /// What Foundation's `URL.path` returns for this URL on the app's side: percent-decoded,
    /// a trailing slash removed except for the root (Apple's `NSURL.path` documentation).
    var foundationPath: String {
        var path = rawPath.removingPercentEncoding ?? rawPath
        if path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// The paths a signer may have signed: Foundation's form, the path as sent, and "" for the
    /// root (`URL(string: "https://host")!.path` is empty while the request line says `/`).
    var candidatePaths: [String] {
        var paths = [foundationPath]
        if rawPath != foundationPath { paths.append(rawPath) }
        if rawPath == "/" { paths.append("") }
        return paths
    }
}
