import Foundation

/// One file of `Assets/` as the build embedded it (see Plugins/EmbedWebAssets).
enum EmbeddedAsset: Sendable {
    /// A UTF-8 text file, verbatim.
    case text(String)
    /// A binary file, base64-encoded.
    case base64(String)
}

/// A static file the UI serves: its bytes, type and validator.
struct WebAsset: Sendable {
    let bytes: [UInt8]
    let contentType: String
    /// A strong validator for `If-None-Match`: a hash of the bytes, quoted.
    let etag: String
}

/// The UI's static files, from the assets embedded at build time.
enum WebAssets {
    /// Every file by its path under Assets/ (`index.html`, `js/app.js`).
    static let all: [String: WebAsset] = {
        var files: [String: WebAsset] = [:]
        for (path, embedded) in embedded {
            let bytes: [UInt8]
            switch embedded {
            case .text(let text): bytes = Array(text.utf8)
            case .base64(let text): bytes = [UInt8](Data(base64Encoded: text) ?? Data())
            }
            files[path] = WebAsset(bytes: bytes, contentType: contentType(for: path), etag: etag(for: bytes))
        }
        return files
    }()

    /// The file a request path names: `/` is `index.html`; nil for anything not embedded.
    static func asset(forPath path: String) -> WebAsset? {
        let name = path == "/" ? "index.html" : String(path.drop { $0 == "/" })
        return all[name]
    }

    /// The Content-Type for a file name's extension.
    static func contentType(for path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "html", "htm": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "json", "map": return "application/json"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "woff2": return "font/woff2"
        case "woff": return "font/woff"
        case "txt": return "text/plain; charset=utf-8"
        case "webmanifest": return "application/manifest+json"
        default: return "application/octet-stream"
        }
    }

    /// `"` + 64-bit FNV-1a of the bytes in hex + `"`: stable across builds of the same file.
    static func etag(for bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return "\"\(String(hash, radix: 16))-\(bytes.count)\""
    }
}
