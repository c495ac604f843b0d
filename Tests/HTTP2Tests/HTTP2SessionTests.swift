import Testing
@testable import HTTP2

/// Playbooks for a client and a server session talking to each other in memory: what one
/// submits, the other reports as events, with streams, ends and codes intact.
@Suite struct HTTP2SessionTests {
    private static let get = HTTP2HeaderBlock.request(method: "GET", scheme: "https", authority: "example.test", path: "/a")

    @Test func requestAndResponseTravelWithPseudoHeadersApart() throws {
        let pair = try SessionPair()
        let stream = try pair.client.submitRequest(
            Self.get.with(fields: [HTTP2Field("accept", "*/*"), HTTP2Field("cookie", "a=1", neverIndex: true)]),
            endStream: true)
        try pair.exchange()
        let requests = pair.takeServerEvents().requestHeads
        #expect(requests.count == 1)
        let (serverStream, head, ended) = try #require(requests.first)
        #expect(serverStream == stream && ended)
        #expect(head.method == "GET" && head.scheme == "https" && head.authority == "example.test" && head.path == "/a")
        #expect(head.fields == [HTTP2Field("accept", "*/*"), HTTP2Field("cookie", "a=1", neverIndex: true)])

        try pair.server.submitResponse(stream: stream, .response(status: 200, fields: [HTTP2Field("content-type", "text/plain")]),
                                       endStream: false)
        try pair.server.submitData(stream: stream, Array("hello".utf8), endStream: true)
        try pair.exchange()
        let events = pair.takeClientEvents()
        let response = try #require(events.responseHeads.first)
        #expect(response.0 == stream && response.1.status == 200 && !response.2)
        #expect(response.1.values("Content-Type") == ["text/plain"])
        #expect(events.body(of: stream) == Array("hello".utf8) && events.ended(stream))
        #expect(events.contains(.streamClosed(stream: stream, code: .noError)))
        #expect(pair.takeServerEvents().contains(.dataSent(stream: stream, count: 5)))
    }

    /// A received head's pseudo-header fields passed libnghttp2's checks, so relaying it checks
    /// only what changed: the mark survives `forwarded()`, and a changed field clears it.
    @Test func aReceivedHeadsPseudoHeaderFieldsAreMarkedChecked() throws {
        let pair = try SessionPair()
        let stream = try pair.client.submitRequest(Self.get.with(fields: [HTTP2Field("accept", "*/*")]), endStream: true)
        try pair.exchange()
        let (_, head, _) = try #require(pair.takeServerEvents().requestHeads.first)
        #expect(head.pseudoChecked)
        var relayed = try head.forwarded()
        #expect(relayed.pseudoChecked && relayed.fieldsChecked)
        #expect(try relayed.checkedBlockForSending() == relayed)
        relayed.setPseudo(":authority", "other.test")
        #expect(!relayed.pseudoChecked && relayed.authority == "other.test")
        relayed.setPseudo(":path", "/a\r\nb")
        #expect(throws: HTTP2Error.self) { try relayed.checkedBlockForSending() }
        // A block made here, not received, is checked whole.
        #expect(!Self.get.pseudoChecked)
        try pair.server.submitResponse(stream: stream, .response(status: 204), endStream: true)
        try pair.exchange()
        #expect(try #require(pair.takeClientEvents().responseHeads.first).1.pseudoChecked)
    }

    @Test func concurrentStreamsInterleaveAndStayApart() throws {
        let pair = try SessionPair()
        let streams = try (0..<5).map { i in
            try pair.client.submitRequest(.request(method: "POST", scheme: "https", authority: "x.test", path: "/\(i)"),
                                          endStream: false)
        }
        #expect(streams == [1, 3, 5, 7, 9])
        for round in 0..<3 {
            for (i, stream) in streams.enumerated().reversed() {
                try pair.client.submitData(stream: stream, Array("\(i)-\(round);".utf8), endStream: round == 2)
            }
            try pair.exchange()
        }
        let events = pair.takeServerEvents()
        #expect(events.requestHeads.map(\.1.path) == ["/0", "/1", "/2", "/3", "/4"])
        for (i, stream) in streams.enumerated() {
            #expect(events.body(of: stream) == Array("\(i)-0;\(i)-1;\(i)-2;".utf8))
            #expect(events.ended(stream))
        }
        for stream in streams {
            try pair.server.submitResponse(stream: stream, .response(status: 204), endStream: true)
        }
        try pair.exchange()
        let closed = pair.takeClientEvents().compactMap { if case let .streamClosed(s, .noError) = $0 { s } else { nil } }
        #expect(Set(closed) == Set(streams))
    }

    @Test func trailersAfterDataEndTheResponse() throws {
        let pair = try SessionPair()
        let stream = try pair.client.submitRequest(Self.get, endStream: true)
        try pair.exchange()
        try pair.server.submitResponse(stream: stream, .response(status: 200, fields: [HTTP2Field("content-type", "application/grpc")]),
                                       endStream: false)
        try pair.server.submitData(stream: stream, [0, 0, 0, 0, 1, 42], endStream: false)
        try pair.exchange()
        try pair.server.submitTrailers(stream: stream, [HTTP2Field("grpc-status", "0"), HTTP2Field("x-checksum", "abc")])
        try pair.exchange()
        let events = pair.takeClientEvents()
        #expect(events.body(of: stream) == [0, 0, 0, 0, 1, 42])
        #expect(!events.ended(stream), "END_STREAM rides on the trailers, not on DATA")
        #expect(events.contains(.trailers(stream: stream, [HTTP2Field("grpc-status", "0"), HTTP2Field("x-checksum", "abc")])))
        #expect(events.contains(.streamClosed(stream: stream, code: .noError)))
    }

    @Test func trailersWithoutAnyDataStillArrive() throws {
        let pair = try SessionPair()
        let stream = try pair.client.submitRequest(Self.get, endStream: true)
        try pair.exchange()
        try pair.server.submitResponse(stream: stream, .response(status: 200), endStream: false)
        try pair.exchange()
        try pair.server.submitTrailers(stream: stream, [HTTP2Field("grpc-status", "5"), HTTP2Field("grpc-message", "not found")])
        try pair.exchange()
        let events = pair.takeClientEvents()
        #expect(events.body(of: stream).isEmpty)
        #expect(events.contains(.trailers(stream: stream, [HTTP2Field("grpc-status", "5"), HTTP2Field("grpc-message", "not found")])))
        #expect(events.contains(.streamClosed(stream: stream, code: .noError)))
    }

    @Test func requestTrailersReachTheServer() throws {
        let pair = try SessionPair()
        let stream = try pair.client.submitRequest(
            .request(method: "POST", scheme: "https", authority: "x.test", path: "/up", fields: [HTTP2Field("te", "trailers")]),
            endStream: false)
        try pair.client.submitData(stream: stream, Array("body".utf8), endStream: false)
        try pair.client.submitTrailers(stream: stream, [HTTP2Field("x-sum", "1")])
        try pair.exchange()
        let events = pair.takeServerEvents()
        #expect(events.body(of: stream) == Array("body".utf8))
        #expect(events.contains(.trailers(stream: stream, [HTTP2Field("x-sum", "1")])))
    }

    @Test func informationalResponseComesBeforeTheFinalOne() throws {
        let pair = try SessionPair()
        let stream = try pair.client.submitRequest(Self.get, endStream: true)
        try pair.exchange()
        try pair.server.submitResponse(stream: stream, .response(status: 103, fields: [HTTP2Field("link", "</s.css>")]),
                                       endStream: false)
        try pair.server.submitResponse(stream: stream, .response(status: 200), endStream: true)
        try pair.exchange()
        let events = pair.takeClientEvents()
        let informational = events.firstIndex { if case .informationalHead(stream, let h) = $0 { h.status == 103 } else { false } }
        let final = events.firstIndex { if case .responseHead(stream, let h, true) = $0 { h.status == 200 } else { false } }
        #expect(informational != nil && final != nil && informational! < final!)
    }

    @Test func resetCodesArePreservedBothWays() throws {
        let pair = try SessionPair()
        let first = try pair.client.submitRequest(Self.get, endStream: true)
        let second = try pair.client.submitRequest(Self.get, endStream: false)
        try pair.exchange()
        try pair.server.resetStream(first, code: .refusedStream)
        try pair.client.resetStream(second, code: .cancel)
        try pair.exchange()
        let client = pair.takeClientEvents(), server = pair.takeServerEvents()
        #expect(client.contains(.streamReset(stream: first, code: .refusedStream, byPeer: true)))
        #expect(client.contains(.streamClosed(stream: first, code: .refusedStream)))
        #expect(client.contains(.streamReset(stream: second, code: .cancel, byPeer: false)))
        #expect(server.contains(.streamReset(stream: second, code: .cancel, byPeer: true)))
        #expect(server.contains(.streamReset(stream: first, code: .refusedStream, byPeer: false)))
        #expect(server.contains(.streamClosed(stream: second, code: .cancel)))
    }

    @Test func unknownResetCodeTravelsUnchanged() throws {
        let pair = try SessionPair()
        let stream = try pair.client.submitRequest(Self.get, endStream: true)
        try pair.exchange()
        try pair.server.resetStream(stream, code: HTTP2ErrorCode(rawValue: 0x1234))
        try pair.exchange()
        #expect(pair.takeClientEvents().contains(.streamReset(stream: stream, code: HTTP2ErrorCode(rawValue: 0x1234), byPeer: true)))
    }

    @Test func goAwayLetsTheProcessedStreamFinishThenEnds() throws {
        let pair = try SessionPair()
        let stream = try pair.client.submitRequest(Self.get, endStream: true)
        try pair.exchange()
        try pair.server.goAway(code: .noError, debugData: Array("bye".utf8))
        try pair.exchange()
        #expect(pair.takeClientEvents().contains(.goAway(lastStreamID: stream, code: .noError, debugData: Array("bye".utf8))))
        let refused = #expect(throws: HTTP2Error.self) { try pair.client.submitRequest(Self.get, endStream: true) }
        #expect(refused?.code == .submitRefused)
        try pair.server.submitResponse(stream: stream, .response(status: 200), endStream: true)
        try pair.exchange()
        #expect(pair.takeClientEvents().responseHeads.count == 1)
        #expect(pair.server.isFinished)
    }

    @Test func requestCrossingAGoAwayIsReportedRefused() throws {
        let pair = try SessionPair()
        let first = try pair.client.submitRequest(Self.get, endStream: true)
        try pair.exchange()
        try pair.server.goAway()
        let goAway = pair.server.pendingOutput()
        // Submitted before the GOAWAY is read, sent after: never leaves, reported refused, and its
        // queued body and trailers come back whole (nothing was discarded: a relay sends them again).
        let second = try pair.client.submitRequest(Self.get, endStream: false)
        try pair.client.submitData(stream: second, Array("part one, ".utf8), endStream: false)
        try pair.client.submitData(stream: second, Array("part two".utf8), endStream: false)
        try pair.client.submitTrailers(stream: second, [HTTP2Field("grpc-timeout", "1S")])
        let third = try pair.client.submitRequest(Self.get, endStream: true)
        let fourth = try pair.client.submitRequest(Self.get, endStream: false)
        try pair.client.submitData(stream: fourth, Array("still coming".utf8), endStream: false)
        let events = try pair.client.receive(goAway)
        let output = pair.client.pendingOutput()
        let all = events + pair.client.takeEvents()
        #expect(all.contains(.goAway(lastStreamID: first, code: .noError, debugData: [])))
        #expect(all.contains(.requestNotSent(stream: second, body: Array("part one, part two".utf8), endStream: true,
                                             trailers: [HTTP2Field("grpc-timeout", "1S")])))
        #expect(all.contains(.requestNotSent(stream: third, body: [], endStream: true, trailers: nil)))
        #expect(all.contains(.requestNotSent(stream: fourth, body: Array("still coming".utf8), endStream: false, trailers: nil)))
        for stream in [second, third, fourth] {
            #expect(all.contains(.streamClosed(stream: stream, code: .refusedStream)))
            #expect(!all.contains { if case .dataDiscarded(stream, _) = $0 { true } else { false } })
        }
        #expect(ParsedFrame.parse(output).of(.headers).isEmpty && ParsedFrame.parse(output).of(.data).isEmpty)
    }

    @Test func pingIsAnsweredAndAcknowledged() throws {
        let pair = try SessionPair()
        try pair.client.ping(opaque: [1, 2, 3, 4, 5, 6, 7, 8])
        try pair.exchange()
        #expect(pair.takeServerEvents() == [.pingReceived(opaque: [1, 2, 3, 4, 5, 6, 7, 8])])
        #expect(pair.takeClientEvents() == [.pingAcknowledged(opaque: [1, 2, 3, 4, 5, 6, 7, 8])])
        #expect(throws: HTTP2Error.self) { try pair.client.ping(opaque: [1]) }
    }

    @Test func firstOutputAnnouncesTheLimits() throws {
        let client = try HTTP2Session(role: .client)
        let bytes = client.pendingOutput()
        #expect(bytes.starts(with: Frame.preface))
        let frames = ParsedFrame.parse(bytes)
        let settings = try #require(frames.of(.settings).first)
        let entries = stride(from: 0, to: settings.payload.count, by: 6).map {
            (UInt16(settings.payload[$0]) << 8 | UInt16(settings.payload[$0 + 1]), settings.be32(at: $0 + 2))
        }
        let values = Dictionary(entries, uniquingKeysWith: { $1 })
        #expect(values[HTTP2Setting.maxConcurrentStreamsID] == 100)
        #expect(values[HTTP2Setting.initialWindowSizeID] == 262_144)
        #expect(values[HTTP2Setting.maxFrameSizeID] == 16_384)
        #expect(values[HTTP2Setting.maxHeaderListSizeID] == 65_536)
        #expect(values[HTTP2Setting.enablePushID] == 0)
        let update = try #require(frames.of(.windowUpdate).first)
        #expect(update.stream == 0 && update.be32(at: 0) == 2_097_152 - 65_535)
    }

    @Test func settingsOfThePeerAreReported() throws {
        let client = try HTTP2Session(role: .client)
        let server = try HTTP2Session(role: .server)
        let events = try server.receive(client.pendingOutput())
        let settings = events.compactMap { if case let .settingsReceived(s) = $0 { s } else { nil } }.first
        #expect(settings?.contains(HTTP2Setting(id: HTTP2Setting.enablePushID, value: 0)) == true)
    }

    @Test func submitsInTheWrongRoleOrStateAreRefused() throws {
        let pair = try SessionPair()
        #expect(throws: HTTP2Error.self) { try pair.server.submitRequest(Self.get, endStream: true) }
        let stream = try pair.client.submitRequest(Self.get, endStream: true)
        #expect(throws: HTTP2Error.self) { try pair.client.submitData(stream: stream, [1], endStream: true) }
        try pair.exchange()
        try pair.server.submitResponse(stream: stream, .response(status: 200), endStream: false)
        try pair.server.submitData(stream: stream, [1], endStream: true)
        #expect(throws: HTTP2Error.self) { try pair.server.submitTrailers(stream: stream, [HTTP2Field("a", "b")]) }
        #expect(throws: HTTP2Error.self) { try pair.server.submitResponse(stream: stream, .response(status: 100), endStream: true) }
    }
}

extension HTTP2HeaderBlock {
    func with(fields: [HTTP2Field]) -> HTTP2HeaderBlock { HTTP2HeaderBlock(pseudo: pseudo, fields: fields) }
}
