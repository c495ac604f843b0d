import Foundation

/// `--block-list |FLOW-FILTER|STATUS-CODE`, mitmproxy's block_list: a request the filter passes is
/// answered here with the status and a body naming the option, never sent upstream; `444` closes
/// the connection (HTTP/2: resets the stream) without an answer, as nginx's 444 and mitmproxy do.
/// The rules run before the map rules, in order, the first that matches answering.
public struct BlockListRule: Sendable {
    /// The option as given, for the flow's `mapped.by`.
    public let option: String
    let filter: MapRequestFilter
    let status: Int

    /// The status that closes the connection without an answer.
    static let noResponse = 444

    /// Parses `|FLOW-FILTER|STATUS-CODE` (the first character is the separator; the filter is
    /// required, as in mitmproxy).
    /// - Throws: `ConfigurationError` naming the option and what is wrong.
    public init(parsing option: String) throws {
        let usage = "give --block-list |FLOW-FILTER|STATUS-CODE (the first character is the separator; 444 closes "
            + "the connection without an answer)"
        guard let separator = option.first else { throw ConfigurationError("--block-list is empty; \(usage)") }
        let parts = option.dropFirst().split(separator: separator, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw ConfigurationError("--block-list \(option) is not a rule: \(usage)")
        }
        guard let status = Int(parts[1]), status == Self.noResponse || (200...599).contains(status) else {
            throw ConfigurationError("--block-list \(option): \"\(parts[1])\" is not a status code to answer with "
                                     + "(200–599, or 444 to close the connection without an answer)")
        }
        self.option = option
        self.status = status
        filter = try MapRequestFilter(parsing: parts[0], option: "--block-list \(option)")
    }

    /// What answers a request this rule blocks: `status` with a text body naming the option, or
    /// for 444 an answer the engine does not send (it closes the connection, the flow's error
    /// saying why).
    var response: LocalResponse {
        let message = "blocked by DevProxy's --block-list \(option)"
        guard status != Self.noResponse else {
            return LocalResponse(status: status, headers: [], body: [],
                                 error: (.destinationRefused, "\(message): the connection was closed without an "
                                         + "answer (444)"))
        }
        let headers = [("Content-Type", ErrorResponse.textPlain), ("X-DevProxy", "blocked by DevProxy (--block-list)")]
        return LocalResponse(status: status, headers: headers,
                             body: ErrorResponse.body(status: status, detail: message))
    }
}
