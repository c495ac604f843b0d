import CertAuthority

extension ConnectHandler {
    /// Whether a ClientHello's server name names another host than the CONNECT or SOCKS5 request
    /// (or a transparent connection's address) it came in: then the origin is dialled where the
    /// request said and verified as that name, as the client would do it without a proxy.
    ///
    /// An address in the request and a name in the ClientHello is a client that resolved the
    /// name itself (SOCKS5 with local DNS, a transparent connection); two names that differ are
    /// a client told to connect elsewhere (`curl --connect-to`, gRPC's
    /// `ssl_target_name_override`, an app with DNS of its own). Case and a final dot make no
    /// difference (`LeafName`); an address in the ClientHello names no host.
    static func namesAnotherHost(_ name: String, than host: String) -> Bool {
        guard !LeafName.isIPLiteral(name), let named = try? LeafName(name) else { return false }
        guard !LeafName.isIPLiteral(host) else { return true }
        guard let requested = try? LeafName(host) else { return true }
        return named != requested
    }
}
