import CTLS

/// SHA-256 of bytes as lowercase hex, through OpenSSL's one-shot `EVP_Digest`.
enum SHA256Hex {
    static func digest(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { EVP_Digest(input.baseAddress, input.count, $0.baseAddress, &length, EVP_sha256(), nil) }
        }
        // EVP_Digest fails only without memory; an empty hash then says "unknown" rather than lying.
        guard ok == 1 else { return "" }
        return digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
