import Testing
@testable import HTTP1

/// The parser surface the harness drives, shared by both parsers.
protocol EventParser {
    associatedtype Head: Sendable & Equatable
    init(limits: HTTP1Limits)
    mutating func feed(_ bytes: some Collection<UInt8>)
    mutating func next() throws(HTTP1ParseError) -> HTTP1Event<Head>?
    mutating func finish() throws(HTTP1ParseError) -> HTTP1Event<Head>?
}

extension HTTP1RequestParser: EventParser {}
extension HTTP1ResponseParser: EventParser {}

/// How the input reaches the parser.
enum FeedMode: CaseIterable, CustomStringConvertible {
    /// All bytes in one `feed`.
    case whole
    /// One `feed` per byte, draining events after each.
    case byteAtATime
    /// Three copies of the input in one `feed`; the events must repeat three times.
    case pipelined

    var description: String {
        switch self {
        case .whole: "whole"
        case .byteAtATime: "one byte at a time"
        case .pipelined: "pipelined"
        }
    }
}

/// Feeds `chunks` one after the other, pulls every event, then signals end of input.
///
/// Adjacent `.body` events are merged, since how a body is split depends on how it was fed.
func collectEvents<P: EventParser>(
    _ parser: inout P, chunks: [[UInt8]]
) throws(HTTP1ParseError) -> [HTTP1Event<P.Head>] {
    var events: [HTTP1Event<P.Head>] = []
    func append(_ event: HTTP1Event<P.Head>) {
        if case .body(let more) = event, case .body(let earlier)? = events.last {
            events[events.count - 1] = .body(earlier + more)
        } else {
            events.append(event)
        }
    }
    for chunk in chunks {
        parser.feed(chunk)
        while let event = try parser.next() { append(event) }
    }
    while let event = try parser.finish() { append(event) }
    return events
}

/// Splits `input` as `mode` says, returning the chunks and how many copies of the message they hold.
func chunks(of input: [UInt8], _ mode: FeedMode) -> (chunks: [[UInt8]], copies: Int) {
    switch mode {
    case .whole: ([input], 1)
    case .byteAtATime: (input.map { [$0] }, 1)
    case .pipelined: ([input + input + input], 3)
    }
}

/// Asserts that parsing `input` yields `expected`, whole, one byte at a time, and pipelined.
///
/// - Parameters:
///   - pipelinable: false for messages that end only at end of input or turn the connection
///     into a tunnel, which cannot be followed by another message.
///   - prepare: called on the parser once per message copy before feeding, e.g. to queue request methods.
func expectEvents<P: EventParser>(
    _ parserType: P.Type,
    _ input: String,
    _ expected: [HTTP1Event<P.Head>],
    pipelinable: Bool = true,
    limits: HTTP1Limits = .default,
    prepare: (inout P) -> Void = { _ in },
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let bytes = Array(input.utf8)
    for mode in FeedMode.allCases where pipelinable || mode != .pipelined {
        let (chunks, copies) = chunks(of: bytes, mode)
        var parser = P(limits: limits)
        for _ in 0..<copies { prepare(&parser) }
        do {
            let events = try collectEvents(&parser, chunks: chunks)
            let wanted = Array(repeating: expected, count: copies).flatMap { $0 }
            #expect(events == wanted, "fed \(mode)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("fed \(mode): unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }
}

/// Asserts that parsing `input`, whole and one byte at a time, fails with `code`, `status` and a
/// reason containing `reason`, and that the parser then keeps failing with the same error.
func expectError<P: EventParser>(
    _ parserType: P.Type,
    _ input: String,
    code: HTTP1ParseError.Code,
    status: Int,
    reason: String,
    limits: HTTP1Limits = .default,
    prepare: (inout P) -> Void = { _ in },
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectError(
        parserType, Array(input.utf8), code: code, status: status, reason: reason, limits: limits,
        prepare: prepare, sourceLocation: sourceLocation)
}

/// `expectError` for raw bytes.
func expectError<P: EventParser>(
    _ parserType: P.Type,
    _ bytes: [UInt8],
    code: HTTP1ParseError.Code,
    status: Int,
    reason: String,
    limits: HTTP1Limits = .default,
    prepare: (inout P) -> Void = { _ in },
    sourceLocation: SourceLocation = #_sourceLocation
) {
    for mode in [FeedMode.whole, .byteAtATime] {
        var parser = P(limits: limits)
        prepare(&parser)
        do {
            let events = try collectEvents(&parser, chunks: chunks(of: bytes, mode).chunks)
            Issue.record("fed \(mode): expected \(code), got events \(events)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, "fed \(mode): \(error)", sourceLocation: sourceLocation)
            #expect(error.status == status, "fed \(mode): \(error)", sourceLocation: sourceLocation)
            #expect(error.reason.contains(reason), "fed \(mode): \(error)", sourceLocation: sourceLocation)
            #expect(throws: error, "error is sticky", sourceLocation: sourceLocation) { try parser.next() }
        }
    }
}
