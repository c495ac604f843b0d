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

        public init(splitter: GRPCMessageSplitter.Limits = .init(), recordedMessages: Int = 64,
                    decompressedBytes: Int = 1 << 20,
                    decoder: ProtobufRawDecoder.Limits = .init(maxFields: 2000, maxInputBytes: 64 << 10)) {
            self.splitter = splitter
            self.recordedMessages = recordedMessages
            self.decompressedBytes = decompressedBytes
            self.decoder = decoder
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
    private var splitters: [GRPCMessageRecord.Direction: GRPCMessageSplitter]
    /// gRPC-Web text mode, per direction: the base64 undone before splitting.
    private var textDecoders: [GRPCMessageRecord.Direction: GRPCWebTextDecoder] = [:]
    private var encodings: [GRPCMessageRecord.Direction: GRPCEncoding] = [:]
    private var statusInHead = false
    private var sawResponseBody = false
    private var sawTrailers = false

    /// Whether a `Content-Type` is gRPC's: `application/grpc`, optionally `+proto`, `+json` or
    /// parameters (PROTOCOL-HTTP2.md: `"application/grpc" [("+proto" / "+json" / {custom})]`).
    public static func isGRPC(contentType: String?) -> Bool {
        wireFormat(contentType: contentType) == .grpc
    }

    /// The gRPC wire a `Content-Type` names: gRPC's own, or gRPC-Web's binary
    /// (`application/grpc-web`, `+proto`, `+json`…) or text (`application/grpc-web-text…`) mode
    /// (PROTOCOL-WEB.md); nil for anything else.
    public static func wireFormat(contentType: String?) -> GRPCWireFormat? {
        // Every request with a body asks: most are not gRPC, and are turned away without a copy.
        guard let contentType, contentType.utf8.prefix(16).elementsEqual("application/grpc".utf8, by: { $0 | 0x20 == $1 | 0x20 })
        else { return nil }
        guard let type = contentType.lowercased().split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
        else { return nil }
        for format in [GRPCWireFormat.grpc, .grpcWeb, .grpcWebText] {
            let base = format.contentType
            if type == base || (type.hasPrefix(base) && type.dropFirst(base.count).first == "+") { return format }
        }
        return nil
    }

    /// Starts the record of one call.
    /// - Parameters:
    ///   - path: the request's `:path`.
    ///   - requestHeaders: for `grpc-encoding`; names compared without case.
    ///   - format: the wire the request's content type names; gRPC-Web's trailers frame and text
    ///     mode are undone for the record.
    ///   - decompressor: undoes `grpc-encoding`; the default knows only `identity`.
    ///   - schema: message definitions (`--proto`); used when they define the called method.
    public init(path: String, requestHeaders: [(name: String, value: String)], format: GRPCWireFormat = .grpc,
                limits: Limits = Limits(), decompressor: any GRPCDecompressor = IdentityDecompressor(),
                schema: ProtoSchema? = nil) {
        self.limits = limits
        self.format = format
        self.decompressor = decompressor
        schemaMethod = schema?.method(path: path)
        self.schema = schemaMethod == nil ? nil : schema
        let grpcPath = GRPCPath(path)
        info = GRPCFlowInfo(service: grpcPath?.service, method: grpcPath?.method)
        info.wireProtocol = format == .grpc ? nil : format.rawValue
        let web = format != .grpc
        splitters = [.request: GRPCMessageSplitter(limits: limits.splitter, web: web),
                     .response: GRPCMessageSplitter(limits: limits.splitter, web: web)]
        if format == .grpcWebText {
            textDecoders = [.request: GRPCWebTextDecoder(), .response: GRPCWebTextDecoder()]
        }
        if let value = Self.value("grpc-encoding", in: requestHeaders) {
            info.encoding = GRPCEncoding(header: value).rawValue
            encodings[.request] = GRPCEncoding(header: value)
        }
    }

    /// The next chunk of the request body.
    public mutating func requestBody(_ chunk: [UInt8]) { body(chunk, .request) }

    /// The response head: its `grpc-encoding`, and the status when it is a Trailers-Only response.
    public mutating func responseHead(headers: [(name: String, value: String)]) {
        if format != .grpc {
            // gRPC-Web: the response says its own mode (a text request may be answered either way).
            switch Self.wireFormat(contentType: Self.value("content-type", in: headers)) {
            case .grpcWebText: textDecoders[.response] = textDecoders[.response] ?? GRPCWebTextDecoder()
            case .grpcWeb: textDecoders[.response] = nil
            default: break
            }
        }
        if let value = Self.value("grpc-encoding", in: headers) {
            info.responseEncoding = GRPCEncoding(header: value).rawValue
            encodings[.response] = GRPCEncoding(header: value)
        }
        statusInHead = status(from: headers)
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

    /// Ends both bodies (recording a message either cut short) and returns the record.
    public mutating func finish() -> GRPCFlowInfo {
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
        return info
    }

    private mutating func body(_ chunk: [UInt8], _ direction: GRPCMessageRecord.Direction) {
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
        guard info.messages.count < limits.recordedMessages else { return }
        var notes: [String] = []
        if !wire.isComplete {
            notes.append("cut short: \(wire.received) of \(wire.length) bytes")
        } else if !wire.isHeld {
            notes.append("\(wire.length) bytes is over the \(limits.splitter.heldBytes)-byte hold limit; first bytes only")
        }
        // A compressed prefix cannot be decompressed usefully; an uncompressed one decodes as far as it goes.
        var payload: [UInt8]? = wire.isHeld || !wire.compressed ? wire.bytes : nil
        if wire.compressed, let compressed = payload {
            payload = nil
            let encoding = encodings[direction] ?? .identity
            if encoding == .identity {
                notes.append("compressed flag set but no grpc-encoding")
            } else if let output = decompressor.decompress(compressed, encoding: encoding,
                                                           outputLimit: limits.decompressedBytes) {
                if let note = output.note { notes.append("\(encoding): \(note)") }
                if output.complete || !output.bytes.isEmpty { payload = output.bytes }
            } else {
                notes.append("grpc-encoding \(encoding) not decoded")
            }
        }
        let firstBytes = wire.bytes.prefix(limits.splitter.keptBytes)
        var messageType: String?
        var typed: JSONValue?
        if let schema, let schemaMethod, let whole = payload, wire.isComplete, wire.isHeld {
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
        info.messages.append(GRPCMessageRecord(
            direction: direction, compressed: wire.compressed, length: wire.length,
            firstBytesBase64: Data(firstBytes).base64EncodedString(),
            decoded: payload.map { ProtobufRawDecoder(limits: limits.decoder).decode($0) },
            messageType: messageType, typed: typed,
            note: notes.isEmpty ? nil : notes.joined(separator: "; ")))
    }

    /// gRPC-Web's trailers frame: `name:value` lines ending in CRLF, as an HTTP/1 header block
    /// (PROTOCOL-WEB.md), read for `grpc-status` and `grpc-message`.
    private mutating func recordTrailersFrame(_ wire: GRPCWireMessage, _ direction: GRPCMessageRecord.Direction) {
        guard direction == .response, wire.isHeld, wire.isComplete, !wire.compressed else {
            let why = direction == .request ? "in the request"
                : wire.compressed ? "compressed" : !wire.isComplete ? "cut short" : "over the hold limit"
            info.notes.append("\(direction.rawValue): a trailers frame (\(wire.length) bytes) \(why); not read")
            return
        }
        sawTrailers = true
        let text = String(decoding: wire.bytes, as: UTF8.self)
        let fields = text.split(whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }).compactMap { line in
            line.firstIndex(of: ":").map { colon in
                (name: line[..<colon].trimmingCharacters(in: .whitespaces).lowercased(),
                 value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
        }
        if !status(from: fields) { info.notes.append("response: trailers frame without grpc-status") }
    }

    private static func value(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name.lowercased() == name }?.value
    }
}
