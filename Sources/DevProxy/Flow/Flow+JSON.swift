import CertAuthority
import Foundation
import HTTP1
import HTTPTypes

/// A byte-level JSON writer for flow records: the flow log writes one record per exchange on
/// the hot path, and JSONEncoder took a third of the proxy's CPU doing it. The output is the
/// same as `FlowJSON.encoder()` (sorted keys, slashes unescaped, nil fields left out) — a test
/// holds the two to byte equality.
struct FlowJSONWriter {
    /// The record so far.
    var bytes: [UInt8] { output.bytes }

    // A class, so the copies `object` and `Fields` make share one buffer; and raw storage,
    // because an Array re-checks capacity and uniqueness on each of a record's ~300 appends.
    private let output: Output

    init(capacity: Int = 2048) {
        output = Output(capacity: capacity)
    }

    /// A writer that writes into `output` (emptied), a buffer kept for reuse (`bytes(_:)`).
    init(reusing output: Output) {
        output.removeAll()
        self.output = output
    }

    /// Appends one byte.
    mutating func append(_ byte: UInt8) { output.append(byte) }

    /// Appends bytes that are already JSON (a part written before: `FlowJSONFragments`).
    mutating func append(raw bytes: UnsafeRawBufferPointer) { output.append(bytes) }

    /// Bytes written so far.
    var count: Int { output.count }

    /// The bytes written from offset `start` on.
    func bytes(from start: Int) -> [UInt8] { output.bytes(from: start) }

    mutating func string(_ value: String) {
        output.appendString(value)
    }

    /// A key: a literal of plain ASCII, written without scanning it for escapes.
    mutating func key(_ key: StaticString) {
        key.withUTF8Buffer { output.appendQuoted(UnsafeRawBufferPointer($0)) }
    }

    /// Whether `utf8` holds a byte JSON must escape: a control character, `"` or `\`.
    /// Eight bytes at a time (SWAR): a record has ~1.5 KB of strings and this runs per flow.
    static func needsEscaping(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        WordScan.any(utf8, word: {
            WordScan.hasByte(below: 0x20, in: $0) || WordScan.hasByte(0x22, in: $0) || WordScan.hasByte(0x5C, in: $0)
        }, byte: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
    }

    mutating func number(_ value: Double) {
        if value.isNaN { return string("NaN") }
        if value.isInfinite { return string(value > 0 ? "Infinity" : "-Infinity") }
        if value == value.rounded(), abs(value) < 1e15 {
            number(Int(value))
        } else if let thousandths = Self.thousandths(value) {
            // Timings are milliseconds to three places: written from the integer, which is what
            // `String(value)` prints for them, without its shortest-digits search (~500
            // instructions a number, five numbers a record).
            if thousandths < 0 { output.append(UInt8(ascii: "-")) }
            let magnitude = Int(thousandths.magnitude)
            output.appendDecimal(magnitude / 1000)
            // The three decimals without their trailing zeros (there is at least one other digit).
            var fraction = magnitude % 1000
            var divisor = 100
            while fraction % 10 == 0 {
                fraction /= 10
                divisor /= 10
            }
            output.append(UInt8(ascii: "."))
            while divisor > 0 {
                output.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
                divisor /= 10
            }
        } else {
            var text = String(value)
            text.withUTF8 { output.append(UnsafeRawBufferPointer($0)) }
        }
    }

    mutating func number(_ value: Int) { output.appendDecimal(value) }

    /// `value` as a whole number of thousandths `k` when `value` is exactly the double nearest
    /// `k / 1000` and not a whole number, with |k| < 10^12; else nil. Then `k / 1000` with its
    /// trailing zeros dropped is the shortest decimal that reads back as `value`, which is what
    /// Swift prints: any other decimal of at most 15 significant digits is another double.
    static func thousandths(_ value: Double) -> Int? {
        let scaled = (value * 1000).rounded()
        guard abs(scaled) < 1e12, scaled.truncatingRemainder(dividingBy: 1000) != 0, scaled / 1000 == value else {
            return nil
        }
        return Int(scaled)
    }

    mutating func bool(_ value: Bool) {
        let text: StaticString = value ? "true" : "false"
        text.withUTF8Buffer { output.append(UnsafeRawBufferPointer($0)) }
    }

    /// Writes `{…}`; `body` adds fields through the `Fields` it is given, in sorted key order.
    mutating func object(_ body: (inout Fields) -> Void) {
        var fields = Fields(writer: self)
        append(UInt8(ascii: "{"))
        body(&fields)
        append(UInt8(ascii: "}"))
    }

    mutating func array<T>(_ values: [T], _ element: (inout FlowJSONWriter, T) -> Void) {
        append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            element(&self, value)
        }
        append(UInt8(ascii: "]"))
    }

    /// The fields of one object; callers add them in sorted key order.
    struct Fields {
        var writer: FlowJSONWriter
        private var first = true

        init(writer: FlowJSONWriter) { self.writer = writer }

        /// Adds `"key":` and the value `write` produces; skipped when `value` is nil.
        mutating func field<T>(_ key: StaticString, _ value: T?, _ write: (inout FlowJSONWriter, T) -> Void) {
            guard let value else { return }
            if !first { writer.append(UInt8(ascii: ",")) }
            first = false
            writer.key(key)
            writer.append(UInt8(ascii: ":"))
            write(&writer, value)
        }

        mutating func string(_ key: StaticString, _ value: String?) { field(key, value) { $0.string($1) } }
        mutating func int(_ key: StaticString, _ value: Int?) { field(key, value) { $0.number($1) } }
        mutating func double(_ key: StaticString, _ value: Double?) { field(key, value) { $0.number($1) } }
        mutating func bool(_ key: StaticString, _ value: Bool?) { field(key, value) { $0.bool($1) } }
        mutating func object<T: FlowJSONWritable>(_ key: StaticString, _ value: T?) { field(key, value) { $1.write(to: &$0) } }
        mutating func array<T: FlowJSONWritable>(_ key: StaticString, _ value: [T]?) {
            field(key, value) { writer, values in writer.array(values) { $1.write(to: &$0) } }
        }
    }
}

extension FlowJSONWriter {
    /// The bytes written so far, in one allocation that doubles when full.
    final class Output {
        private struct Storage {
            var base: UnsafeMutablePointer<UInt8>
            var count: Int
            var capacity: Int
        }

        // Behind a pointer: a class's stored `var`s are checked for exclusive access at run time
        // on every use, ~10 instructions on each of a record's ~300 appends.
        private let storage: UnsafeMutablePointer<Storage>

        init(capacity: Int) {
            let capacity = max(capacity, 64)
            storage = .allocate(capacity: 1)
            storage.initialize(to: Storage(base: .allocate(capacity: capacity), count: 0, capacity: capacity))
        }

        deinit {
            storage.pointee.base.deallocate()
            storage.deallocate()
        }

        var bytes: [UInt8] { bytes(from: 0) }

        var count: Int { storage.pointee.count }

        /// Room allocated, in bytes.
        var capacity: Int { storage.pointee.capacity }

        /// Forgets what was written; keeps the room.
        func removeAll() { storage.pointee.count = 0 }

        func bytes(from start: Int) -> [UInt8] {
            Array(UnsafeBufferPointer(start: storage.pointee.base + start, count: storage.pointee.count - start))
        }

        /// Makes room for `extra` more bytes; returns where they go.
        @inline(__always)
        private func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
            if storage.pointee.count + extra > storage.pointee.capacity { grow(to: storage.pointee.count + extra) }
            return storage.pointee.base + storage.pointee.count
        }

        private func grow(to needed: Int) {
            let capacity = max(needed, storage.pointee.capacity * 2)
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            grown.update(from: storage.pointee.base, count: storage.pointee.count)
            storage.pointee.base.deallocate()
            storage.pointee.base = grown
            storage.pointee.capacity = capacity
        }

        @inline(__always)
        func append(_ byte: UInt8) {
            reserve(1).pointee = byte
            storage.pointee.count += 1
        }

        func append(_ bytes: UnsafeRawBufferPointer) {
            guard let source = bytes.baseAddress, bytes.count > 0 else { return }
            UnsafeMutableRawPointer(reserve(bytes.count)).copyMemory(from: source, byteCount: bytes.count)
            storage.pointee.count += bytes.count
        }

        /// `value` as a JSON string. Most strings need no escaping: copied whole, straight from
        /// their UTF-8 storage.
        func appendString(_ value: String) {
            value.withUTF8Bytes { utf8 in
                guard FlowJSONWriter.needsEscaping(utf8) else {
                    appendQuoted(UnsafeRawBufferPointer(utf8))
                    return
                }
                append(UInt8(ascii: "\""))
                for byte in utf8 { appendEscaped(byte) }
                append(UInt8(ascii: "\""))
            }
        }

        private func appendEscaped(_ byte: UInt8) {
            let escape: UInt8
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): escape = byte
            case 0x0A: escape = UInt8(ascii: "n")
            case 0x0D: escape = UInt8(ascii: "r")
            case 0x09: escape = UInt8(ascii: "t")
            case 0x08: escape = UInt8(ascii: "b")
            case 0x0C: escape = UInt8(ascii: "f")
            case 0..<0x20:
                for unicode in "\\u00".utf8 { append(unicode) }
                for digit in withUnsafeBytes(of: byte, \.hex).utf8 { append(digit) }
                return
            default:
                append(byte)
                return
            }
            append(UInt8(ascii: "\\"))
            append(escape)
        }

        /// `"bytes"`: a key, or a string that needs no escaping.
        func appendQuoted(_ bytes: UnsafeRawBufferPointer) {
            let target = reserve(bytes.count + 2)
            target[0] = UInt8(ascii: "\"")
            if let source = bytes.baseAddress, bytes.count > 0 {
                UnsafeMutableRawPointer(target + 1).copyMemory(from: source, byteCount: bytes.count)
            }
            target[bytes.count + 1] = UInt8(ascii: "\"")
            storage.pointee.count += bytes.count + 2
        }

        /// `value` in decimal, without going through a String.
        func appendDecimal(_ value: Int) {
            if value < 0 { append(UInt8(ascii: "-")) }
            var magnitude = value.magnitude
            var digits = 0
            repeat {
                digits += 1
                magnitude /= 10
            } while magnitude > 0
            let target = reserve(digits)
            magnitude = value.magnitude
            for position in stride(from: digits - 1, through: 0, by: -1) {
                target[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            storage.pointee.count += digits
        }
    }
}

/// A flow record part that writes itself with `FlowJSONWriter`.
protocol FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter)
}

extension Flow: FlowJSONWritable {
    /// The record as one line of JSON (no trailing newline).
    var jsonBytes: [UInt8] {
        FlowJSONWriter.bytes { write(to: &$0) }
    }

    /// The record and a `\n`: the flow log's line, copied out once at its final size.
    var lineBytes: [UInt8] {
        FlowJSONWriter.bytes { writer in
            write(to: &writer)
            writer.append(UInt8(ascii: "\n"))
        }
    }

    func write(to writer: inout FlowJSONWriter) {
        // The parts a connection's flows repeat come from this thread's last record when equal.
        let fragments = FlowJSONFragments.current
        writer.object { f in
            f.string("client", client)
            f.object("client_process", clientProcess)
            f.string("ended", ended)
            f.object("error", error)
            f.object("grpc", grpc)
            f.object("h2", h2)
            f.string("id", id)
            f.array("informational", informational)
            f.int("informational_not_kept", informationalNotKept)
            f.bool("insecure_upstream", insecureUpstream)
            f.object("intercept", intercept)
            f.object("intercept_response", interceptResponse)
            f.field("listener", listener) { fragments.write($1, to: &$0) }
            f.object("mapped", mapped)
            f.string("mode", mode.rawValue)
            f.string("persona", persona)
            f.object("pinset", pinset)
            f.string("probe", probe)
            f.string("replay_of", replayOf)
            f.object("request", request)
            f.object("response", response)
            f.field("server", server) { fragments.write($1, to: &$0) }
            f.object("signature", signature)
            f.field("signer", signer) { fragments.write($1, to: &$0) }
            f.string("started", started)
            f.string("throttle", throttle)
            f.object("timings", timings)
            f.field("tls", tls) { fragments.write($1, to: &$0) }
            f.object("tunnel", tunnel)
            f.array("websocket", websocket)
            f.object("websocket_end", websocketEnd)
        }
    }
}

extension Flow.PinSetInfo: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.field("added", added) { writer, values in writer.array(values) { $0.string($1) } }
            f.field("hashes", hashes) { writer, values in writer.array(values) { $0.string($1) } }
            f.string("note", note)
            f.bool("rewritten", rewritten)
        }
    }
}

extension Flow.Server: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("address", address)
            f.string("host", host)
            f.int("port", port)
            f.string("request_host", requestHost)
            f.bool("retried", retried)
        }
    }
}

extension Flow.TLSInfo: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.object("client", client)
            f.object("upstream", upstream)
        }
    }
}

extension Flow.TLSInfo.ClientSide: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("alpn", alpn)
            f.string("cipher", cipher)
            f.string("sni", sni)
            f.string("version", version)
        }
    }
}

extension Flow.TLSInfo.UpstreamSide: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("alpn", alpn)
            f.array("chain", chain)
            f.string("cipher", cipher)
            f.object("client_certificate", clientCertificate)
            f.string("fetched_issuer", fetchedIssuer)
            f.bool("verified", verified)
            f.string("verify_error", verifyError)
            f.string("version", version)
        }
    }
}

extension Flow.ClientCertificate: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            if let acceptableCAs { f.field("acceptable_cas", acceptableCAs) { $0.array($1) { $0.string($1) } } }
            f.string("file", file)
            f.string("issuer", issuer)
            f.string("pin", pin)
            f.bool("presented", presented)
            f.string("subject", subject)
        }
    }
}

extension Flow.ChainCertificate: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("issuer", issuer)
            f.string("not_after", notAfter)
            f.string("pin", pin)
            f.string("subject", subject)
        }
    }
}

extension Flow.Request: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.object("body", body)
            f.object("body_cut", bodyCut)
            f.string("client_host", clientHost)
            f.field("headers", headers) { FlowJSONWriter.writeHeaders(&$0, $1) }
            f.string("http_version", httpVersion)
            f.string("method", method)
            if let pseudoHeaders { f.field("pseudo_headers", pseudoHeaders) { FlowJSONWriter.writeHeaders(&$0, $1) } }
            f.string("target", target)
            if let trailers { f.field("trailers", trailers) { FlowJSONWriter.writeHeaders(&$0, $1) } }
            f.string("url", url)
        }
    }
}

extension Flow.Response: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            if let altSvcRemoved { f.field("alt_svc_removed", altSvcRemoved) { $0.array($1) { $0.string($1) } } }
            f.object("body", body)
            f.field("headers", headers) { FlowJSONWriter.writeHeaders(&$0, $1) }
            f.string("http_version", httpVersion)
            if let pseudoHeaders { f.field("pseudo_headers", pseudoHeaders) { FlowJSONWriter.writeHeaders(&$0, $1) } }
            f.string("reason", reason)
            f.int("status", status)
            if let trailers { f.field("trailers", trailers) { FlowJSONWriter.writeHeaders(&$0, $1) } }
        }
    }
}

extension FlowJSONWriter {
    static func writeHeaders(_ writer: inout FlowJSONWriter, _ headers: FieldPairs) {
        writer.append(UInt8(ascii: "["))
        headers.flat.withUnsafeBufferPointer { parts in
            // Names and values in turn: `[name,value]` for each pair, a comma between pairs.
            for index in parts.indices {
                if index & 1 == 0 {
                    if index > 0 { writer.append(UInt8(ascii: ",")) }
                    writer.append(UInt8(ascii: "["))
                    writer.string(parts[index])
                    writer.append(UInt8(ascii: ","))
                } else {
                    writer.string(parts[index])
                    writer.append(UInt8(ascii: "]"))
                }
            }
        }
        writer.append(UInt8(ascii: "]"))
    }
}

extension Flow.Body: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("base64", base64)
            f.string("charset", charset)
            f.string("decode_error", decodeError)
            f.string("decoded", decoded)
            f.int("decoded_cut", decodedCut)
            f.string("sha256", sha256)
            f.int("size", size)
            f.string("text", text)
            f.bool("truncated", truncated)
        }
    }
}

extension Flow.Timings: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.double("connect", connect)
            f.double("receive", receive)
            f.double("send", send)
            f.double("tls", tls)
            f.double("wait", wait)
        }
    }
}

extension Flow.SignatureCheck: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("reason", reason)
            f.bool("valid", valid)
        }
    }
}

extension Flow.SignerInfo: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("email", email)
            f.string("serial", serial)
        }
    }
}

extension Flow.WebSocketMessageRecord: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("base64", base64)
            f.int("compressed_length", compressedLength)
            f.string("decode_error", decodeError)
            f.string("direction", direction)
            f.int("length", length)
            f.string("opcode", opcode)
            f.string("text", text)
            f.double("time", time)
            f.bool("truncated", truncated)
        }
    }
}

extension Flow.ListenerInfo: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("address", address)
            f.string("mode", mode)
        }
    }
}

extension Flow.HTTP2Info: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("connection_id", connectionID)
            f.int("stream_id", streamID)
            f.int("upstream_stream_id", upstreamStreamID)
        }
    }
}

extension Flow.WebSocketEnd: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("by", by)
            f.bool("clean", clean)
            f.int("code", code)
            f.int("messages_not_kept", messagesNotKept)
            f.string("reason", reason)
        }
    }
}

extension Flow.TunnelInfo: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.int("bytes_from_client", bytesFromClient)
            f.int("bytes_from_server", bytesFromServer)
            f.string("reason", reason)
            f.string("sni", sni)
        }
    }
}

extension Flow.FlowError: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.int("after_bytes", afterBytes)
            f.string("alert", alert)
            f.string("by", by)
            f.string("code", code)
            f.string("kind", kind)
            f.string("message", message)
        }
    }
}
