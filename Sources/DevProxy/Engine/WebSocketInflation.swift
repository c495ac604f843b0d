import Foundation
import HTTP1

/// permessage-deflate (RFC 7692), for the flow record only: the frames are relayed as they came,
/// and a compressed message (RSV1 on its first frame) is inflated here so that the flow shows its
/// text, as the app sees it, rather than DEFLATE bytes in base64. Chromium offers the extension on
/// every WebSocket and servers such as Python's `websockets` and hypercorn accept it.
enum WebSocketInflation {
    /// Whether the server's `101` accepted permessage-deflate (an element of
    /// `Sec-WebSocket-Extensions` named so; its window and context parameters need nothing here:
    /// one inflater with the largest window reads every allowed stream, §7.2.3).
    static func negotiated(_ headers: HTTPHeaders) -> Bool {
        negotiated(extensions: headers.values("Sec-WebSocket-Extensions"))
    }

    /// The same for the values of the response's `Sec-WebSocket-Extensions` fields (an HTTP/2
    /// stream's `2xx` to an extended CONNECT, RFC 8441).
    static func negotiated(extensions: [String]) -> Bool {
        extensions.contains { value in
            value.split(separator: ",").contains { element in
                element.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "permessage-deflate"
            }
        }
    }

    /// Decompressed bytes of one message kept at most (the rest is counted): a message that
    /// inflates past `maxOutput` stops this direction's decoding (a decompression bomb costs the
    /// proxy no more than that).
    static let maxOutput = 16 * 1024 * 1024
}

/// One direction's DEFLATE context across its messages (§7.2.2: a sender may keep its sliding
/// window from message to message).
final class WebSocketMessageInflater {
    private var inflater: ZlibInflater?
    /// Inflated bytes of each message kept for the record (lowered once the flow's budget for
    /// message data is spent: `MessageLog`).
    var prefixLimit: Int
    /// Set once a message did not inflate: later ones depend on its window, so none is decoded.
    private(set) var failure: String?
    private var prefix: [UInt8] = []
    private var count = 0
    /// The current message's data ended with a final block: no tail to add, a new context next.
    private var streamEnded = false

    init(prefixLimit: Int) {
        self.prefixLimit = prefixLimit
    }

    /// Inflates the next piece of the current compressed message.
    func feed(_ bytes: [UInt8]) {
        guard failure == nil, !bytes.isEmpty else { return }
        if inflater == nil { inflater = ZlibInflater(format: .raw, chunkSize: 4096) }
        guard let inflater else {
            failure = "zlib could not allocate an inflater"
            return
        }
        let end = bytes.withUnsafeBytes { input in
            inflater.decode(input) { piece in
                if prefix.count < prefixLimit { prefix += piece.prefix(prefixLimit - prefix.count) }
                count += piece.count
                return count <= WebSocketInflation.maxOutput
            }
        }
        switch end {
        case .corrupt?: failure = "the permessage-deflate data did not inflate"
        case .outputLimit?: failure = "a message inflated past \(WebSocketInflation.maxOutput / (1024 * 1024)) MiB"
        case .complete?:
            // A final block (BFINAL) ended the stream: the sender starts the next message afresh.
            self.inflater = nil
            streamEnded = true
        default:
            break
        }
    }

    /// Ends the current message (§7.2.2: the sender removed the trailing `00 00 ff ff`).
    /// - Returns: its first bytes and length, or nil when it could not be inflated.
    func finishMessage() -> (prefix: [UInt8], length: Int)? {
        if !streamEnded { feed([0x00, 0x00, 0xFF, 0xFF]) }
        defer {
            prefix = []
            count = 0
            streamEnded = false
        }
        return failure == nil ? (prefix, count) : nil
    }
}
