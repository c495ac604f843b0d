import CCompression

/// Writes bytes in a content coding, for a request body edited as text and sent again under the
/// `Content-Encoding` its headers still name (`/api/replay`, a body edited at a breakpoint): gzip and
/// deflate through zlib, br through libbrotlienc, zstd through libzstd.
public enum ContentEncoder {
    /// `bytes` in `codings` (a `Content-Encoding` value, applied in the order it lists them);
    /// nil when one of them is not one this can write (the caller says so).
    public static func encode(_ bytes: [UInt8], contentEncoding: String) -> [UInt8]? {
        guard let codings = ContentCoding.list(fromHeader: contentEncoding) else { return nil }
        var output = bytes
        for coding in codings {
            switch coding.rawValue {
            case "gzip": output = zlib(output, windowBits: 31)
            case "deflate": output = zlib(output, windowBits: 15)
            case "zstd": output = zstd(output)
            case "br": guard let coded = brotli(output) else { return nil }
                output = coded
            default: return nil
            }
        }
        return output
    }

    /// One deflate stream of `input`: gzip framing for `windowBits` 31, zlib's for 15.
    private static func zlib(_ input: [UInt8], windowBits: Int32) -> [UInt8] {
        var stream = z_stream()
        guard CCompression_deflateInit2(&stream, Z_DEFAULT_COMPRESSION, windowBits) == Z_OK else { return [] }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 32)
        var input = input
        let written = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                _ = deflate(&stream, Z_FINISH)
                return outBuffer.count - Int(stream.avail_out)
            }
        }
        return Array(output.prefix(written))
    }

    /// `input` as one brotli stream (quality 5, as a server compressing on the fly would); nil
    /// when the encoder fails.
    private static func brotli(_ input: [UInt8]) -> [UInt8]? {
        var size = BrotliEncoderMaxCompressedSize(input.count)
        if size == 0 { size = input.count + 1024 }
        var output = [UInt8](repeating: 0, count: size)
        let done = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer {
                BrotliEncoderCompress(5, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, $0.count, $0.baseAddress, &size,
                                      out.baseAddress)
            }
        }
        return done == BROTLI_TRUE ? Array(output.prefix(size)) : nil
    }

    private static func zstd(_ input: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let written = output.withUnsafeMutableBytes { out in
            input.withUnsafeBytes { ZSTD_compress(out.baseAddress, out.count, $0.baseAddress, $0.count, 3) }
        }
        return ZSTD_isError(written) != 0 ? [] : Array(output.prefix(written))
    }
}
