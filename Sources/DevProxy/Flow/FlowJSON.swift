import Foundation

/// The one JSON spelling of flow records, shared by the writer and the reader.
enum FlowJSON {
    // A NaN timing must not cost the whole record; the reader undoes these spellings.
    private static let floats = (positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")

    /// Keys sorted, slashes unescaped, no newlines: one record per line.
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: floats.positiveInfinity, negativeInfinity: floats.negativeInfinity, nan: floats.nan)
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: floats.positiveInfinity, negativeInfinity: floats.negativeInfinity, nan: floats.nan)
        return decoder
    }

    /// A decoding failure in a few words: which field, what was wrong.
    static func describe(_ error: Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ keys: [CodingKey], _ last: CodingKey? = nil) -> String {
            (keys + (last.map { [$0] } ?? [])).map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
                .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "not a flow record: missing field `\(path(context.codingPath, key))`"
        case .typeMismatch(let type, let context):
            return "not a flow record: `\(path(context.codingPath))` is not a \(type)"
        case .valueNotFound(let type, let context):
            return "not a flow record: `\(path(context.codingPath))` is null, expected \(type)"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "not valid JSON" }
            return "not a flow record: bad value at `\(path(context.codingPath))`"
        @unknown default:
            return "not a flow record"
        }
    }
}
