import CQRencode
import Foundation

/// A QR code symbol: a square matrix of dark and light modules, encoded by libqrencode.
///
/// Renderings (`terminalText`, `svg`, `png`) add the quiet zone, the light margin readers need
/// around the symbol (ISO/IEC 18004 asks for four modules).
public struct QRCode: Sendable, Equatable {
    /// How much of the symbol may be damaged and still read (ISO/IEC 18004 levels L, M, Q, H).
    public enum ErrorCorrection: Sendable {
        case low, medium, quartile, high

        var level: QRecLevel {
            switch self {
            case .low: return QR_ECLEVEL_L
            case .medium: return QR_ECLEVEL_M
            case .quartile: return QR_ECLEVEL_Q
            case .high: return QR_ECLEVEL_H
            }
        }
    }

    /// The quiet zone ISO/IEC 18004 asks for, in modules.
    public static let standardQuietZone = 4

    /// Modules per side (21 for version 1, four more per version).
    public let size: Int
    /// Row-major, `true` for a dark module.
    public let modules: [Bool]

    /// Encodes `text` as UTF-8 bytes (8-bit mode), in the smallest version that holds it.
    ///
    /// - Throws: `QRCodeError` when the text is empty or too long for any version (over ~2.3 kB
    ///   at level M).
    public init(encoding text: String, correction: ErrorCorrection = .medium) throws {
        guard !text.isEmpty else { throw QRCodeError("cannot encode an empty text as a QR code") }
        let bytes = Array(text.utf8)
        guard let symbol = QRcode_encodeData(Int32(bytes.count), bytes, 0, correction.level) else {
            let reason = errno == ERANGE ? "it is too long for a QR code" : "libqrencode failed (errno \(errno))"
            throw QRCodeError("cannot encode \(bytes.count) bytes: \(reason)")
        }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        // libqrencode: "bit 0 of each byte: 1=black, 0=white"; the other bits describe the
        // module's role (finder, timing, data), which renderings do not need.
        let data = UnsafeBufferPointer(start: symbol.pointee.data, count: width * width)
        self.init(size: width, modules: data.map { $0 & 1 == 1 })
    }

    /// A symbol from its modules (row-major, `size * size` of them).
    public init(size: Int, modules: [Bool]) {
        precondition(modules.count == size * size, "a QR matrix of side \(size) has \(size * size) modules")
        self.size = size
        self.modules = modules
    }

    /// Whether the module at column `x`, row `y` is dark; outside the symbol (the quiet zone)
    /// everything is light.
    public func isDark(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }
}

/// Why a QR code could not be made, as one line.
public struct QRCodeError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
