/// What DevProxy needs from a TLS ClientHello before choosing how to answer it: the SNI
/// (which leaf to mint, or whether to pass the connection through) and the ALPN list.
///
/// Sans-IO: feed it the bytes peeked from the socket. RFC 8446 §4.1.2 (ClientHello),
/// RFC 6066 §3 (server_name), RFC 7301 §3.1 (ALPN).
public struct ClientHello: Sendable, Equatable {
    public var serverName: String?
    public var alpn: [String]
    public var legacyVersion: UInt16

    /// The outcome of looking at the first bytes of a connection.
    public enum Parse: Sendable, Equatable {
        case hello(ClientHello)
        /// More bytes are needed (the ClientHello spans records or has not fully arrived).
        case incomplete
        /// The bytes are not a TLS handshake (for example plain HTTP after CONNECT).
        case notTLS(String)
    }

    /// Largest ClientHello we wait for: post-quantum key shares make them ~2 KiB; 16 KiB is
    /// the record limit.
    public static let maximumLength = 16 * 1024 + 5

    /// Parses a ClientHello from the start of a connection (one TLS record).
    public static func parse(_ bytes: [UInt8]) -> Parse {
        guard let first = bytes.first else { return .incomplete }
        guard first == 0x16 else { return .notTLS("the first byte is 0x\(String(first, radix: 16)), not a TLS handshake record") }
        guard bytes.count >= 5 else { return .incomplete }
        guard bytes[1] == 3 else { return .notTLS("unknown record version \(bytes[1]).\(bytes[2])") }
        let recordLength = Int(bytes[3]) << 8 | Int(bytes[4])
        guard recordLength > 0, recordLength <= 16384 else { return .notTLS("record length \(recordLength) is out of range") }
        guard bytes.count >= 5 + recordLength else { return .incomplete }
        var reader = Reader(bytes[5..<(5 + recordLength)])
        do {
            guard try reader.u8() == 1 else { return .notTLS("the handshake message is not a ClientHello") }
            let length = try reader.u24()
            // A ClientHello larger than one record would need reassembly; real clients do not send them.
            var body = try reader.sub(length)
            let version = try body.u16()
            try body.skip(32)                       // random
            try body.skip(Int(try body.u8()))      // legacy_session_id
            try body.skip(try body.u16())          // cipher_suites
            try body.skip(Int(try body.u8()))      // legacy_compression_methods
            var hello = ClientHello(serverName: nil, alpn: [], legacyVersion: UInt16(version))
            guard !body.isAtEnd else { return .hello(hello) }
            var extensions = try body.sub(try body.u16())
            while !extensions.isAtEnd {
                let type = try extensions.u16()
                var data = try extensions.sub(try extensions.u16())
                switch type {
                case 0: hello.serverName = try serverName(&data)
                case 16: hello.alpn = try protocols(&data)
                default: break
                }
            }
            return .hello(hello)
        } catch {
            return .notTLS("malformed ClientHello")
        }
    }

    private static func serverName(_ data: inout Reader) throws -> String? {
        var list = try data.sub(try data.u16())
        while !list.isAtEnd {
            let type = try list.u8()
            let name = try list.bytes(try list.u16())
            if type == 0 {
                // Host names are ASCII (RFC 6066 §3: `HostName<1..2^16-1>`, so never empty); anything
                // else is not a usable SNI. An empty one passed this check and named a leaf for "".
                guard !name.isEmpty, name.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { throw Reader.Failure() }
                return String(decoding: name, as: UTF8.self).lowercased()
            }
        }
        return nil
    }

    private static func protocols(_ data: inout Reader) throws -> [String] {
        var list = try data.sub(try data.u16())
        var result: [String] = []
        while !list.isAtEnd {
            result.append(String(decoding: try list.bytes(Int(try list.u8())), as: UTF8.self))
        }
        return result
    }

    /// A bounds-checked cursor over bytes.
    struct Reader {
        struct Failure: Error {}
        private var bytes: ArraySlice<UInt8>

        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

        var isAtEnd: Bool { bytes.isEmpty }

        mutating func u8() throws -> UInt8 {
            guard let value = bytes.popFirst() else { throw Failure() }
            return value
        }

        mutating func u16() throws -> Int { Int(try u8()) << 8 | Int(try u8()) }

        mutating func u24() throws -> Int { Int(try u8()) << 16 | Int(try u8()) << 8 | Int(try u8()) }

        mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count <= bytes.count else { throw Failure() }
            defer { bytes = bytes.dropFirst(count) }
            return bytes.prefix(count)
        }

        mutating func sub(_ count: Int) throws -> Reader { Reader(try bytes(count)) }

        mutating func skip(_ count: Int) throws { _ = try bytes(count) }
    }
}
