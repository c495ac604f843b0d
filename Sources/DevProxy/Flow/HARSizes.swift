import Foundation

/// The sizes a HAR file gave for one of its entries, kept in the record `devproxy web` imports it
/// as (`har_sizes`), so that the web UI's HAR export gives them back as they were.
///
/// A browser's HAR says what it measured: Chrome's `bodySize` is the compressed bytes of a gzip
/// body, `content.size` the decoded ones, `compression` the difference and `_transferSize` the
/// whole response on the wire (-1 and no `compression` over HTTP/2); Firefox's `bodySize` is its
/// transferred size. A flow keeps one body size, so without these an imported gzip response went
/// out again with `content.size` as the compressed size and no `compression` or `_transferSize`.
public struct HARSizes: Codable, Sendable, Equatable {
    /// One message's sizes, each as the HAR gave it (-1 kept: "not known", HAR 1.2).
    public struct Message: Codable, Sendable, Equatable {
        public var headersSize: Int?
        public var bodySize: Int?
        /// Responses only: `content.size`, `content.compression` and Chrome's `_transferSize`.
        public var contentSize: Int?
        public var compression: Int?
        public var transferSize: Int?

        public init(headersSize: Int? = nil, bodySize: Int? = nil, contentSize: Int? = nil, compression: Int? = nil,
                    transferSize: Int? = nil) {
            self.headersSize = headersSize
            self.bodySize = bodySize
            self.contentSize = contentSize
            self.compression = compression
            self.transferSize = transferSize
        }

        enum CodingKeys: String, CodingKey {
            case compression
            case headersSize = "headers_size"
            case bodySize = "body_size"
            case contentSize = "content_size"
            case transferSize = "transfer_size"
        }
    }

    public var request: Message?
    public var response: Message?

    public init(request: Message? = nil, response: Message? = nil) {
        self.request = request
        self.response = response
    }

    /// The key of a flow record that holds them.
    public static let recordKey = "har_sizes"

    /// The `har_sizes` of a flow record's JSON; nil for a record without them (every flow the
    /// proxy recorded itself).
    public static func of(record json: String) -> HARSizes? {
        guard json.contains("\"" + recordKey + "\"") else { return nil }
        struct Record: Decodable {
            var sizes: HARSizes?
            enum CodingKeys: String, CodingKey { case sizes = "har_sizes" }
        }
        return (try? JSONDecoder().decode(Record.self, from: Data(json.utf8)))?.sizes
    }
}
