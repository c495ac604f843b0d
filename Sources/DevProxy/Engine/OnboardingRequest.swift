import Foundation
import HTTP1

/// Which requests on the proxy's plain listener are for the onboarding site (`OnboardingSite`),
/// answered by its local route (`HTTPExchange` with `route`): nothing is resolved or forwarded.
enum OnboardingRequest {
    /// Where an onboarding request on the proxy's plain listener goes, or nil when it is not one:
    /// an absolute-form request for `devproxy.test` (any path), or an origin-form request for one
    /// of the site's paths sent straight to the proxy's port (recorded under the `Host` it named),
    /// or through the proxy to its own port (`isOwnListener`: the onboarding address a phone opens
    /// after its proxy is set; dialled, it would come back to the proxy).
    static func destination(of head: HTTPRequestHead, listenerAddress: String,
                            isOwnListener: (String, Int) -> Bool = { _, _ in false }) -> Destination? {
        switch try? head.requestTarget() {
        case .absolute(let scheme, let host, let port, let path)? where OnboardingSite.names(host):
            let tls = scheme == "https"
            return Destination(tls: tls, host: OnboardingSite.host, port: port ?? (tls ? 443 : 80), pathAndQuery: path)
        case .absolute("http", let host, let port, let path)? where OnboardingSite.serves(path)
            && isOwnListener(host, port ?? 80):
            return Destination(tls: false, host: host, port: port ?? 80, pathAndQuery: path)
        case .origin(let path)? where OnboardingSite.serves(path):
            let authority = head.headers["Host"].flatMap { $0.isEmpty ? nil : $0 } ?? listenerAddress
            let (host, port) = split(authority)
            return Destination(tls: false, host: host, port: port, pathAndQuery: path)
        default:
            return nil
        }
    }

    /// `host:port` (IPv6 in brackets) into its parts; port 80 when absent.
    private static func split(_ authority: String) -> (String, Int) {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            return (host, rest.hasPrefix(":") ? Int(rest.dropFirst()) ?? 80 : 80)
        }
        guard let colon = authority.lastIndex(of: ":") else { return (authority, 80) }
        return (String(authority[..<colon]), Int(authority[authority.index(after: colon)...]) ?? 80)
    }
}
