import GRPCWire

/// An HTTP Archive (HAR 1.2, http://www.softwareishard.com/blog/har-12-spec/) as DevProxy
/// writes it. Fields starting with `_` are DevProxy's own, as the spec allows.
public struct HARDocument: Codable, Sendable, Equatable {
    public var log: Log

    public struct Log: Codable, Sendable, Equatable {
        public var version: String
        public var creator: Creator
        public var entries: [Entry]
        /// HAR 1.2's optional comment: what an export left out (`WebUI` exports at most 10,000).
        public var comment: String? = nil
    }

    public struct Creator: Codable, Sendable, Equatable {
        public var name: String
        public var version: String
    }

    public struct Entry: Codable, Sendable, Equatable {
        public var startedDateTime: String
        /// Milliseconds: the sum of the non-negative timings (`ssl` is inside `connect`).
        public var time: Double
        public var request: Request
        public var response: Response
        public var cache: Cache
        public var timings: Timings
        public var serverIPAddress: String?
        public var connection: String?
        /// The flow's id in the `--log` file.
        public var flowID: String
        /// `http`, `https`, `tunnel` or `websocket`.
        public var mode: String
        /// Why the exchange failed, for flows that did.
        public var error: Flow.FlowError?
        /// Bytes relayed each way and why, for tunnels.
        public var tunnel: Flow.TunnelInfo?
        /// The gRPC call, for gRPC flows (the flow log's `grpc` object).
        public var grpc: GRPCFlowInfo?
        /// A WebSocket's text and binary messages, as Chrome's DevTools export them (and read
        /// them back): `type` `send` or `receive`, `time` in seconds since 1970, `opcode` 1 or 2,
        /// `data` the text, or base64 for binary; as much of each as the flow keeps (whole up to
        /// 64 KiB while the flow's budget lasts, `MessageLog`).
        public var webSocketMessages: [WebSocketMessage]? = nil
        /// `websocket` for a WebSocket, as Chrome's DevTools write it beside `_webSocketMessages`
        /// (HAR readers tell sockets by it); nil otherwise, DevProxy not knowing what asked for a
        /// request (a script, a fetch).
        public var resourceType: String? = nil
        /// What `--map-remote` or `--map-local` did to the request (the flow log's `mapped`).
        public var mapped: Flow.Mapping? = nil
        /// A request held at a breakpoint (the flow log's `intercept`).
        public var intercept: Flow.Intercept? = nil
        /// A response held at a breakpoint (the flow log's `intercept_response`).
        public var interceptResponse: Flow.Intercept? = nil
        /// The `--throttle` profile the client's connection went through (the flow log's `throttle`).
        public var throttle: String? = nil
        /// What a person wrote on the flow in the web UI: HAR 1.2's own `comment` of an entry.
        public var comment: String? = nil
        /// The colour the flow was marked with in the web UI (`red`, `orange`, …).
        public var mark: String? = nil
        /// The process on this machine that made the flow (the flow log's `client_process`).
        public var clientProcess: Flow.ClientProcess? = nil

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings, serverIPAddress, connection
            case flowID = "_flowId", mode = "_mode", error = "_error", tunnel = "_tunnel", grpc = "_grpc"
            case webSocketMessages = "_webSocketMessages", resourceType = "_resourceType", mapped = "_mapped"
            case intercept = "_intercept", throttle = "_throttle", interceptResponse = "_interceptResponse"
            case comment, mark = "_mark", clientProcess = "_client_process"
        }
    }

    /// One WebSocket message in Chrome's `_webSocketMessages` form; a message the flow kept only
    /// the first part of also says so (`_truncated`) and how long it was (`_length`, bytes).
    public struct WebSocketMessage: Codable, Sendable, Equatable {
        public var type: String
        public var time: Double
        public var opcode: Int
        public var data: String
        public var truncated: Bool? = nil
        public var length: Int? = nil

        enum CodingKeys: String, CodingKey {
            case type, time, opcode, data
            case truncated = "_truncated", length = "_length"
        }
    }

    public struct Request: Codable, Sendable, Equatable {
        public var method: String
        public var url: String
        public var httpVersion: String
        public var cookies: [Cookie]
        public var headers: [NameValue]
        public var queryString: [NameValue]
        public var postData: PostData?
        public var headersSize: Int
        public var bodySize: Int
        /// Trailer fields after the body (HTTP/2 trailers, chunked trailers); HAR 1.2 has no field for them.
        public var trailers: [NameValue]? = nil

        enum CodingKeys: String, CodingKey {
            case method, url, httpVersion, cookies, headers, queryString, postData, headersSize, bodySize
            case trailers = "_trailers"
        }
    }

    public struct Response: Codable, Sendable, Equatable {
        public var status: Int
        public var statusText: String
        public var httpVersion: String
        public var cookies: [Cookie]
        public var headers: [NameValue]
        public var content: Content
        public var redirectURL: String
        public var headersSize: Int
        public var bodySize: Int
        /// Chrome's spelling of a failed request (`kind: message`), which its importer reads.
        public var error: String?
        /// Trailer fields after the body (gRPC's `grpc-status` lives here).
        public var trailers: [NameValue]? = nil
        /// Chrome's `_transferSize` (the response's bytes on the wire), for an entry imported from
        /// a HAR that gave it; DevProxy does not count it itself.
        public var transferSize: Int? = nil

        enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize, bodySize
            case error = "_error"
            case trailers = "_trailers"
            case transferSize = "_transferSize"
        }
    }

    public struct NameValue: Codable, Sendable, Equatable {
        public var name: String
        public var value: String
    }

    public struct Cookie: Codable, Sendable, Equatable {
        public var name: String
        public var value: String
        public var path: String?
        public var domain: String?
        /// ISO 8601, as HAR 1.2 specifies (from `Set-Cookie`'s HTTP date).
        public var expires: String?
        public var httpOnly: Bool?
        public var secure: Bool?
        public var comment: String?
    }

    public struct PostData: Codable, Sendable, Equatable {
        public var mimeType: String
        public var text: String
        /// `base64` when `text` holds base64 of a binary body (HAR 1.2 has no field for that).
        public var encoding: String?
        /// A form's fields (URL-encoded or multipart), as Chrome exports a form post's: what
        /// DevTools' Payload tab lists.
        public var params: [Param]? = nil
        /// As `Content.comment` and `truncated`: the body was cut at `--body-limit`.
        public var comment: String? = nil
        public var truncated: Bool? = nil

        enum CodingKeys: String, CodingKey {
            case mimeType, text, params, comment
            case encoding = "_encoding"
            case truncated = "_truncated"
        }
    }

    /// One posted field: a value, or a file's name and type (its bytes are in `text`).
    public struct Param: Codable, Sendable, Equatable {
        public var name: String
        public var value: String?
        public var fileName: String?
        public var contentType: String?
    }

    public struct Content: Codable, Sendable, Equatable {
        /// The decoded length when known, else the bytes received.
        public var size: Int
        /// Bytes saved by the content coding, when known.
        public var compression: Int?
        public var mimeType: String
        public var text: String?
        public var encoding: String?
        /// Set when `text` holds only the part of the body DevProxy kept (`--body-limit`): a
        /// 4.8 MB JSON went out as its first MiB, invalid JSON, with nothing to say so.
        public var comment: String? = nil
        public var truncated: Bool? = nil

        enum CodingKeys: String, CodingKey {
            case size, compression, mimeType, text, encoding, comment
            case truncated = "_truncated"
        }
    }

    /// Always empty: DevProxy sees no browser cache.
    public struct Cache: Codable, Sendable, Equatable {}

    /// Milliseconds per phase; -1 for a phase that did not happen (only where HAR allows it).
    public struct Timings: Codable, Sendable, Equatable {
        public var blocked: Double
        public var dns: Double
        public var connect: Double
        public var send: Double
        public var wait: Double
        public var receive: Double
        public var ssl: Double
    }
}
