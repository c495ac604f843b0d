import CertAuthority
import DevProxy
import Foundation
import HTTPTypes
import QRCode

/// `devproxy wireguard`: a device's WireGuard config for `devproxy run --mode wireguard`, as the
/// WireGuard apps import it (a file, or a QR code scanned with "Create from QR code"). The keys
/// are `run`'s own (`WireGuardKeyFile`, in the data directory), made here when there are none.
enum WireGuardCommand {
    static let usage = """
    Print a device's WireGuard config for `devproxy run --mode wireguard`, and its QR code: the device's
    every connection then goes through DevProxy, whether or not its apps read the Wi-Fi proxy (Linux).

      devproxy run --mode regular --mode wireguard@0.0.0.0:51820 --allow-remote   the listener, for a phone

      devproxy wireguard                              peer 1's config (and its QR code on a terminal)
      devproxy wireguard > phone.conf                 the file the WireGuard apps import
      devproxy wireguard --endpoint 10.0.2.2:51820    for an Android emulator (devproxy run --mode wireguard)
      devproxy wireguard --peer 2                     a second device (made when missing; a running devproxy
                                                      run accepts it at once)
      devproxy wireguard --remove-peer 2              revoke a device: its key is deleted, and a running devproxy
                                                      run drops it (its sessions and connections) within a second

    The config holds the device's private key: hand it to that device only. A removed device's number and
    address are never given to another device (the flows that name its address stay its own); any device,
    peer 1 and the last one too, can be removed, and --peer N with a new number adds one again.

    Options: --peer N (default: peer 1, or the first device not removed)  --remove-peer N
             --endpoint HOST[:PORT] (default: this machine's first private IPv4 address, port 51820; give the
               port of --mode wireguard@HOST:PORT when it is another)
             --qr (the QR code also when stdout is not a terminal)  --ca-dir DIR (the data directory)
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" {
            Output.line(usage)
            return 0
        }
        let arguments = try Arguments(raw, valued: ["peer", "remove-peer", "endpoint", "ca-dir"], booleans: ["qr"])
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument `\(arguments.positionals[0])`; see `devproxy wireguard --help`")
        }
        let directory = CAStore.resolveDirectory(flag: arguments.value("ca-dir"))
        if let removed = arguments.value("remove-peer") {
            if let other = ["peer", "endpoint"].first(where: { arguments.value($0) != nil }) ?? (arguments.flag("qr") ? "qr" : nil) {
                throw UsageError("--remove-peer takes no --\(other): it prints no config")
            }
            return try remove(removed, directory: directory)
        }
        let peerText = arguments.value("peer")
        let chosen = try peerText.map { text -> Int in
            guard let peer = Int(text), (1...250).contains(peer) else {
                throw UsageError("--peer \(text) is not a device number from 1 to 250")
            }
            return peer
        }
        let endpoint = try arguments.value("endpoint").map(Self.endpoint)
            ?? endpointOfThisMachine()
        let keys: WireGuardKeyFile
        do {
            keys = try WireGuardKeyFile.load(directory: directory, peers: chosen ?? 1)
        } catch let error as ConfigurationError {
            throw CommandFailure(error.description)
        }
        // Without --peer: peer 1, or the first device not removed.
        guard let peer = chosen ?? keys.firstDevice.map({ $0 + 1 }) else {
            throw CommandFailure("every device of \(keys.path) was removed: devproxy wireguard --peer "
                                 + "\(keys.peers.count + 1) adds one")
        }
        guard let config = keys.clientConfig(peer: peer - 1, endpoint: endpoint) else {
            throw CommandFailure("peer \(peer) (\(WireGuardKeyFile.address(peer - 1))) was removed"
                                 + (keys.removals[peer - 1].map { " (\($0))" } ?? "")
                                 + " and its number is not given again: devproxy wireguard --peer \(keys.peers.count + 1) "
                                 + "adds a device")
        }
        if arguments.flag("qr") || isatty(STDOUT_FILENO) == 1, let code = try? QRCode(encoding: config) {
            Output.raw(String(code.terminalText().dropLast()))
            Output.line("# peer \(peer), endpoint \(endpoint): scan it in the WireGuard app (+, Create from QR code), or "
                        + "import the config below")
        }
        // The file as the web UI's Download gives it: one newline at its end, not two.
        Output.raw(String(config.dropLast()))
        return 0
    }

    /// `--remove-peer N`: peer N's key deleted from the key file, one line saying so.
    private static func remove(_ text: String, directory: String) throws -> Int32 {
        guard let peer = Int(text), (1...250).contains(peer) else {
            throw UsageError("--remove-peer \(text) is not a device number from 1 to 250")
        }
        let path = directory + "/" + WireGuardKeyFile.fileName
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("there is no peer \(peer) to remove: \(path) does not exist (no device was set up)")
        }
        do {
            let keys = try WireGuardKeyFile.remove(peer: peer - 1, directory: directory)
            let left = keys.deviceCount == 0 ? "no device is left (devproxy wireguard --peer \(keys.peers.count + 1) "
                + "adds one)" : keys.deviceCount == 1 ? "1 device is left" : "\(keys.deviceCount) devices are left"
            Output.line("removed peer \(peer) (\(WireGuardKeyFile.address(peer - 1))): its key is deleted from \(path) and "
                        + "a running devproxy run drops it within a second; \(left)")
        } catch let error as WireGuardKeyFile.NoSuchPeer {
            throw CommandFailure(error.description)
        } catch let error as ConfigurationError {
            throw CommandFailure(error.description)
        }
        return 0
    }

    /// `HOST[:PORT]`, port 51820 when none; an IPv6 host in brackets (`WireGuardKeyFile.endpoint(parsing:)`).
    static func endpoint(_ text: String) throws -> String {
        do {
            return try WireGuardKeyFile.endpoint(parsing: text)
        } catch let error as ConfigurationError {
            throw UsageError("--endpoint \(error.description)")
        }
    }

    private static func endpointOfThisMachine() throws -> String {
        let address = try Resolver.resolve(host: "0.0.0.0", port: ListenerMode.wireGuardPort, passive: true).first
        guard let address else { throw CommandFailure("cannot make this machine's address; give --endpoint HOST:PORT") }
        let endpoint = WireGuardKeyFile.endpoint(for: address)
        guard !endpoint.hasPrefix("0.0.0.0") else {
            throw CommandFailure("this machine has no IPv4 address but loopback; give --endpoint HOST:PORT")
        }
        return endpoint
    }
}
