import DevProxy
import Foundation
import QRCode

/// `/api/wireguard`: the devices of `devproxy run --mode wireguard` for the CA view's Devices
/// (WireGuard) part, as mitmproxy's web UI shows its WireGuard config: whether each is connected
/// now, and a device's config as text and as a QR code for the WireGuard app (docs/web-ui.md).
///
/// A config holds the device's private key: these answers are behind the token like every route,
/// never cached (`no-store`) and never logged.
extension WebUI {
    /// A device counts as connected while its last handshake is at most this old: a device that
    /// talks rekeys every 2 minutes (REKEY_AFTER_TIME, WireGuard whitepaper §6.1).
    static let wireGuardConnectedWindow: TimeInterval = 180

    /// The command the page shows when the run has no wireguard listener.
    static let wireGuardStartCommand = "devproxy run --mode wireguard@0.0.0.0:51820 --allow-remote"

    /// `GET /api/wireguard`, `GET /api/wireguard/peers/N/config`, `GET /api/wireguard/peers/N/qr.svg`,
    /// `DELETE /api/wireguard/peers/N`.
    func wireGuard(_ request: WebRequest, _ rest: [String]) -> WebResponse {
        let isPeerRoute = rest.count == 4 && rest[1] == "peers" && ["config", "qr.svg"].contains(rest[3])
        let isPeer = rest.count == 3 && rest[1] == "peers"
        guard rest.count == 1 || isPeerRoute || isPeer else {
            return .error(404, "no API route \(request.method) \(request.path); see docs/web-ui.md")
        }
        if isPeer {
            guard request.method == "DELETE" else { return .error(405, "\(request.method) is not allowed on \(request.path): DELETE") }
            return removeWireGuardPeer(number: rest[2])
        }
        guard request.method == "GET" else { return .error(405, "\(request.method) is not allowed on \(request.path)") }
        guard isPeerRoute else { return wireGuardStatus() }
        return wireGuardPeer(request, number: rest[2], qrCode: rest[3] == "qr.svg")
    }

    /// The listener, the endpoint configs name, and each device's state; nothing secret.
    private func wireGuardStatus() -> WebResponse {
        guard let devices = configuration.wireGuard else {
            return .json(object: ["listening": NSNull(), "endpoint": NSNull(), "peers": [Any]()])
        }
        // Peers added with `devproxy wireguard --peer N` since the run started are accepted and listed;
        // those removed with `--remove-peer N` are dropped and not listed.
        devices.capture.refreshPeers()
        let statuses = devices.capture.peerStatus
        let peers = devices.capture.peers.enumerated().filter { !$0.element.removed }.map { index, peer -> [String: Any] in
            let status = index < statuses.count ? statuses[index] : nil
            let seconds = status?.secondsSinceHandshake
            return [
                "peer": index + 1,
                "address": NamespaceCapture.dotted(peer.address),
                "connected": seconds.map { $0 <= Self.wireGuardConnectedWindow } ?? false,
                "last_handshake_seconds": seconds.map { ($0 * 10).rounded() / 10 as Any } ?? NSNull(),
                "from": status?.endpoint.map { $0.description as Any } ?? NSNull(),
            ]
        }
        return .json(object: ["listening": devices.capture.address.description,
                              "endpoint": WireGuardKeyFile.endpoint(for: devices.capture.address), "peers": peers])
    }

    /// Removes peer `number` as `devproxy wireguard --remove-peer N` does (its key deleted from the
    /// key file), and has the run drop it at once; answers `{"removed": N, "address": "10.0.0.(N+1)"}`.
    private func removeWireGuardPeer(number: String) -> WebResponse {
        guard let devices = configuration.wireGuard else {
            return .error(404, "this run has no wireguard listener: start one with \(Self.wireGuardStartCommand)")
        }
        guard devices.capture.currentKeys() != nil else {
            return .error(409, "\(devices.keys.path) cannot be read or holds another server key now: remove the device "
                          + "with devproxy wireguard --remove-peer N")
        }
        let known = devices.capture.peers
        guard let peer = Int(number), peer >= 1, peer <= known.count else {
            let shown = number.count <= 12 && number.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) ? number : "…"
            return .error(404, "no peer \(shown)")
        }
        do {
            _ = try WireGuardKeyFile.remove(peer: peer - 1, directory: (devices.keys.path as NSString).deletingLastPathComponent)
        } catch let error as WireGuardKeyFile.NoSuchPeer {
            return .error(404, error.description)
        } catch let error as ConfigurationError {
            return .error(500, error.description)
        } catch {
            return .error(500, "\(error)")
        }
        devices.capture.refreshPeers()
        return .json(object: ["removed": peer, "address": WireGuardKeyFile.address(peer - 1)])
    }

    /// Peer `number`'s config (an attachment) or its QR code (SVG), written with `?endpoint=`
    /// or the listener's own endpoint.
    private func wireGuardPeer(_ request: WebRequest, number: String, qrCode: Bool) -> WebResponse {
        guard let devices = configuration.wireGuard else {
            return .error(404, "this run has no wireguard listener: start one with \(Self.wireGuardStartCommand)")
        }
        // The key file as it is now, read once (peers added or removed since the start, applied to the
        // run too), while it keeps the run's server key; else the keys the run started with.
        let keys = devices.capture.currentKeys() ?? devices.keys
        let known = devices.capture.peers
        let count = min(keys.peers.count, known.count)
        guard let peer = Int(number), (1...count).contains(peer) else {
            // The reason repeats a short plain number only: one line, nothing from the path as markup.
            let shown = number.count <= 12 && number.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) ? number : "…"
            return .error(404, "no peer \(shown): this run accepts "
                          + (count == 1 ? "peer 1" : "peers 1 to \(count)")
                          + " (devproxy wireguard --peer N adds one, accepted at once)")
        }
        guard !known[peer - 1].removed, keys.peers[peer - 1] != nil else {
            return .error(404, "peer \(peer) (\(WireGuardKeyFile.address(peer - 1))) was removed (devproxy wireguard "
                          + "--remove-peer \(peer)): its key is gone and the run refuses it")
        }
        var endpoint = WireGuardKeyFile.endpoint(for: devices.capture.address)
        if let given = request.query["endpoint"]?.trimmingCharacters(in: .whitespaces), !given.isEmpty {
            // The reason quotes the text given: one line, and short.
            guard given.count <= 300, !given.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                return .error(400, "endpoint is not HOST[:PORT] (a name or an IP address, with a :PORT or not)")
            }
            do {
                endpoint = try WireGuardKeyFile.endpoint(parsing: given)
            } catch {
                return .error(400, "endpoint \(error)")
            }
        }
        guard let config = keys.clientConfig(peer: peer - 1, endpoint: endpoint) else {
            return .error(404, "peer \(peer) has no key in \(WireGuardKeyFile.fileName)")
        }
        guard qrCode else {
            return .attachment(Array(config.utf8), filename: "devproxy-peer\(peer).conf",
                               contentType: "text/plain; charset=utf-8")
        }
        guard let svg = try? QRCode.svg(for: config) else {
            return .error(500, "the config of peer \(peer) does not fit in a QR code")
        }
        return WebResponse(status: 200, headers: [("Content-Type", "image/svg+xml"), ("Cache-Control", "no-store")],
                           body: Array(svg.utf8))
    }
}
