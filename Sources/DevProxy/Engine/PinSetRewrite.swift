import CertAuthority
import Foundation
import PinningPolicy

/// `--pinset-rewrite URL_GLOB`: remote pin-set responses (`/.well-known/pins.json`, holding
/// `hashes`) that DevProxy rewrites in flight so they also hold the team root's pin, keeping
/// their other fields. For QA: an app that accepts such a set can have its pins replaced by
/// anyone who intercepts the fetch (`qa verdict` reports `pinset_injectable`).
public struct PinSetRewrite: Sendable {
    /// URLs whose responses are rewritten (`*` matches any run of characters).
    public let patterns: [GlobPattern]
    /// Bare base64 pins added to `hashes` (the team root's).
    public let pins: [String]
    /// Largest body buffered to rewrite; a larger one passes through untouched with a note.
    /// Default 1 MiB: pin sets are a few hundred bytes.
    public var limit = 1 << 20

    public init(patterns: [GlobPattern], pins: [String]) {
        self.patterns = patterns
        self.pins = pins
    }

    /// Whether the response to `url` is one to rewrite.
    public func matches(_ url: String) -> Bool {
        patterns.contains { $0.matches(url) }
    }

    /// What to serve for a whole pin-set response body, the same for HTTP/1.1 and HTTP/2: the set
    /// with the team root's pin added to `hashes` (decoded first when it came with a content
    /// coding, and then sent without one: `dropEncoding`), or the body untouched when it is not a
    /// pin set; and what the flow records of it.
    func rewrite(_ body: [UInt8], contentEncoding coding: String?) -> (body: [UInt8], dropEncoding: Bool,
                                                                       info: Flow.PinSetInfo) {
        var plain: [UInt8]? = body
        var notes: [String] = []
        if coding != nil {
            let decoded = ContentDecoder.decode(body, contentEncoding: coding, outputLimit: limit)
            plain = decoded?.end == .complete ? decoded?.bytes : nil
            if plain == nil { notes.append("Content-Encoding \(coding ?? "") did not decode") }
        }
        if let plain {
            do {
                let result = try RemotePinSet.addingPins(pins, to: plain)
                if coding != nil { notes.append("sent uncompressed (was \(coding ?? ""))") }
                let object = try? JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any]
                let info = Flow.PinSetInfo(rewritten: true, added: result.added, hashes: object?["hashes"] as? [String],
                                           note: notes.isEmpty ? nil : notes.joined(separator: "; "))
                return (result.body, coding != nil, info)
            } catch let error as PolicyError {
                notes.append(error.reason)
            } catch {
                notes.append("\(error)")
            }
        }
        return (body, false, Flow.PinSetInfo(rewritten: false, note: "not rewritten: " + notes.joined(separator: "; ")))
    }
}
