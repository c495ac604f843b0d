/// The symbol as SVG, for web pages.
extension QRCode {
    /// An SVG document drawing the symbol: one path of dark modules on a white square, one user
    /// unit per module, so it scales without blur (`shape-rendering="crispEdges"`).
    ///
    /// - Parameters:
    ///   - quietZone: light modules around the symbol (default 4).
    ///   - pixelsPerModule: the `width`/`height` attributes: the size it is drawn at by default.
    public func svg(quietZone: Int = QRCode.standardQuietZone, pixelsPerModule: Int = 6) -> String {
        let side = size + 2 * quietZone
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else {
                    x += 1
                    continue
                }
                let start = x
                while x < size && isDark(x: x, y: y) { x += 1 }
                // A run of dark modules in a row: one rectangle.
                path += "M\(start + quietZone) \(y + quietZone)h\(x - start)v1h-\(x - start)z"
            }
        }
        let pixels = side * pixelsPerModule
        return """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(pixels)" height="\(pixels)" \
        shape-rendering="crispEdges"><rect width="\(side)" height="\(side)" fill="#fff"/>\
        <path d="\(path)" fill="#000"/></svg>

        """
    }

    /// The SVG of a QR code of `text` (level M, standard quiet zone).
    ///
    /// - Throws: `QRCodeError` when the text cannot be encoded.
    public static func svg(for text: String) throws -> String {
        try QRCode(encoding: text).svg()
    }
}
