/// The application protocols a TLS server connection may answer in ALPN, most preferred first
/// (RFC 7301 §3.2: the server picks one of the client's offers, by its own preference).
///
/// The proxy sets one per client connection once it knows what the origin speaks: `h2` first
/// when the origin chose h2, `http/1.1` first when it chose HTTP/1.1 (the client sees what it
/// would see without us), either when the client offered only the other one (the exchange then
/// translates).
public final class ALPNPreference: Sendable {
    public let protocols: [String]
    private let wire: [[UInt8]]

    public init(_ protocols: [String]) {
        self.protocols = protocols
        self.wire = protocols.map { Array($0.utf8) }
    }

    /// HTTP/1.1 only: what a connection answers when nothing else was set.
    public static let http11 = ALPNPreference(["http/1.1"])

    /// Finds the first preferred protocol in a ClientHello's ALPN list (RFC 7301 §3.1 wire form:
    /// length-prefixed names) and returns where it sits in `offered`; nil when none is offered.
    func choose(fromWire offered: UnsafeBufferPointer<UInt8>) -> (start: Int, length: Int)? {
        for name in wire {
            var index = 0
            while index < offered.count {
                let length = Int(offered[index])
                let start = index + 1
                guard start + length <= offered.count else { break }
                if length == name.count && offered[start..<start + length].elementsEqual(name) { return (start, length) }
                index = start + length
            }
        }
        return nil
    }

    /// The names as the ALPN extension carries them: each preceded by its length. Names longer
    /// than 255 bytes cannot be sent and are left out.
    public static func wireFormat(_ protocols: [String]) -> [UInt8] {
        protocols.flatMap { name -> [UInt8] in
            let bytes = Array(name.utf8)
            return (1...255).contains(bytes.count) ? [UInt8(bytes.count)] + bytes : []
        }
    }
}
