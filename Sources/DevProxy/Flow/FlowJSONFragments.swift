#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The JSON of the parts of a flow record that every exchange of one connection repeats (the
/// TLS sides and the upstream chain, the server, the signer, the listener), kept from the last
/// record this thread wrote: the next record of the same connection copies those bytes instead
/// of writing ~40 keys and strings again.
///
/// One per thread: a connection's exchanges are written on its thread, one after another, so the
/// last record's parts are nearly always the next one's. A part that differs is written as usual
/// and remembered instead. Comparing is cheap when it hits, because the flows of a connection
/// share their strings' storage: the parts' bits are the same (`bitwiseEqual`). callgrind of
/// 16 × 10 h2 streams: these four parts cost ~8,700 of a record's ~29,000 instructions.
final class FlowJSONFragments {
    // A class, so that looking at it copies one reference rather than every string of the part.
    private final class Memo<Value: Equatable> {
        var value: Value
        let bytes: [UInt8]

        init(value: Value, bytes: [UInt8]) {
            self.value = value
            self.bytes = bytes
        }
    }

    /// The buffer this thread's records are written into (`FlowJSONWriter.bytes`); nil while one
    /// is being written.
    var scratch: FlowJSONWriter.Output? = FlowJSONWriter.Output(capacity: FlowJSONWriter.scratchCapacity)

    private var tls: Memo<Flow.TLSInfo>?
    private var server: Memo<Flow.Server>?
    private var signer: Memo<Flow.SignerInfo>?
    private var listener: Memo<Flow.ListenerInfo>?

    func write(_ value: Flow.TLSInfo, to writer: inout FlowJSONWriter) { Self.write(value, &tls, &writer) }
    func write(_ value: Flow.Server, to writer: inout FlowJSONWriter) { Self.write(value, &server, &writer) }
    func write(_ value: Flow.SignerInfo, to writer: inout FlowJSONWriter) { Self.write(value, &signer, &writer) }
    func write(_ value: Flow.ListenerInfo, to writer: inout FlowJSONWriter) { Self.write(value, &listener, &writer) }

    private static func write<Value: FlowJSONWritable & Equatable>(_ value: Value, _ memo: inout Memo<Value>?,
                                                                     _ writer: inout FlowJSONWriter) {
        if let memo {
            var hit = bitwiseEqual(memo.value, value)
            if !hit, memo.value == value {
                // Equal, not the same bits: the new value is kept, so that the next flow of its
                // connection, which shares it (`Flow.TLSInfo`), is found by its bits.
                memo.value = value
                hit = true
            }
            if hit {
                memo.bytes.withUnsafeBytes { writer.append(raw: $0) }
                return
            }
        }
        let start = writer.count
        value.write(to: &writer)
        memo = Memo(value: value, bytes: writer.bytes(from: start))
    }

    /// Whether `a` and `b` have the same bits: then they are equal (their strings and arrays are
    /// the same storage), found without the derived `==`, which copies each optional part out
    /// first and so retains and releases every string in it (~2,500 instructions for the TLS
    /// part). Different bits (padding, the same text in other storage) fall back to `==`.
    private static func bitwiseEqual<Value>(_ a: Value, _ b: Value) -> Bool {
        withUnsafeBytes(of: a) { a in
            withUnsafeBytes(of: b) { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }

    /// This thread's memo (made on first use, freed when the thread ends).
    static var current: FlowJSONFragments {
        if let existing = pthread_getspecific(key) {
            return Unmanaged<FlowJSONFragments>.fromOpaque(existing).takeUnretainedValue()
        }
        let made = FlowJSONFragments()
        pthread_setspecific(key, Unmanaged.passRetained(made).toOpaque())
        return made
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { memo in
            #if canImport(Darwin)
            Unmanaged<FlowJSONFragments>.fromOpaque(memo).release()
            #else
            if let memo { Unmanaged<FlowJSONFragments>.fromOpaque(memo).release() }
            #endif
        }
        precondition(created == 0, "pthread_key_create failed: \(created)")
        return key
    }()
}

