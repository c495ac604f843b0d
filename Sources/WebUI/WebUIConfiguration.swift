import DevProxy
import Foundation
import GRPCWire

/// How the web UI listens and what it accepts, with every default stated.
public struct WebUIConfiguration: Sendable {
    /// Where to listen (`--web HOST:PORT`). Default `127.0.0.1:8081`; port 0 picks a free one.
    public var host = "127.0.0.1"
    public var port = 8081
    /// When the port is taken, try the next 20, then any free port. Default true; an explicit
    /// `--web` turns it off.
    public var tryNextPorts = true
    /// A non-loopback address needs this (`--allow-remote`) and a `password`.
    public var allowRemote = false
    /// The password (`--web-password-file`): HTTP Basic or the login form, beside the token.
    public var password: String?
    /// Most connections served at once; more get 503. Default 64.
    public var maxConnections = 64
    /// Largest request body (an edited replay). Default 16 MiB; more gets 413.
    public var maxBodySize = 16 << 20
    /// How long a request head may take once its first byte arrived. Default 10 s.
    public var headerTimeout: TimeInterval = 10
    /// How long an idle keep-alive connection is kept. Default 60 s.
    public var idleTimeout: TimeInterval = 60
    /// What `devproxy web FILE` imported, for `/api/info`'s `import` and the page's note of the
    /// records it skipped; nil for a live session or a saved one.
    public var imported: ImportNote?
    /// The message definitions a gRPC call to a host and port is typed by when it was recorded
    /// without them (`devproxy web FILE --proto`, `run --grpc-reflection`): `Flow.typed(by:…)`
    /// when `GET /api/flows/ID` reads the record. Nil: records as stored.
    public var grpcSchema: (@Sendable (_ host: String, _ port: Int) -> ProtoSchema?)?
    /// `devproxy run --mode wireguard`'s devices, for `/api/wireguard` and the CA view's Devices
    /// (WireGuard) part; nil without a wireguard listener.
    public var wireGuard: WireGuardDevices?

    /// A WireGuard listener and the keys of the devices it accepts.
    public struct WireGuardDevices: Sendable {
        public var capture: WireGuardCapture
        /// The keys file as the capture was started with it: its peers are the devices it accepts.
        public var keys: WireGuardKeyFile

        public init(capture: WireGuardCapture, keys: WireGuardKeyFile) {
            self.capture = capture
            self.keys = keys
        }
    }

    /// An imported file's flows and the records it skipped, the first of them with its reason.
    public struct ImportNote: Sendable, Equatable {
        public var file: String
        public var flows: Int
        public var skipped: Int
        /// `line` (flow log) or `entry` (HAR), its 1-based number and why it was skipped.
        public var firstSkipped: (unit: String, number: Int, reason: String)?

        public init(file: String, flows: Int, skipped: Int,
                    firstSkipped: (unit: String, number: Int, reason: String)?) {
            self.file = file
            self.flows = flows
            self.skipped = skipped
            self.firstSkipped = firstSkipped
        }

        public static func == (left: ImportNote, right: ImportNote) -> Bool {
            left.file == right.file && left.flows == right.flows && left.skipped == right.skipped
                && left.firstSkipped?.unit == right.firstSkipped?.unit
                && left.firstSkipped?.number == right.firstSkipped?.number
                && left.firstSkipped?.reason == right.firstSkipped?.reason
        }

        /// As `/api/info` gives it: `{"file", "flows", "skipped", "first_skipped": {"line": N, "reason"}}`.
        var json: [String: Any] {
            var object: [String: Any] = ["file": file, "flows": flows, "skipped": skipped]
            if let first = firstSkipped { object["first_skipped"] = [first.unit: first.number, "reason": first.reason] }
            return object
        }
    }

    public init() {}
}
