import CTLS

/// A read-write memory BIO owned for the duration of one encode or decode.
final class MemoryBIO {
    let pointer: OpaquePointer

    /// A BIO to write into.
    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CAError.openSSL("allocating a memory BIO") }
        pointer = bio
    }

    /// A BIO holding a copy of `bytes`, to read from.
    init(bytes: [UInt8]) throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CAError.openSSL("allocating a memory BIO") }
        pointer = bio
        if !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32($0.count)) }
            guard written == Int32(bytes.count) else { throw CAError.openSSL("filling a memory BIO") }
        }
    }

    deinit { BIO_free(pointer) }

    /// Everything written so far.
    var bytes: [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = CTLS_BIO_get_mem_data(pointer, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    var string: String { String(decoding: bytes, as: UTF8.self) }
}
