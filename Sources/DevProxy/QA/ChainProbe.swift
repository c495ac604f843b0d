import CertAuthority
import Foundation

/// Fetches the certificate chain a server presents, without judging it: a TLS handshake with
/// verification off, so that pinning can be evaluated on exactly what was served.
public enum ChainProbe {
    /// The chain `endpoint` serves for SNI `endpoint.serverName` (none for an IP address), leaf first.
    ///
    /// - Throws: `NetworkError`, `TLSError` or `QAError` when no handshake completes.
    public static func fetch(_ endpoint: Endpoint, timeout: TimeInterval = 10) throws -> [Certificate] {
        let socket = try endpoint.openTunnel(timeout: timeout)
        socket.setTimeout(timeout)
        let context = try TLSContext.client(extraCAs: [], insecure: true)
        let connection = try TLSConnection.connect(socket: socket, context: context, serverName: endpoint.serverName)
        defer { connection.close() }
        let chain = connection.peerChain
        guard !chain.isEmpty else { throw QAError(.network, "\(endpoint.host) completed a handshake without a certificate") }
        return chain
    }
}
