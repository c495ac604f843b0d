import Foundation
import TestSupport

/// Compressed test data made by real encoders: the `gzip` and `zstd` CLIs, Python's zlib, and the brotli
/// encoder library (libbrotlienc, from libbrotli-dev) through Python's ctypes, since neither
/// a `brotli` CLI nor Python's `brotli` module is in Debian's base set.
enum RealCompressors {
    static func gzip(_ data: [UInt8]) throws -> [UInt8] {
        try viaFiles(data) { input, output in
            try Subprocess.run("sh", ["-c", "gzip -9 -n -c \"$1\" > \"$2\"", "sh", input, output])
        }
    }

    /// zlib-wrapped (`wbits` 15) or raw (`wbits` -15) DEFLATE, or gzip (`wbits` 31).
    static func zlib(_ data: [UInt8], wbits: Int) throws -> [UInt8] {
        try python(data, """
        import sys, zlib
        c = zlib.compressobj(9, zlib.DEFLATED, \(wbits))
        open(sys.argv[2], "wb").write(c.compress(open(sys.argv[1], "rb").read()) + c.flush())
        """)
    }

    static func brotli(_ data: [UInt8]) throws -> [UInt8] {
        try python(data, """
        import ctypes, sys
        lib = ctypes.CDLL("libbrotlienc.so.1")
        data = open(sys.argv[1], "rb").read()
        size = ctypes.c_size_t(len(data) + 1024)
        out = ctypes.create_string_buffer(size.value)
        assert lib.BrotliEncoderCompress(11, 22, 0, ctypes.c_size_t(len(data)), data, ctypes.byref(size), out) == 1
        open(sys.argv[2], "wb").write(out.raw[:size.value])
        """)
    }

    /// zstd from the `zstd` CLI. Fed from a pipe (`stdin`), the frame does not state its content
    /// size, as a streaming server's would not; `level` 19 and `extra` are passed through.
    static func zstd(_ data: [UInt8], level: Int = 19, extra: [String] = [], fromPipe: Bool = false) throws -> [UInt8] {
        try viaFiles(data) { input, output in
            let options = (["-q", "-c", "-\(level)"] + extra).joined(separator: " ")
            let command = fromPipe ? "zstd \(options) < \"$1\" > \"$2\"" : "zstd \(options) \"$1\" > \"$2\""
            return try Subprocess.run("sh", ["-c", command, "sh", input, output])
        }
    }

    private static func python(_ data: [UInt8], _ script: String) throws -> [UInt8] {
        try viaFiles(data) { input, output in try Subprocess.run("python3", ["-c", script, input, output]) }
    }

    private static func viaFiles(_ data: [UInt8],
                                 _ run: (String, String) throws -> Subprocess.Result) throws -> [UInt8] {
        let dir = TemporaryDirectory()
        let input = dir.write("in", bytes: data)
        let result = try run(input, dir.file("out"))
        guard result.status == 0, let out = FileManager.default.contents(atPath: dir.file("out")) else {
            throw TestFailure("compressor failed: \(result.output)")
        }
        return [UInt8](out)
    }

    /// Deterministic text that compresses like real JSON does.
    static func text(lines: Int) -> [UInt8] {
        Array((0..<lines).map { "{\"id\":\($0),\"name\":\"item \($0)\",\"tags\":[\"a\",\"b\"]}\n" }.joined().utf8)
    }
}
