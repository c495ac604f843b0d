import Foundation
import HTTPTypes
import GRPCWire
import SessionStore

/// One finished exchange (or failed attempt) as the flow log records it: the unit every sink
/// (JSON Lines log, HAR, console, QA verdicts) receives.
///
/// Field names are the documented log format (README, "The flow log"); `nil` fields are left
/// out of the JSON.
public struct Flow: Codable, Sendable, Equatable {
    public enum Mode: String, Codable, Sendable { case http, https, tunnel, websocket }

    /// Every field of the flow (documented here; `Flow` has an accessor for each), in one
    /// copy-on-write box (`Storage`): a `Flow` is one reference,
    /// so handing it on, keeping it in a draft or an event, and the stack frames of the functions
    /// that hold one cost a word, not the ~1.3 KiB and ~40 reference counts of the fields
    /// themselves (docs/performance.md, "Run 37": each such frame had room for several).
    public struct Contents: Codable, Sendable, Equatable {
        public var id: String
        /// RFC 3339 with milliseconds, UTC.
        public var started: String
        public var ended: String
        /// The client's address, `127.0.0.1:53122`.
        public var client: String
        /// The process on this machine that opened the client's connection (Linux, this user's
        /// processes; `SocketOwners`); nil when not known.
        public var clientProcess: ClientProcess? = nil
        public var mode: Mode
        public var server: Server
        public var tls: TLSInfo?
        public var request: Request?
        public var response: Response?
        public var timings: Timings
        /// The intermediate (or root) that minted the leaf the client saw.
        public var signer: SignerInfo?
        /// The TLS persona presented to the client (`team` unless configured otherwise).
        public var persona: String?
        /// True when upstream verification was skipped (`--insecure-upstream`).
        public var insecureUpstream: Bool?
        /// WebSocket messages, in order, after a 101.
        public var websocket: [WebSocketMessageRecord]?
        /// For WebSockets: how the socket ended (the first Close frame, and messages past the
        /// record's limit).
        public var websocketEnd: WebSocketEnd? = nil
        /// For tunnels: bytes relayed each way.
        public var tunnel: TunnelInfo?
        /// For HTTP/2 streams: the stream and the client connection it belongs to.
        public var h2: HTTP2Info? = nil
        /// The listener the client came in on: its mode (`regular`, `socks5`) and address.
        public var listener: ListenerInfo? = nil
        /// For gRPC calls: service, method, status and messages (`Flow+GRPC.swift`).
        public var grpc: GRPCFlowInfo? = nil
        /// The request's signature check (`--verify-signature`), for hosts with a rule.
        public var signature: SignatureCheck? = nil
        /// For `--pinset-rewrite` responses: whether the pin set was rewritten, and what was added.
        public var pinset: PinSetInfo? = nil
        /// A request `--map-remote` sent elsewhere or `--map-local` answered from a file (`Flow+Mapping.swift`).
        public var mapped: Mapping? = nil
        /// A request held at a breakpoint (`--intercept`, the web UI; `Flow+Intercept.swift`).
        public var intercept: Intercept? = nil
        /// A response held at a breakpoint (`Flow+Intercept.swift`).
        public var interceptResponse: Intercept? = nil
        public var error: FlowError?
        /// The id of the flow this one replays (sent again from the web UI).
        public var replayOf: String? = nil
        /// `pin-check` for a connection `devproxy pin-check` opened through the proxy itself (its
        /// chain probe), not an app's: `qa verdict` leaves it out.
        public var probe: String? = nil
        /// The `--throttle` profile the client's connection went through (`slow-4g`), when it was throttled.
        public var throttle: String? = nil
        /// Informational (1xx) responses the origin sent before its final one (103 Early Hints,
        /// 102 Processing), in order; `100 Continue` and `101` are not among them. The first
        /// `FlowDraft.informationalLimit` are kept.
        public var informational: [InformationalResponse]? = nil
        /// Informational responses past the kept ones (an origin sending thousands).
        public var informationalNotKept: Int? = nil

        enum CodingKeys: String, CodingKey {
            case id, started, ended, client, mode, server, tls, request, response, timings, signer, persona
            case websocket, tunnel, error, h2, grpc, listener, signature, pinset, probe, informational, mapped, intercept
            case throttle
            case informationalNotKept = "informational_not_kept"
            case interceptResponse = "intercept_response"
            case insecureUpstream = "insecure_upstream"
            case replayOf = "replay_of"
            case clientProcess = "client_process"
            case websocketEnd = "websocket_end"
        }
    }

    private final class Storage: @unchecked Sendable {  // never mutated while shared: `makeUnique` copies first
        var contents: Contents
        init(_ contents: Contents) { self.contents = contents }
    }

    private var storage: Storage

    public init(id: String, started: String, ended: String, client: String, mode: Mode, server: Server,
                tls: TLSInfo? = nil, request: Request? = nil, response: Response? = nil, timings: Timings,
                signer: SignerInfo? = nil, persona: String? = nil, insecureUpstream: Bool? = nil,
                websocket: [WebSocketMessageRecord]? = nil, tunnel: TunnelInfo? = nil, h2: HTTP2Info? = nil,
                listener: ListenerInfo? = nil, grpc: GRPCFlowInfo? = nil, signature: SignatureCheck? = nil,
                pinset: PinSetInfo? = nil, error: FlowError? = nil, replayOf: String? = nil,
                clientProcess: ClientProcess? = nil) {
        storage = Storage(Contents(id: id, started: started, ended: ended, client: client,
                                   clientProcess: clientProcess, mode: mode, server: server,
                                   tls: tls, request: request, response: response, timings: timings, signer: signer,
                                   persona: persona, insecureUpstream: insecureUpstream, websocket: websocket,
                                   tunnel: tunnel, h2: h2, listener: listener, grpc: grpc, signature: signature,
                                   pinset: pinset, error: error, replayOf: replayOf))
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { copyStorage() }
    }

    /// Out of line, so that the accessors' coroutines do not carry room for two copies of
    /// `Contents` (~1.3 KiB each): a frame that large was `malloc`ed on every write through one
    /// of them (2,544 bytes, past glibc's small bins, so each also consolidated its fast bins:
    /// ~3,400 instructions a write, callgrind of an h2 stream).
    @inline(never)
    private mutating func copyStorage() {
        storage = Storage(storage.contents)
    }

    public init(from decoder: any Decoder) throws { storage = Storage(try Contents(from: decoder)) }

    public func encode(to encoder: any Encoder) throws { try storage.contents.encode(to: encoder) }

    public static func == (left: Flow, right: Flow) -> Bool {
        left.storage === right.storage || left.storage.contents == right.storage.contents
    }

    // One accessor for each of `Contents`' fields (documented there): read in place; a write
    // copies the box first when another `Flow` shares it.

    public var id: String {
        _read { yield storage.contents.id }
        _modify { makeUnique(); yield &storage.contents.id }
    }

    public var started: String {
        _read { yield storage.contents.started }
        _modify { makeUnique(); yield &storage.contents.started }
    }

    public var ended: String {
        _read { yield storage.contents.ended }
        _modify { makeUnique(); yield &storage.contents.ended }
    }

    public var client: String {
        _read { yield storage.contents.client }
        _modify { makeUnique(); yield &storage.contents.client }
    }

    public var mode: Mode {
        _read { yield storage.contents.mode }
        _modify { makeUnique(); yield &storage.contents.mode }
    }

    public var server: Server {
        _read { yield storage.contents.server }
        _modify { makeUnique(); yield &storage.contents.server }
    }

    public var tls: TLSInfo? {
        _read { yield storage.contents.tls }
        _modify { makeUnique(); yield &storage.contents.tls }
    }

    public var request: Request? {
        _read { yield storage.contents.request }
        _modify { makeUnique(); yield &storage.contents.request }
    }

    public var response: Response? {
        _read { yield storage.contents.response }
        _modify { makeUnique(); yield &storage.contents.response }
    }

    public var timings: Timings {
        _read { yield storage.contents.timings }
        _modify { makeUnique(); yield &storage.contents.timings }
    }

    public var signer: SignerInfo? {
        _read { yield storage.contents.signer }
        _modify { makeUnique(); yield &storage.contents.signer }
    }

    public var persona: String? {
        _read { yield storage.contents.persona }
        _modify { makeUnique(); yield &storage.contents.persona }
    }

    public var websocketEnd: WebSocketEnd? {
        _read { yield storage.contents.websocketEnd }
        _modify { makeUnique(); yield &storage.contents.websocketEnd }
    }

    public var probe: String? {
        _read { yield storage.contents.probe }
        _modify { makeUnique(); yield &storage.contents.probe }
    }

    public var throttle: String? {
        _read { yield storage.contents.throttle }
        _modify { makeUnique(); yield &storage.contents.throttle }
    }

    public var insecureUpstream: Bool? {
        _read { yield storage.contents.insecureUpstream }
        _modify { makeUnique(); yield &storage.contents.insecureUpstream }
    }

    public var websocket: [WebSocketMessageRecord]? {
        _read { yield storage.contents.websocket }
        _modify { makeUnique(); yield &storage.contents.websocket }
    }

    public var tunnel: TunnelInfo? {
        _read { yield storage.contents.tunnel }
        _modify { makeUnique(); yield &storage.contents.tunnel }
    }

    public var h2: HTTP2Info? {
        _read { yield storage.contents.h2 }
        _modify { makeUnique(); yield &storage.contents.h2 }
    }

    public var listener: ListenerInfo? {
        _read { yield storage.contents.listener }
        _modify { makeUnique(); yield &storage.contents.listener }
    }

    public var clientProcess: ClientProcess? {
        _read { yield storage.contents.clientProcess }
        _modify { makeUnique(); yield &storage.contents.clientProcess }
    }

    public var grpc: GRPCFlowInfo? {
        _read { yield storage.contents.grpc }
        _modify { makeUnique(); yield &storage.contents.grpc }
    }

    public var signature: SignatureCheck? {
        _read { yield storage.contents.signature }
        _modify { makeUnique(); yield &storage.contents.signature }
    }

    public var pinset: PinSetInfo? {
        _read { yield storage.contents.pinset }
        _modify { makeUnique(); yield &storage.contents.pinset }
    }

    public var mapped: Mapping? {
        _read { yield storage.contents.mapped }
        _modify { makeUnique(); yield &storage.contents.mapped }
    }

    public var intercept: Intercept? {
        _read { yield storage.contents.intercept }
        _modify { makeUnique(); yield &storage.contents.intercept }
    }

    public var interceptResponse: Intercept? {
        _read { yield storage.contents.interceptResponse }
        _modify { makeUnique(); yield &storage.contents.interceptResponse }
    }

    public var error: FlowError? {
        _read { yield storage.contents.error }
        _modify { makeUnique(); yield &storage.contents.error }
    }

    public var replayOf: String? {
        _read { yield storage.contents.replayOf }
        _modify { makeUnique(); yield &storage.contents.replayOf }
    }

    public var informational: [InformationalResponse]? {
        _read { yield storage.contents.informational }
        _modify { makeUnique(); yield &storage.contents.informational }
    }

    public var informationalNotKept: Int? {
        _read { yield storage.contents.informationalNotKept }
        _modify { makeUnique(); yield &storage.contents.informationalNotKept }
    }

    public struct Server: Codable, Sendable, Equatable {
        public var host: String
        public var port: Int
        /// The address actually dialled, when a connection was made.
        public var address: String?
        /// True when the request first went on a pooled keep-alive connection the server had
        /// already closed, and was sent again on a fresh one (idempotent, bodiless requests only).
        public var retried: Bool?
        /// The host an intercepted request names (its `Host` or `:authority`) when it is not
        /// `host`, the name of the connection it went on (the ClientHello's, else the CONNECT's
        /// or SOCKS5 request's): it went there as the client sent it (`curl -H 'Host: …'`, a
        /// coalesced HTTP/2 stream), and `tls.upstream` was verified for `host`, not for this one.
        public var requestHost: String? = nil

        enum CodingKeys: String, CodingKey {
            case host, port, address, retried
            case requestHost = "request_host"
        }
    }

    /// Both TLS sides of a flow, in one immutable box (`Parts`): a copy is one reference, and
    /// the flows of a connection can share one value (`UpstreamConnection.flowTLS(over:)`), so the
    /// flow log's writer finds the part it wrote for the last flow by identity
    /// (`FlowJSONFragments`) instead of comparing ~15 strings and the chain, copying each out first
    /// (~3,400 instructions and ~60 reference counts an h2 stream, callgrind).
    public struct TLSInfo: Codable, Sendable, Equatable {
        private final class Parts: Sendable {
            let client: ClientSide?
            let upstream: UpstreamSide?
            init(client: ClientSide?, upstream: UpstreamSide?) { (self.client, self.upstream) = (client, upstream) }
        }

        private var parts: Parts

        public init(client: ClientSide? = nil, upstream: UpstreamSide? = nil) {
            parts = Parts(client: client, upstream: upstream)
        }

        public var client: ClientSide? {
            get { parts.client }
            set { parts = Parts(client: newValue, upstream: parts.upstream) }
        }

        public var upstream: UpstreamSide? {
            get { parts.upstream }
            set { parts = Parts(client: parts.client, upstream: newValue) }
        }

        /// Whether the two are one value (the same box), known without comparing what they hold.
        public func isIdentical(to other: TLSInfo) -> Bool { parts === other.parts }

        public static func == (left: TLSInfo, right: TLSInfo) -> Bool {
            left.isIdentical(to: right) || (left.client == right.client && left.upstream == right.upstream)
        }

        enum CodingKeys: String, CodingKey { case client, upstream }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(client: try container.decodeIfPresent(ClientSide.self, forKey: .client),
                      upstream: try container.decodeIfPresent(UpstreamSide.self, forKey: .upstream))
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(client, forKey: .client)
            try container.encodeIfPresent(upstream, forKey: .upstream)
        }

        public struct ClientSide: Codable, Sendable, Equatable {
            public var sni: String?
            public var version: String?
            public var cipher: String?
            public var alpn: String?
        }

        public struct UpstreamSide: Codable, Sendable, Equatable {
            public var version: String?
            public var cipher: String?
            public var alpn: String?
            public var verified: Bool
            /// OpenSSL's reason when `verified` is false.
            public var verifyError: String?
            public var chain: [ChainCertificate]
            /// Client authentication, when the origin asked for a certificate (`--client-cert`).
            public var clientCertificate: ClientCertificate? = nil
            /// The origin's chain lacked an intermediate, which was fetched from this URL (its
            /// issuer's AIA `caIssuers`, `IssuerFetcher`) to verify it.
            public var fetchedIssuer: String? = nil

            enum CodingKeys: String, CodingKey {
                case version, cipher, alpn, verified, chain
                case verifyError = "verify_error"
                case clientCertificate = "client_certificate"
                case fetchedIssuer = "fetched_issuer"
            }
        }
    }

    public struct ChainCertificate: Codable, Sendable, Equatable {
        public var subject: String
        public var issuer: String
        public var notAfter: String
        public var pin: String

        enum CodingKeys: String, CodingKey {
            case subject, issuer, pin
            case notAfter = "not_after"
        }
    }

    /// The client certificate DevProxy presented to an origin that asked for one, or
    /// `presented: false` when it had none for that origin.
    public struct ClientCertificate: Codable, Sendable, Equatable {
        public var presented: Bool
        public var subject: String? = nil
        public var issuer: String? = nil
        /// `sha256/…` SPKI pin of the certificate's key.
        public var pin: String? = nil
        /// The `--client-cert` file it came from.
        public var file: String? = nil
        /// The CA names the origin listed as acceptable (its CertificateRequest), if any.
        public var acceptableCAs: [String]? = nil

        enum CodingKeys: String, CodingKey {
            case presented, subject, issuer, pin, file
            case acceptableCAs = "acceptable_cas"
        }
    }

    public struct Request: Codable, Sendable, Equatable {
        public var method: String
        public var url: String
        public var httpVersion: String
        /// Ordered `[name, value]` pairs as received (HTTP/2: without the pseudo-headers), but for
        /// a `Host` DevProxy replaced, which is the one sent (`clientHost` keeps the client's).
        public var headers: FieldPairs
        public var body: Body?
        /// HTTP/2: `:method`, `:scheme`, `:authority`, `:path` as received, apart from the headers.
        public var pseudoHeaders: FieldPairs? = nil
        /// Trailer fields after the body (HTTP/2 trailers, HTTP/1.1 chunked trailers).
        public var trailers: FieldPairs? = nil
        /// The request target as an HTTP/1.x client sent it when it was not the URL's path and
        /// query: the absolute-form a client sends a proxy (`http://host/path`), for the request
        /// line as received; nil for origin-form, `*` and HTTP/2.
        public var target: String? = nil
        /// The `Host` the HTTP/1.x client sent, when the one that went to the origin (in `headers`)
        /// differs: an absolute-form request's Host is replaced with the URL's authority (RFC 9112
        /// §3.2.2), a resend's with the one edited in the web UI; nil when it went on as sent.
        public var clientHost: String? = nil
        /// The body stopped going to the origin before its end, because the origin answered
        /// first (RFC 9112 §9.6); `body` is what the client sent.
        public var bodyCut: BodyCut? = nil

        enum CodingKeys: String, CodingKey {
            case method, url, headers, body, trailers, target
            case httpVersion = "http_version"
            case pseudoHeaders = "pseudo_headers"
            case bodyCut = "body_cut"
            case clientHost = "client_host"
        }
    }

    /// A request body the origin did not get whole: it answered before the body was in.
    public struct BodyCut: Codable, Sendable, Equatable {
        /// Body bytes that went to the origin.
        public var sent: Int
        /// Why the rest did not (`the origin answered 413 with Connection: close`).
        public var reason: String
    }

    public struct Response: Codable, Sendable, Equatable {
        public var status: Int
        public var reason: String
        public var httpVersion: String
        public var headers: FieldPairs
        public var body: Body?
        /// HTTP/2: `:status` as received, apart from the headers.
        public var pseudoHeaders: FieldPairs? = nil
        /// Trailer fields after the body (gRPC's `grpc-status` lives here).
        public var trailers: FieldPairs? = nil
        /// `Alt-Svc` alternatives DevProxy removed before the client got the response (HTTP/3,
        /// which would take the client around the proxy); `headers` has them as the origin sent them.
        public var altSvcRemoved: [String]? = nil

        enum CodingKeys: String, CodingKey {
            case status, reason, headers, body, trailers
            case httpVersion = "http_version"
            case pseudoHeaders = "pseudo_headers"
            case altSvcRemoved = "alt_svc_removed"
        }
    }

    /// The listener a flow's client connected to.
    public struct ListenerInfo: Codable, Sendable, Equatable {
        public var mode: String
        public var address: String
    }

    /// Where an HTTP/2 exchange ran: its stream on the client connection, and that connection's
    /// id (shared by every stream of it, so a UI can group them).
    public struct HTTP2Info: Codable, Sendable, Equatable {
        public var streamID: Int
        public var connectionID: String
        /// The stream's id on the upstream connection, when the origin spoke HTTP/2 too.
        public var upstreamStreamID: Int?

        enum CodingKeys: String, CodingKey {
            case streamID = "stream_id"
            case connectionID = "connection_id"
            case upstreamStreamID = "upstream_stream_id"
        }
    }

    /// A body as logged: size and hash of the whole, the first `--body-limit` bytes.
    public struct Body: Codable, Sendable, Equatable {
        /// Bytes on the wire (after de-chunking, before content decoding).
        public var size: Int
        /// SHA-256 of those bytes, hex.
        public var sha256: String
        /// The kept prefix as text, when it is text (decoded from gzip/deflate/br/zstd; read in
        /// `charset` when the body declared one other than UTF-8).
        public var text: String?
        /// The kept prefix as base64, when it is not text.
        public var base64: String?
        /// True when more than the kept prefix was sent.
        public var truncated: Bool
        /// The content coding that was decoded for `text` (`gzip`, `deflate`, `br`, `zstd`).
        public var decoded: String?
        /// Why the body's `Content-Encoding` was not undone: a coding DevProxy does not know, or
        /// bytes that are not what the coding says; `text`/`base64` then hold the bytes as sent.
        public var decodeError: String? = nil
        /// The character set `text` was read in, as the body's `Content-Type` declared it
        /// (`shift_jis`, `iso-8859-1`), when it is not UTF-8 and the bytes needed it: `text` is
        /// then their reading in UTF-8 and the store keeps the bytes as sent beside it.
        public var charset: String? = nil
        /// The decoded text was cut at this many bytes: the body decodes to more than DevProxy
        /// decodes for the record (4 MiB), though its wire bytes were kept whole. `truncated` is
        /// then true.
        public var decodedCut: Int? = nil
        /// What the session store keeps beyond the logged prefix (a spool file); not logged.
        public var spooled: SpooledBody? = nil
        /// The bytes `base64` spells, as the capture had them, so that the session store need
        /// not decode them again; not logged, and not compared (they follow from `base64`).
        public var base64Bytes: [UInt8]? = nil
        /// The bytes as they crossed the wire when `text` is their decoding (`decoded`) or their
        /// reading in a declared `charset`: the
        /// session store keeps both, so replay, curl and raw export send what was sent (they sent
        /// the decoded text under `Content-Encoding: gzip`). Not logged, and not compared.
        public var wireBytes: [UInt8]? = nil

        enum CodingKeys: String, CodingKey {
            case size, sha256, text, base64, truncated, decoded, charset
            case decodeError = "decode_error"
            case decodedCut = "decoded_cut"
        }

        /// The logged part's bytes: `text` as UTF-8, else what `base64` spells.
        public var loggedBytes: [UInt8] {
            text.map { Array($0.utf8) } ?? base64Bytes ?? base64.flatMap { Data(base64Encoded: $0) }.map(Array.init) ?? []
        }

        // Every field but `base64Bytes`, which follows from `base64`.
        public static func == (left: Body, right: Body) -> Bool {
            left.size == right.size && left.sha256 == right.sha256 && left.text == right.text
                && left.base64 == right.base64 && left.truncated == right.truncated && left.decoded == right.decoded
                && left.decodeError == right.decodeError && left.spooled == right.spooled
                && left.charset == right.charset && left.decodedCut == right.decodedCut
        }
    }

    /// Milliseconds spent in each phase (HAR's names); -1 where a phase did not happen.
    public struct Timings: Codable, Sendable, Equatable {
        public var connect: Double
        public var tls: Double
        public var send: Double
        public var wait: Double
        public var receive: Double

        public static let none = Timings(connect: -1, tls: -1, send: -1, wait: -1, receive: -1)
    }

    public struct SignerInfo: Codable, Sendable, Equatable {
        public var serial: String
        public var email: String?
    }

    public struct WebSocketMessageRecord: Codable, Sendable, Equatable {
        /// `client_to_server` or `server_to_client`.
        public var direction: String
        public var opcode: String
        public var length: Int
        /// The message's data, whole up to 64 KiB while the flow's budget for message data lasts
        /// (`MessageLog`), else its first bytes: text for text messages, base64 otherwise.
        public var text: String?
        public var base64: String?
        /// True when `text` or `base64` holds less than the whole message (`length`).
        public var truncated: Bool? = nil
        /// A permessage-deflate message (RFC 7692): its size on the wire; `length`, `text` and
        /// `base64` are then of the inflated message, as the app reads it.
        public var compressedLength: Int? = nil
        /// Why a compressed message is shown as it came, not inflated.
        public var decodeError: String? = nil
        /// When the message's last frame arrived, in seconds since 1970 (milliseconds kept), as
        /// Chrome's HAR export dates WebSocket messages.
        public var time: Double? = nil

        enum CodingKeys: String, CodingKey {
            case direction, opcode, length, text, base64, time, truncated
            case compressedLength = "compressed_length"
            case decodeError = "decode_error"
        }
    }

    /// How a WebSocket ended: the first Close frame's sender, code and reason (none when the
    /// connection ended without one: the peers then see 1006, abnormal closure), whether both
    /// sides sent theirs (a clean close, RFC 6455 §7.1.2), and how many messages came past the
    /// record's first `WebSocketSession.messageLimit` (Close frames are kept whatever the count).
    public struct WebSocketEnd: Codable, Sendable, Equatable {
        /// `client` or `server`: who sent the first Close frame.
        public var by: String?
        public var code: Int?
        public var reason: String?
        public var clean: Bool
        public var messagesNotKept: Int?

        public init(by: String?, code: Int?, reason: String?, clean: Bool, messagesNotKept: Int?) {
            (self.by, self.code, self.reason, self.clean, self.messagesNotKept) = (by, code, reason, clean, messagesNotKept)
        }

        enum CodingKeys: String, CodingKey {
            case by, code, reason, clean
            case messagesNotKept = "messages_not_kept"
        }
    }

    public struct TunnelInfo: Codable, Sendable, Equatable {
        public var sni: String?
        public var bytesFromClient: Int
        public var bytesFromServer: Int
        /// Why the connection was tunnelled (`passthrough rule *.apple.com`, `outside name constraints`).
        public var reason: String

        enum CodingKeys: String, CodingKey {
            case sni, reason
            case bytesFromClient = "bytes_from_client"
            case bytesFromServer = "bytes_from_server"
        }
    }

    /// Whether a request's HMAC signature verified; `reason` (`bad_signature`, `stale_timestamp`,
    /// `nonce_reused`, `missing_header`) when it did not.
    public struct SignatureCheck: Codable, Sendable, Equatable {
        public var valid: Bool
        public var reason: String?
    }

    /// A pin-set response matched by `--pinset-rewrite`.
    public struct PinSetInfo: Codable, Sendable, Equatable {
        /// True when the rewritten set was sent instead of the origin's.
        public var rewritten: Bool
        /// The pins added to `hashes`.
        public var added: [String]?
        /// The set's `hashes` as served.
        public var hashes: [String]?
        /// Why it was not rewritten, or what else was changed (a gzip body sent uncompressed).
        public var note: String?

        public init(rewritten: Bool, added: [String]? = nil, hashes: [String]? = nil, note: String? = nil) {
            self.rewritten = rewritten
            self.added = added
            self.hashes = hashes
            self.note = note
        }
    }

    /// What went wrong. `kind` is a closed vocabulary (see `FlowErrorKind`).
    public struct FlowError: Codable, Sendable, Equatable {
        public var kind: String
        public var message: String
        /// The TLS alert the client sent, for `client_rejected_certificate`.
        public var alert: String?
        /// HTTP/2: the RST_STREAM or GOAWAY code (`REFUSED_STREAM`).
        public var code: String? = nil
        /// HTTP/2: who sent it: `client`, `server` or `proxy`.
        public var by: String? = nil
        /// HTTP/2: response body bytes relayed before the reset.
        public var afterBytes: Int? = nil
        /// When the failure was recorded (the system's uptime), so that shutdown tells a flow it
        /// cut from one that had failed by itself before; not logged, not compared.
        public var recordedAt: TimeInterval? = nil

        enum CodingKeys: String, CodingKey {
            case kind, message, alert, code, by
            case afterBytes = "after_bytes"
        }

        // Every field but `recordedAt`, which a flow read back from the log does not have.
        public static func == (left: FlowError, right: FlowError) -> Bool {
            left.kind == right.kind && left.message == right.message && left.alert == right.alert
                && left.code == right.code && left.by == right.by && left.afterBytes == right.afterBytes
        }
    }
}

/// The `error.kind` values a flow can carry.
public enum FlowErrorKind: String, Sendable, CaseIterable {
    case clientRejectedCertificate = "client_rejected_certificate"
    case clientClosedAfterHandshake = "client_closed_after_handshake"
    /// The client hung up after a handshake in which it got none of the protocols it offered in
    /// ALPN (an h2-only gRPC client with `--no-http2`): a protocol mismatch, never a pinning signal.
    case clientClosedALPNMismatch = "client_closed_alpn_mismatch"
    /// The client completed the handshake, sent nothing for `ConnectHandler.unusedAfter` seconds
    /// or more and closed: a connection opened ahead of need (a browser's preconnect) and never
    /// used, never a pinning signal (a pinner closes as soon as its check fails).
    case clientClosedUnused = "client_closed_unused"
    /// An HTTP/2 client reset its stream (RST_STREAM); the flow records the code.
    case clientReset = "client_reset"
    /// An HTTP/2 origin reset the stream (RST_STREAM); the code reaches the client as it came.
    case upstreamReset2 = "upstream_reset_stream"
    /// An HTTP/1.1 client asked for something only HTTP/2 can carry, or the reverse (a gRPC call
    /// to an origin that speaks only HTTP/1.1).
    case protocolMismatch = "protocol_mismatch"
    /// A peer broke the HTTP/2 protocol (bad frame, HPACK failure, flow-control violation).
    case http2ProtocolError = "http2_protocol_error"
    case clientHandshakeFailed = "client_handshake_failed"
    case clientNotTLS = "client_not_tls"
    case clientClosed = "client_closed"
    case clientTimeout = "client_timeout"
    case badRequest = "bad_request"
    case proxyAuthRequired = "proxy_auth_required"
    case upstreamRefused = "upstream_refused"
    case upstreamUnresolvable = "upstream_unresolvable"
    case upstreamTimeout = "upstream_timeout"
    case upstreamReset = "upstream_reset"
    case upstreamTLSFailed = "upstream_tls_failed"
    case upstreamCertificateInvalid = "upstream_certificate_invalid"
    /// The origin asked for a client certificate, DevProxy had none for it (`--client-cert`), and
    /// the origin failed the handshake or closed the connection.
    case upstreamClientCertificateRequired = "upstream_client_certificate_required"
    case upstreamBadResponse = "upstream_bad_response"
    case upstreamClosed = "upstream_closed"
    /// The upstream proxy (`--upstream-proxy`, `upstream:URL`) refused the connection, asked for
    /// credentials (407) or answered CONNECT with another failure.
    case upstreamProxyFailed = "upstream_proxy_failed"
    /// A `--map-remote` or `--map-local` rule could not answer as written: a file it cannot read
    /// or that is too large, a URL it made that cannot be sent to. The rule's failure, not the
    /// client's nor the origin's (it read `bad_request`, "the client's request was malformed").
    case ruleFailed = "rule_failed"
    /// A transparent connection whose destination is DevProxy itself (its own listener, or its
    /// own upstream connection redirected back): serving it would loop.
    case wouldLoop = "would_loop"
    case leafRefused = "leaf_refused"
    /// The destination is the web UI's own listener, which the proxy never forwards to.
    case destinationRefused = "destination_refused"
    case aborted
    case overloaded
    /// The request was held at a breakpoint (`--intercept`) and aborted there, from the web UI or
    /// by DevProxy stopping: the client got a 502 and nothing was sent upstream.
    case interceptAborted = "intercept_aborted"
    /// The throttle was Offline (`--throttle offline`, the web UI's throttle menu): the request or
    /// connection was closed (an HTTP/2 stream reset) without an answer, as with no network, or,
    /// switched on while it ran, its connection was cut (reset) with what it relayed so far.
    case offline
}
