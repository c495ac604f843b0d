import CertAuthority
import CTLS
import Foundation
import HTTP1

/// `--verify-signature HOST_GLOB=KEYFILE[,SCHEME.json]`: one host pattern, its shared key and
/// its scheme.
public struct SignatureRule: Sendable {
    public let pattern: GlobPattern
    public let signer: RequestSigner

    public init(pattern: GlobPattern, signer: RequestSigner) {
        self.pattern = pattern
        self.signer = signer
    }

    /// Parses `HOST_GLOB=KEYFILE[,SCHEME.json]` and reads both files. The key is the key file's
    /// bytes, less one trailing newline.
    ///
    /// - Throws: `ConfigurationError` (one line) for a malformed argument, an unreadable or empty
    ///   key file, or a bad scheme file.
    public static func parse(_ argument: String) throws -> SignatureRule {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex,
              argument.index(after: equals) != argument.endIndex else {
            throw ConfigurationError("--verify-signature \(argument) is not HOST_GLOB=KEYFILE[,SCHEME.json]")
        }
        let files = argument[argument.index(after: equals)...].split(separator: ",", maxSplits: 1).map(String.init)
        var key: [UInt8]
        do {
            key = try SecureFile.read(files[0], what: "the signing key")
        } catch let error as CAError {
            throw ConfigurationError("--verify-signature: \(error.reason)")
        }
        if key.last == UInt8(ascii: "\n") { key.removeLast() }
        if key.last == UInt8(ascii: "\r") { key.removeLast() }
        guard !key.isEmpty else { throw ConfigurationError("--verify-signature: the signing key \(files[0]) is empty") }
        var scheme = SignatureScheme.requestSigner
        if files.count == 2 {
            let bytes: [UInt8]
            do {
                bytes = try SecureFile.read(files[1], what: "the signature scheme")
            } catch let error as CAError {
                throw ConfigurationError("--verify-signature: \(error.reason)")
            }
            scheme = try SignatureScheme(json: bytes, source: "--verify-signature \(files[1])")
        }
        return SignatureRule(pattern: GlobPattern(String(argument[..<equals])),
                             signer: RequestSigner(key: key, scheme: scheme))
    }
}

/// Checks the signature of each request to a host with a `SignatureRule`, and records the
/// outcome in the flow (`signature: {valid, reason}`).
///
/// Runs when the flow is finished, from what the flow records: method, URL, headers and the
/// SHA-256 of the whole request body, which the engine computes as the body streams through
/// (`BodyCapture`), so no body is buffered for it. Nonces are remembered for the life of the
/// proxy (the session): a nonce seen on an earlier validly signed request is `nonce_reused`.
public final class SignatureVerifier: Sendable {
    public let rules: [SignatureRule]
    private let nonces = NonceLedger()

    /// - Throws: `ConfigurationError` when a header a scheme needs is in `redactedHeaders`: the
    ///   flow would hold `<redacted>` instead of its value.
    public init(rules: [SignatureRule], redactedHeaders: [String] = []) throws {
        for rule in rules {
            if let hidden = rule.signer.scheme.requiredHeaders.first(where: { header in
                redactedHeaders.contains { $0.equalsCaseInsensitive(header) }
            }) {
                throw ConfigurationError("--redact \(hidden) hides a header --verify-signature \(rule.pattern) needs; "
                                         + "drop one of them")
            }
        }
        self.rules = rules
    }

    /// The signer for `host` (a replay re-signs with it), nil when no rule covers the host.
    public func signer(for host: String) -> RequestSigner? {
        rules.first { $0.pattern.matches(host) }?.signer
    }

    /// Adds `signature` to a flow whose host has a rule; leaves other flows alone.
    func check(_ flow: inout Flow) {
        guard let request = flow.request, let signer = signer(for: flow.server.host) else { return }
        let arrived = ISO8601.date(flow.started) ?? Date()
        flow.signature = verify(request, signer: signer, arrived: arrived)
    }

    /// The verdict for one request.
    func verify(_ request: Flow.Request, signer: RequestSigner, arrived: Date) -> Flow.SignatureCheck {
        let scheme = signer.scheme
        func header(_ name: String) -> String? {
            let pair = request.headers.first { $0.first?.equalsCaseInsensitive(name) == true }
            return pair.flatMap { $0.count > 1 ? $0[1] : nil }
        }
        guard let target = SignedTarget(url: request.url) else { return .invalid(.missingHeader) }
        for name in scheme.requiredHeaders where header(name)?.isEmpty != false { return .invalid(.missingHeader) }
        let received = header(scheme.signatureHeader) ?? ""
        let timestamp = header(scheme.timestampHeader) ?? ""
        let nonce = header(scheme.nonceHeader) ?? ""
        let bodyHash = request.body.flatMap { Self.bytes(hex: $0.sha256) } ?? Digest.sha256([])
        let matched = target.candidatePaths.contains { path in
            let input = RequestSigner.Input(method: request.method, path: path, query: target.query, host: target.host,
                                            timestamp: timestamp, nonce: nonce, bodySHA256: bodyHash,
                                            headers: request.headers.arrays)
            return Self.constantTimeEqual(signer.signature(input), received, caseInsensitive: scheme.encoding == .hex)
        }
        guard matched else { return .invalid(.badSignature) }
        if scheme.parts.contains(.timestamp) {
            guard let seconds = Double(timestamp), abs(arrived.timeIntervalSince1970 - seconds) <= scheme.maxSkew else {
                return .invalid(.staleTimestamp)
            }
        }
        if scheme.parts.contains(.nonce), !nonces.record(nonce, at: arrived, keepFor: 2 * scheme.maxSkew) {
            return .invalid(.nonceReused)
        }
        return Flow.SignatureCheck(valid: true, reason: nil)
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            let pair = String(decoding: digits[index..<index + 2], as: UTF8.self)
            guard let byte = UInt8(pair, radix: 16) else { return nil }
            result.append(byte)
        }
        return result
    }

    /// Compares two signatures without leaking, through timing, how much of a guess was right.
    private static func constantTimeEqual(_ expected: String, _ received: String, caseInsensitive: Bool) -> Bool {
        let left = Array((caseInsensitive ? expected.lowercased() : expected).utf8)
        let right = Array((caseInsensitive ? received.lowercased() : received).utf8)
        guard left.count == right.count, !left.isEmpty else { return false }
        let difference = left.withUnsafeBytes { l in
            right.withUnsafeBytes { r in CRYPTO_memcmp(l.baseAddress, r.baseAddress, l.count) }
        }
        return difference == 0
    }
}

/// Nonces seen on validly signed requests, each kept until its request's timestamp could no
/// longer pass the skew check (a replay after that is `stale_timestamp` anyway), and at most
/// `capacity` of them.
final class NonceLedger: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var seen: [String: Date] = [:]
    private var lastPrune = Date.distantPast
    private let capacity = 100_000

    /// Records `nonce`; false when it was already recorded (and still kept).
    func record(_ nonce: String, at time: Date, keepFor lifetime: TimeInterval) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if time.timeIntervalSince(lastPrune) > 60 || seen.count >= capacity {
            seen = seen.filter { time.timeIntervalSince($0.value) < lifetime }
            if seen.count >= capacity { seen.removeAll() }
            lastPrune = time
        }
        if let earlier = seen[nonce], time.timeIntervalSince(earlier) < lifetime { return false }
        seen[nonce] = time
        return true
    }
}

extension Flow.SignatureCheck {
    static func invalid(_ reason: Reason) -> Flow.SignatureCheck {
        Flow.SignatureCheck(valid: false, reason: reason.rawValue)
    }

    /// Why a signature failed: a closed vocabulary.
    enum Reason: String {
        case badSignature = "bad_signature"
        case staleTimestamp = "stale_timestamp"
        case nonceReused = "nonce_reused"
        case missingHeader = "missing_header"
    }
}
