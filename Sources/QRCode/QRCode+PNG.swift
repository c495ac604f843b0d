import CCompression

/// The symbol as a PNG image (zlib from Debian through CCompression).
extension QRCode {
    /// An 8-bit greyscale PNG (W3C PNG, 2nd edition: signature, IHDR, one IDAT, IEND), black
    /// modules on white, `scale` pixels per module.
    ///
    /// - Parameters:
    ///   - scale: pixels per module (default 8), at least 1.
    ///   - quietZone: light modules around the symbol (default 4).
    public func png(scale: Int = 8, quietZone: Int = QRCode.standardQuietZone) -> [UInt8] {
        let scale = max(1, scale)
        let side = (size + 2 * quietZone) * scale
        // Each scanline is filter type 0 (None) followed by one byte per pixel.
        var raw: [UInt8] = []
        raw.reserveCapacity(side * (side + 1))
        for row in 0..<side {
            raw.append(0)
            let y = row / scale - quietZone
            for column in 0..<side {
                raw.append(isDark(x: column / scale - quietZone, y: y) ? 0x00 : 0xFF)
            }
        }
        var header: [UInt8] = Self.bigEndian(UInt32(side)) + Self.bigEndian(UInt32(side))
        header += [8, 0, 0, 0, 0]   // bit depth 8, greyscale, deflate, adaptive filtering, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + Self.chunk("IHDR", header) + Self.chunk("IDAT", Self.deflate(raw)) + Self.chunk("IEND", [])
    }

    /// A PNG chunk: length, type, data, CRC-32 of type and data.
    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        let crc = typed.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        return bigEndian(UInt32(data.count)) + typed + bigEndian(UInt32(truncatingIfNeeded: crc))
    }

    /// The zlib stream (RFC 1950) PNG's IDAT carries.
    private static func deflate(_ bytes: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { compress2(out.baseAddress, &length, $0.baseAddress, uLong($0.count), 9) }
        }
        // compressBound sizes the buffer so that compress2 cannot run out of room.
        precondition(status == Z_OK, "compress2 failed (\(status))")
        return Array(output.prefix(Int(length)))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
