import Foundation

// EmbedWebAssetsTool ASSETS_DIR OUTPUT.swift
//
// Writes `extension WebAssets { static let embedded: [String: EmbeddedAsset] }`: each file under
// ASSETS_DIR by its relative path, as a raw string literal when it is plain UTF-8 text, else as
// base64. Run by the EmbedWebAssets build-tool plugin; the output is deterministic (sorted paths)
// so an unchanged asset set rebuilds nothing downstream.

@main
enum EmbedWebAssetsTool {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else {
            FileHandle.standardError.write(Data("usage: EmbedWebAssetsTool ASSETS_DIR OUTPUT.swift\n".utf8))
            exit(2)
        }
        let root = URL(fileURLWithPath: arguments[1]).standardizedFileURL
        let outputPath = arguments[2]

        var source = """
        // Generated at build time by EmbedWebAssetsTool (Plugins/EmbedWebAssets) from Sources/WebUI/Assets.
        // Do not edit: edit the assets.

        extension WebAssets {
            /// Every embedded file by its path under Assets/.
            static let embedded: [String: EmbeddedAsset] = [

        """
        var literals = ""
        for (index, (path, bytes)) in assetFiles(under: root).enumerated() {
            let name = "asset\(index)"
            if isLiteralSafeText(bytes) {
                let hashes = String(repeating: "#", count: hashCount(for: bytes))
                let text = String(decoding: bytes, as: UTF8.self)
                literals += "\n    private static let \(name) = \(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)\n"
                source += "        \(swiftStringLiteral(path)): .text(\(name)),\n"
            } else {
                literals += "\n    private static let \(name) = \"\(Data(bytes).base64EncodedString())\"\n"
                source += "        \(swiftStringLiteral(path)): .base64(\(name)),\n"
            }
        }
        // An empty dictionary literal is `[:]`.
        source += (literals.isEmpty ? "        :\n" : "") + "    ]\n" + literals + "}\n"
        let output = Data(source.utf8)
        if FileManager.default.contents(atPath: outputPath) != output {
            guard FileManager.default.createFile(atPath: outputPath, contents: output) else {
                FileHandle.standardError.write(Data("error: cannot write \(outputPath)\n".utf8))
                exit(1)
            }
        }
    }

    /// Every regular file under `root`, as (relative path, bytes), sorted by path.
    static func assetFiles(under root: URL) -> [(String, [UInt8])] {
        var files: [(String, [UInt8])] = []
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return files
        }
        let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(prefix), let data = FileManager.default.contents(atPath: path) else { continue }
            let relative = String(path.dropFirst(prefix.count))
            // Editor droppings never ship.
            if relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) || relative.hasSuffix("~") { continue }
            files.append((relative, [UInt8](data)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// Whether `bytes` can sit in a multi-line raw string literal unchanged: valid UTF-8 with no
    /// control characters but tab and line feed (a literal normalises CR LF, and NUL cannot appear).
    static func isLiteralSafeText(_ bytes: [UInt8]) -> Bool {
        guard String(validating: bytes, as: UTF8.self) != nil else { return false }
        return !bytes.contains { ($0 < 0x20 && $0 != 0x0A && $0 != 0x09) || $0 == 0x7F }
    }

    /// The number of `#` that makes a raw string delimiter no `"` or `\` in `text` can end or escape.
    static func hashCount(for text: [UInt8]) -> Int {
        var longest = 0
        var index = 0
        while index < text.count {
            if text[index] == UInt8(ascii: "\"") || text[index] == UInt8(ascii: "\\") {
                var run = 0
                while index + 1 + run < text.count, text[index + 1 + run] == UInt8(ascii: "#") { run += 1 }
                longest = max(longest, run)
            }
            index += 1
        }
        return longest + 1
    }

    static func swiftStringLiteral(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "\"\(escaped)\""
    }
}
