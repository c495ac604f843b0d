import Foundation

/// Builds a `GRPCFlowInfo` from a call as it streams through: the request head, body chunks
/// each way, the response head and trailers. Sans-IO: the engine hands it what it relays.
///
/// Memory is bounded: each direction's splitter holds at most one message (`Limits.splitter`),
/// and only the first `recordedMessages` messages are kept in the record; the rest are counted.
public struct GRPCFlowRecorder: Sendable {
    /// What is kept of a call. Every default is stated.
    public struct Limits: Sendable, Equatable {
        /// Per message: 4 KiB shown, up to 1 MiB held for decoding.
        public var splitter: GRPCMessageSplitter.Limits
        /// Messages recorded per call, both directions together: 64.
        public var recordedMessages: Int
        /// Bytes a compressed message may decompress to: 1 MiB.
        public var decompressedBytes: Int
        /// Per message: the first 64 KiB decoded, at most 2000 fields, 32 levels deep. With 64
        /// messages that bounds a call's decoded record near the 4 MiB a decoded body may take.
        public var decoder: ProtobufRawDecoder.Limits
        /// Message bytes decoded per call, all messages together: 512 KiB. A decoding's JSON is
        /// up to four or five times its input (a varint field per two bytes), and 64 messages
        /// decoded to their 64 KiB each made records of 9 MB: twenty such calls at once took the
        /// proxy past 1 GB (421 MB with a 1 MiB budget). Past it, messages keep their first bytes
        /// and say why they are not decoded.
        public var decodedBytesPerCall: Int

        public init(splitter: GRPCMessageSplitter.Limits = .init(), recordedMessages: Int = 64,
                    decompressedBytes: Int = 1 << 20,
                    decoder: ProtobufRawDecoder.Limits = .init(maxFields: 2000, maxInputBytes: 64 << 10),
                    decodedBytesPerCall: Int = 512 << 10) {
            self.splitter = splitter
            self.recordedMessages = recordedMessages
            self.decompressedBytes = decompressedBytes
            self.decoder = decoder
            self.decodedBytesPerCall = decodedBytesPerCall
        }
    }

    /// The record so far.
    public private(set) var info: GRPCFlowInfo
    public let limits: Limits
    /// gRPC, or gRPC-Web in binary or text mode (from the request's content type).
    public let format: GRPCWireFormat
    private let decompressor: any GRPCDecompressor
    /// The schema, when it defines the called method: messages are also decoded with their types.
    private let schema: ProtoSchema?
    private let schemaMethod: ProtoSchema.Method?
    /// The whole `--proto` schema, for the types of a failure's details whatever the method.
    private let detailsSchema: ProtoSchema?
    private var splitters: [GRPCMessageRecord.Direction: GRPCMessageSplitter]
    /// gRPC-Web text mode, per direction: the base64 undone before splitting.
    private var textDecoders: [GRPCMessageRecord.Direction: GRPCWebTextDecoder] = [:]
    private var encodings: [GRPCMessageRecord.Direction: GRPCEncoding] = [:]
    /// Connect unary: each direction's body, held up to the splitter's hold limit, and its size.
    private var unaryBodies: [GRPCMessageRecord.Direction: (held: [UInt8], size: Int)] = [:]
    /// The messages are JSON (`+json`, Connect's `application/json`), not protobuf.
    private let jsonCodec: Bool
    /// The response's HTTP status (Connect unary: 200 carries a message, anything else an error).
    private var httpStatus: Int?
    private var statusInHead = false
    private var sawResponseBody = false
    private var sawTrailers = false
    /// Message bytes decoded so far in this call (`Limits.decodedBytesPerCall`).
    private var decodedBytes = 0

    /// Whether a `Content-Type` is gRPC's: `application/grpc`, optionally `+proto`, `+json` or
    /// parameters (PROTOCOL-HTTP2.md: `"application/grpc" [("+proto" / "+json" / {custom})]`).
    public static func isGRPC(contentType: String?) -> Bool {
        wireFormat(contentType: contentType) == .grpc
    }

    /// The framed wire a `Content-Type` names: gRPC's own, gRPC-Web's binary
    /// (`application/grpc-web`, `+proto`, `+json`…) or text (`application/grpc-web-text…`) mode
    /// (PROTOCOL-WEB.md), or Connect streaming (`application/connect+proto`…); nil for anything
    /// else (a Connect unary call is told by its header too: `isConnectUnary`).
    public static func wireFormat(contentType: String?) -> GRPCWireFormat? {
        // Every request with a body asks: compared in place, without a copy.
        guard let contentType else { return nil }
        let media = mediaType(contentType)
        for format in [GRPCWireFormat.grpc, .grpcWeb, .grpcWebText, .connect] {
            let base = format.contentType.utf8
            guard media.count >= base.count, media.prefix(base.count).elementsEqual(base, by: Self.sameLetter) else { continue }
            if media.count == base.count || media.dropFirst(base.count).first == UInt8(ascii: "+") { return format }
        }
        return nil
    }

    /// Whether a request with this content type and a `Connect-Protocol-Version` header is a
    /// Connect unary call: `application/proto` or `application/json` (connectrpc.com/docs/protocol).
    public static func isConnectUnary(contentType: String?) -> Bool {
        guard let contentType else { return false }
        let media = mediaType(contentType)
        return media.elementsEqual("application/proto".utf8, by: sameLetter) || media.elementsEqual("application/json".utf8, by: sameLetter)
    }

    /// The media type of a content type: before any `;`, without surrounding spaces.
    private static func mediaType(_ contentType: String) -> Substring.UTF8View {
        var media = contentType.utf8[...]
        if let semicolon = media.firstIndex(of: UInt8(ascii: ";")) { media = media[..<semicolon] }
        while let first = media.first, first == 0x20 || first == 0x09 { media = media.dropFirst() }
        while let last = media.last, last == 0x20 || last == 0x09 { media = media.dropLast() }
        return Substring(media).utf8
    }

    private static func sameLetter(_ a: UInt8, _ b: UInt8) -> Bool { a | 0x20 == b | 0x20 }

    /// Starts the record of one call.
    /// - Parameters:
    ///   - path: the request's `:path`.
    ///   - requestHeaders: for `grpc-encoding`; names compared without case.
    ///   - format: the wire the request's content type names; gRPC-Web's trailers frame and text
    ///     mode are undone for the record.
    ///   - decompressor: undoes `grpc-encoding`; the default knows only `identity`.
    ///   - schema: message definitions (`--proto`); used when they define the called method.
    ///   - connectGet: a Connect unary call made with GET (`format` `.connectUnary`): its request
    ///     message, codec and compression come from the query, and `path` may carry it.
    public init(path: String, requestHeaders: [(name: String, value: String)], format: GRPCWireFormat = .grpc,
                limits: Limits = Limits(), decompressor: any GRPCDecompressor = IdentityDecompressor(),
                schema: ProtoSchema? = nil, connectGet: ConnectGetQuery? = nil) {
        self.limits = limits
        self.format = format
        self.decompressor = decompressor
        let path = connectGet == nil ? path : String(path.prefix { $0 != "?" })
        schemaMethod = schema?.method(path: path)
        self.schema = schemaMethod == nil ? nil : schema
        detailsSchema = schema
        let grpcPath = GRPCPath(path)
        info = GRPCFlowInfo(service: grpcPath?.service, method: grpcPath?.method)
        info.wireProtocol = format == .grpc ? nil : format.rawValue
        if let connectGet {
            jsonCodec = connectGet.codec.lowercased() == "json"
        } else {
            jsonCodec = Self.value("content-type", in: requestHeaders).map { type in
                let media = Self.mediaType(type)
                return media.elementsEqual("application/json".utf8, by: Self.sameLetter)
                    || media.reversed().starts(with: "+json".utf8.reversed(), by: Self.sameLetter)
            } ?? false
        }
        if format == .connectUnary {
            splitters = [:]
            unaryBodies = [.request: ([], 0), .response: ([], 0)]
            if let connectGet {
                if let message = connectGet.message {
                    unaryBodies[.request] = (Array(message.prefix(limits.splitter.heldBytes)), message.count)
                } else {
                    unaryBodies[.request] = nil
                    info.notes.append("request: \(connectGet.problem ?? "no message")")
                }
            }
        } else {
            splitters = [.request: GRPCMessageSplitter(limits: limits.splitter, closingFlag: format.closingFlag),
                         .response: GRPCMessageSplitter(limits: limits.splitter, closingFlag: format.closingFlag)]
        }
        if format == .grpc, let value = Self.value("grpc-timeout", in: requestHeaders),
           let seconds = GRPCStatus.timeout(fromHeader: value) {
            requestTimeout = (value, seconds)
        }
        if format == .grpcWebText {
            textDecoders = [.request: GRPCWebTextDecoder(), .response: GRPCWebTextDecoder()]
        }
        if let value = connectGet == nil ? Self.value(Self.encodingHeader(format), in: requestHeaders)
                                         : connectGet?.compression {
            info.encoding = GRPCEncoding(header: value).rawValue
            encodings[.request] = GRPCEncoding(header: value)
        }
    }

    /// Where a format names its messages' compression: `grpc-encoding`; Connect streaming's
    /// `connect-content-encoding`; a Connect unary body's HTTP `content-encoding`.
    private static func encodingHeader(_ format: GRPCWireFormat) -> String {
        switch format {
        case .connect: "connect-content-encoding"
        case .connectUnary: "content-encoding"
        default: "grpc-encoding"
        }
    }

    /// The next chunk of the request body.
    public mutating func requestBody(_ chunk: [UInt8]) { body(chunk, .request) }

    /// The response head: its `grpc-encoding`, and the status when it is a Trailers-Only response;
    /// `status`, the HTTP status, decides a Connect unary call's outcome.
    public mutating func responseHead(headers: [(name: String, value: String)], status: Int? = nil) {
        httpStatus = status
        sawResponseHead = true
        if format != .grpc {
            // gRPC-Web: the response says its own mode (a text request may be answered either way).
            switch Self.wireFormat(contentType: Self.value("content-type", in: headers)) {
            case .grpcWebText: textDecoders[.response] = textDecoders[.response] ?? GRPCWebTextDecoder()
            case .grpcWeb: textDecoders[.response] = nil
            default: break
            }
        }
        if let value = Self.value(Self.encodingHeader(format), in: headers) {
            info.responseEncoding = GRPCEncoding(header: value).rawValue
            encodings[.response] = GRPCEncoding(header: value)
        }
        statusInHead = self.status(from: headers)
        // A gRPC call answered with another HTTP status, or without a gRPC content type (a load
        // balancer's 503 text/plain), fails with the code gRPC's HTTP status mapping gives
        // (doc/http-grpc-status-mapping.md); its body is no gRPC frames ("invalid compressed flag").
        if format == .grpc, !statusInHead, let status,
           status != 200 || !Self.isGRPC(contentType: Self.value("content-type", in: headers)) {
            info.status = Self.grpcCode(httpStatus: status)
            let type = Self.value("content-type", in: headers).map { " \($0)" } ?? ""
            info.notes.append("response: HTTP \(status)\(type) is not a gRPC response: the client reports "
                              + "\(GRPCStatus.name(of: info.status ?? 2) ?? "UNKNOWN") (gRPC's HTTP status mapping)")
            splitters[.response] = nil
            answeredOutsideGRPC = true
        }
    }

    /// A response head was seen (a call with none failed before its answer; its flow says why).
    private var sawResponseHead = false
    /// The call was answered by something other than gRPC (`responseHead`).
    private var answeredOutsideGRPC = false

    /// The code gRPC's HTTP to gRPC status mapping gives an HTTP status (doc/http-grpc-status-mapping.md
    /// in grpc/grpc); a 200 without a gRPC content type is UNKNOWN.
    private static func grpcCode(httpStatus: Int) -> Int {
        switch httpStatus {
        case 400: 13
        case 401: 16
        case 403: 7
        case 404: 12
        case 429, 502, 503, 504: 14
        default: 2
        }
    }

    /// The next chunk of the response body.
    public mutating func responseBody(_ chunk: [UInt8]) {
        if !chunk.isEmpty { sawResponseBody = true }
        body(chunk, .response)
    }

    /// The response trailers: `grpc-status` and `grpc-message`.
    public mutating func responseTrailers(_ headers: [(name: String, value: String)]) {
        sawTrailers = true
        _ = status(from: headers)
    }

    /// The client reset the call's stream `elapsed` seconds after its request began, with the
    /// RST_STREAM `code` (`CANCEL`). Before the call had a status, that is the status the client
    /// reports itself: a reset with CANCEL is a cancellation (PROTOCOL-HTTP2.md maps it to
    /// CANCELLED) unless the request's `grpc-timeout` had run out by then, when it is the client's
    /// deadline passing (grpcio and grpc-go report DEADLINE_EXCEEDED and send CANCEL). Without
    /// this the call read as a response that ended without grpc-status (UNKNOWN), which no client
    /// reports for a call it ended itself.
    public mutating func clientReset(code: String, elapsed: TimeInterval) {
        guard format == .grpc, info.status == nil, !answeredOutsideGRPC else { return }
        clientEnded = true
        guard code == "CANCEL" else {
            info.notes.append("request: the client reset the stream (\(code)) before the call's status came")
            return
        }
        if deadlinePassed(elapsed) {
            info.status = 4
            info.notes.append("request: the client reset the stream (CANCEL) as its deadline (grpc-timeout "
                              + "\(requestTimeout?.header ?? "")) passed: the client reports DEADLINE_EXCEEDED")
        } else {
            info.status = 1
            info.notes.append("request: the client cancelled the call (RST_STREAM CANCEL): it reports CANCELLED")
        }
    }

    /// The client closed its connection `elapsed` seconds after the request began, before the
    /// call had a status: it ended the call itself, as a client that closes its channel does
    /// (grpcio's `channel.close()` and grpc-go's `ClientConn.Close` report CANCELLED), or one that
    /// went away; either way no response reached it, and the call reads CANCELLED, not UNKNOWN.
    public mutating func clientClosed(elapsed: TimeInterval) {
        guard format == .grpc, info.status == nil, !answeredOutsideGRPC else { return }
        clientEnded = true
        info.status = deadlinePassed(elapsed) ? 4 : 1
        info.notes.append("request: the client closed its connection before the call's status came"
                          + (info.status == 4 ? ", as its deadline (grpc-timeout \(requestTimeout?.header ?? "")) passed"
                                              : ": it ended the call (a client that closes its channel reports CANCELLED)"))
    }

    /// The client's connection was closed under the call, before its status, by the proxy (its
    /// shutdown) for the reason `why`: gRPC clients report a connection lost mid-call as
    /// UNAVAILABLE (grpcio: "Socket closed (GOAWAY received …)"), not the UNKNOWN of a response
    /// that ended without grpc-status.
    public mutating func connectionCut(_ why: String) {
        guard format == .grpc, info.status == nil, !answeredOutsideGRPC else { return }
        clientEnded = true
        info.status = 14
        info.notes.append("response: \(why) before the call's status: the client reports UNAVAILABLE")
    }

    /// The client's stream was reset with the RST_STREAM `code` (`INTERNAL_ERROR`) before the
    /// call's status (the origin's reset passed on, or DevProxy's for a broken response): the
    /// client reports the status PROTOCOL-HTTP2.md maps the code to (`GRPCStatus.code(forReset:)`),
    /// not the UNKNOWN of a response that ended without grpc-status.
    public mutating func streamReset(code: String) {
        guard format == .grpc, info.status == nil, !answeredOutsideGRPC else { return }
        clientEnded = true
        let status = GRPCStatus.code(forReset: code)
        info.status = status
        info.notes.append("response: the client's stream was reset (\(code)) before the call's status: the client "
                          + "reports \(GRPCStatus.name(of: status) ?? "\(status)")"
                          + (code == "REFUSED_STREAM" ? " or sends the call again (the server did not process it)" : ""))
    }

    /// Whether the request's `grpc-timeout` had run out `elapsed` seconds after it began. The
    /// client's clock started before its head reached DevProxy and its reset took a moment to
    /// come back: within 50 ms of the deadline counts.
    private func deadlinePassed(_ elapsed: TimeInterval) -> Bool {
        guard let timeout = requestTimeout else { return false }
        return elapsed + 0.05 >= timeout.seconds
    }

    /// The request's `grpc-timeout`, as sent and in seconds.
    private var requestTimeout: (header: String, seconds: TimeInterval)?
    /// The client reset the stream before the call's status (`clientReset`).
    private var clientEnded = false

    /// Ends both bodies (recording a message either cut short) and returns the record.
    public mutating func finish() -> GRPCFlowInfo {
        if format == .connectUnary { finishUnary() }
        for direction in [GRPCMessageRecord.Direction.request, .response] {
            if var decoder = textDecoders[direction], let note = decoder.finish() {
                info.notes.append("\(direction.rawValue): \(note)")
            }
            textDecoders[direction] = nil
            guard var splitter = splitters[direction] else { continue }
            if let cut = splitter.finish() { record(cut, direction) }
            if let error = splitter.error { info.notes.append("\(direction.rawValue): \(error.note)") }
            splitters[direction] = nil
        }
        // gRPC-Web's trailers travel in the body, so a body alone does not rule Trailers-Only out.
        info.trailersOnly = statusInHead && !sawTrailers && (format == .grpc ? !sawResponseBody : info.responseMessages == 0)
        if format == .grpc, sawResponseHead, info.status == nil, !answeredOutsideGRPC, !clientEnded {
            // A response that ended without grpc-status fails at the client (grpcio: UNKNOWN,
            // "Stream removed"): said, where the call read as a success.
            info.status = 2
            info.notes.append("response: no grpc-status (the response ended without it): the client reports the call "
                              + "failed (UNKNOWN)")
        }
        return info
    }

    private mutating func body(_ chunk: [UInt8], _ direction: GRPCMessageRecord.Direction) {
        if var unary = unaryBodies[direction] {
            let room = limits.splitter.heldBytes - unary.held.count
            if room > 0 { unary.held += chunk.prefix(room) }
            unary.size += chunk.count
            unaryBodies[direction] = unary
            return
        }
        guard var splitter = splitters[direction] else { return }
        var bytes = chunk
        if var decoder = textDecoders[direction] {
            bytes = decoder.feed(chunk)
            textDecoders[direction] = decoder
        }
        splitters[direction] = nil
        let messages = splitter.feed(bytes)
        splitters[direction] = splitter
        for message in messages { record(message, direction) }
    }

    /// Takes `grpc-status` and `grpc-message` from `headers`; true when there was a status.
    private mutating func status(from headers: [(name: String, value: String)]) -> Bool {
        guard let value = Self.value("grpc-status", in: headers) else { return false }
        info.status = GRPCStatus.code(fromHeader: value)
        info.message = Self.value("grpc-message", in: headers).map(GRPCStatus.decodeMessage)
        if info.status == nil { info.notes.append("grpc-status is not a number: \(value)") }
        if let details = Self.value("grpc-status-details-bin", in: headers) {
            let (record, note) = GRPCStatusDetails.read(header: details, schema: detailsSchema, limits: limits.decoder)
            info.statusDetails = record
            if let note { info.notes.append("response: \(note)") }
        }
        return true
    }

    private mutating func record(_ wire: GRPCWireMessage, _ direction: GRPCMessageRecord.Direction) {
        if wire.isTrailers {
            recordTrailersFrame(wire, direction)
            return
        }
        switch direction {
        case .request: info.requestMessages += 1
        case .response: info.responseMessages += 1
        }
        guard info.messages.count < limits.recordedMessages else {
            // Said once, when the first message past the limit goes by: the list stops there
            // while the call goes on (a long watch), and the counts above keep counting.
            if info.requestMessages + info.responseMessages == limits.recordedMessages + 1 {
                info.notes.append("only the first \(limits.recordedMessages) messages are recorded; "
                                  + "request_messages and response_messages count them all")
            }
            return
        }
        var notes: [String] = []
        if !wire.isComplete {
            notes.append("cut short: \(wire.received) of \(wire.length) bytes")
        } else if !wire.isHeld {
            notes.append("\(wire.length) bytes is over the \(limits.splitter.heldBytes)-byte hold limit; first bytes only")
        }
        // A compressed prefix cannot be decompressed usefully; an uncompressed one decodes as far as it goes.
        var payload: [UInt8]? = wire.isHeld || !wire.compressed ? wire.bytes : nil
        // The first bytes of a larger message (over the hold limit, or what decompressing gave before
        // its output limit or the data's end) decode as a prefix: a field they end inside is cut, not
        // damaged. Nil: not a prefix; .some(nil): of a size not known.
        var prefixOf: Int?? = wire.isComplete && !wire.isHeld ? .some(wire.length) : nil
        if wire.compressed, let compressed = payload {
            payload = nil
            let encoding = encodings[direction] ?? .identity
            if encoding == .identity {
                notes.append("compressed flag set but no grpc-encoding")
            } else if let output = decompressor.decompress(compressed, encoding: encoding,
                                                           outputLimit: limits.decompressedBytes) {
                if let note = output.note { notes.append("\(encoding): \(note)") }
                if output.complete || !output.bytes.isEmpty { payload = output.bytes }
                if !output.complete { prefixOf = .some(nil) }
            } else {
                notes.append("grpc-encoding \(encoding) not decoded")
            }
        }
        let firstBytes = wire.bytes.prefix(limits.splitter.keptBytes)
        var messageType: String?
        var typed: JSONValue?
        if jsonCodec {
            // JSON messages (`+json`): shown as the JSON they are; a protobuf decoding would be noise.
            if let whole = payload, wire.isComplete, wire.isHeld {
                if let value = try? JSONDecoder().decode(JSONValue.self, from: Data(whole)) { typed = value } else {
                    notes.append("not JSON, though the content type says so")
                }
            }
            payload = nil
        } else if let schema, let schemaMethod, let whole = payload, wire.isComplete, wire.isHeld {
            let type = direction == .request ? schemaMethod.input : schemaMethod.output
            messageType = type
            if whole.count > limits.decoder.maxInputBytes {
                notes.append("\(whole.count) bytes: over the \(limits.decoder.maxInputBytes)-byte limit of a typed decoding")
            } else {
                do {
                    typed = try schema.decode(whole, as: type)
                } catch {
                    notes.append("not a \(type) as the schema defines it: \(error.reason)")
                }
            }
        }
        if let whole = payload {
            if decodedBytes >= limits.decodedBytesPerCall {
                payload = nil
                notes.append("not decoded: the call's \(limits.decodedBytesPerCall) bytes of decodings are spent")
            } else {
                decodedBytes += min(whole.count, limits.decoder.maxInputBytes)
            }
        }
        info.messages.append(GRPCMessageRecord(
            direction: direction, compressed: wire.compressed, length: wire.length,
            firstBytesBase64: Data(firstBytes).base64EncodedString(),
            decoded: payload.map { bytes in
                let decoder = ProtobufRawDecoder(limits: limits.decoder)
                return prefixOf.map { decoder.decode(prefix: bytes, of: $0) } ?? decoder.decode(bytes)
            },
            messageType: messageType, typed: typed,
            note: notes.isEmpty ? nil : notes.joined(separator: "; "),
            time: (Date().timeIntervalSince1970 * 1000).rounded() / 1000))
    }

    /// gRPC-Web's trailers frame: `name:value` lines ending in CRLF, as an HTTP/1 header block
    /// (PROTOCOL-WEB.md), read for `grpc-status` and `grpc-message`. Connect's end-of-stream
    /// message: JSON, `{"error": {"code", "message"}, "metadata"}`, no error meaning success.
    private mutating func recordTrailersFrame(_ wire: GRPCWireMessage, _ direction: GRPCMessageRecord.Direction) {
        let why = direction == .request ? "in the request"
            : wire.compressed ? "compressed" : !wire.isComplete ? "cut short" : !wire.isHeld ? "over the hold limit" : nil
        var bytes = wire.bytes
        // Connect compresses its end-of-stream message like the others (connect-content-encoding).
        if direction == .response, wire.compressed, format == .connect, wire.isHeld, wire.isComplete,
           let encoding = encodings[.response], encoding != .identity,
           let output = decompressor.decompress(bytes, encoding: encoding, outputLimit: limits.decompressedBytes),
           output.complete {
            bytes = output.bytes
        } else if let why {
            info.notes.append("\(direction.rawValue): a trailers frame (\(wire.length) bytes) \(why); not read")
            return
        }
        sawTrailers = true
        if format == .connect {
            connectOutcome(bytes, what: "end-of-stream message")
            return
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let fields = text.split(whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }).compactMap { line in
            line.firstIndex(of: ":").map { colon in
                (name: line[..<colon].trimmingCharacters(in: .whitespaces).lowercased(),
                 value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
        }
        if !status(from: fields) { info.notes.append("response: trailers frame without grpc-status") }
    }

    /// A Connect unary call at its end: one message each way, the response's only when its HTTP
    /// status is 200; any other status comes with a JSON error saying the code and message.
    private mutating func finishUnary() {
        for direction in [GRPCMessageRecord.Direction.request, .response] {
            guard let body = unaryBodies[direction] else { continue }
            unaryBodies[direction] = nil
            if direction == .response, httpStatus != 200 {
                guard let status = httpStatus else { continue }
                var bytes = body.held
                if let encoding = encodings[.response], encoding != .identity,
                   let output = decompressor.decompress(bytes, encoding: encoding, outputLimit: limits.decompressedBytes) {
                    bytes = output.bytes
                }
                connectOutcome(bytes, what: "HTTP \(status) answer")
                if info.status == nil { info.status = Self.connectCode(httpStatus: status) }
                continue
            }
            if direction == .response { info.status = 0 }
            // An empty request body is an empty message (every field at its default), still a message.
            let encoding = encodings[direction] ?? .identity
            record(GRPCWireMessage(compressed: encoding != .identity, length: body.size, received: body.size,
                                   bytes: body.held, isHeld: body.size <= limits.splitter.heldBytes), direction)
        }
    }

    /// Reads a Connect error or end-of-stream JSON for the call's status and message.
    private mutating func connectOutcome(_ bytes: [UInt8], what: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            info.notes.append("response: the \(what) is not a JSON object")
            return
        }
        // An end-of-stream message holds it under "error"; a unary answer is the error itself.
        let error = format == .connect ? object["error"] as? [String: Any] : object
        guard let error else {
            info.status = 0
            return
        }
        let code = error["code"] as? String ?? ""
        info.status = Self.connectCodes[code]
        info.message = error["message"] as? String
        if info.status == nil { info.notes.append("response: Connect error code \"\(code)\" is not one of the 16") }
        if let details = error["details"] as? [Any] {
            info.statusDetails = GRPCStatusDetails.read(connectDetails: details, code: info.status, message: info.message,
                                                        schema: detailsSchema, limits: limits.decoder)
        }
    }

    /// Connect's error codes (connectrpc.com/docs/protocol#error-codes) as gRPC's numbers.
    static let connectCodes: [String: Int] = [
        "canceled": 1, "unknown": 2, "invalid_argument": 3, "deadline_exceeded": 4, "not_found": 5,
        "already_exists": 6, "permission_denied": 7, "resource_exhausted": 8, "failed_precondition": 9,
        "aborted": 10, "out_of_range": 11, "unimplemented": 12, "internal": 13, "unavailable": 14,
        "data_loss": 15, "unauthenticated": 16,
    ]

    /// The code Connect's spec implies for an HTTP status whose body had no error code.
    private static func connectCode(httpStatus: Int) -> Int {
        switch httpStatus {
        case 400: 3
        case 401: 16
        case 403: 7
        case 404: 12
        case 408: 4
        case 409: 10
        case 412: 9
        case 413: 8
        case 429, 502, 503, 504: 14
        case 499: 1
        case 501: 12
        default: 2
        }
    }

    private static func value(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name.lowercased() == name }?.value
    }
}
