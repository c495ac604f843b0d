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

    The config holds the device's private key: hand it to that device only.

    Options: --peer N (default 1)
             --endpoint HOST[:PORT] (default: this machine's first private IPv4 address, port 51820; give the
               port of --mode wireguard@HOST:PORT when it is another)
             --qr (the QR code also when stdout is not a terminal)  --ca-dir DIR (the data directory)
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" {
            Output.line(usage)
            return 0
        }
        let arguments = try Arguments(raw, valued: ["peer", "endpoint", "ca-dir"], booleans: ["qr"])
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument `\(arguments.positionals[0])`; see `devproxy wireguard --help`")
        }
        let peerText = arguments.value("peer") ?? "1"
        guard let peer = Int(peerText), (1...250).contains(peer) else {
            throw UsageError("--peer \(peerText) is not a device number from 1 to 250")
        }
        let endpoint = try arguments.value("endpoint").map(Self.endpoint)
            ?? endpointOfThisMachine()
        let directory = CAStore.resolveDirectory(flag: arguments.value("ca-dir"))
        let keys: WireGuardKeyFile
        do {
            keys = try WireGuardKeyFile.load(directory: directory, peers: peer)
        } catch let error as ConfigurationError {
            throw CommandFailure(error.description)
        }
        let config = keys.clientConfig(peer: peer - 1, endpoint: endpoint)
        if arguments.flag("qr") || isatty(STDOUT_FILENO) == 1, let code = try? QRCode(encoding: config) {
            Output.raw(String(code.terminalText().dropLast()))
            Output.line("# peer \(peer), endpoint \(endpoint): scan it in the WireGuard app (+, Create from QR code), or "
                        + "import the config below")
        }
        // The file as the web UI's Download gives it: one newline at its end, not two.
        Output.raw(String(config.dropLast()))
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
