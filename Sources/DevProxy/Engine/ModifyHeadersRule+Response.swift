import HTTP1
import HTTP2
import HTTPTypes

/// `--modify-headers` on responses, as mitmproxy's modify_headers runs in its response hook: once
/// the final response's head has come from the origin, before it goes to the client, whatever
/// version either leg speaks (`ResponseRelay` for an HTTP/1.1 client, the HTTP/2 connection's
/// origin streams and HTTP/1.1 legs for an HTTP/2 client). The flow records the head as the
/// client got it, and each change in `mapped.headers` with `on: "response"`.
extension MapRules {
    /// What `--modify-headers` does to the response `status` and `fields` of `request` (as it
    /// was sent): every rule's filter asked first, then every matching rule's header removed,
    /// then the values added. Nil when no rule matched; interim (1xx) responses are not asked.
    func responseEdits(for request: LocalRequest, status: Int,
                       fields: [(name: String, value: String)]) -> (HeaderEdits, [Flow.HeaderChange])? {
        guard !headers.isEmpty, !(100..<200).contains(status) || status == 101 else { return nil }
        let response = MapRequestFilter.ResponseHead(status: status, headers: fields)
        let matching = headers.filter { $0.filter?.matches(request, response: response) ?? true }
        guard !matching.isEmpty else { return nil }
        return HeaderEdits.of(matching, on: fields, side: "response")
    }
}

extension HeaderEdits {
    /// `fields` with the named headers removed and the values added.
    func applied(to fields: HTTPFields) -> HTTPFields {
        var edited = fields
        edited.removeAll { removed.contains($0.name.lowercased()) }
        for field in added { edited.append(name: field.name, value: field.value) }
        return edited
    }

    /// An HTTP/2 head's fields edited: names sent in lower case (RFC 9113 §8.2.1); pseudo-header
    /// fields are never named by a rule (a header name is a token).
    func applied(to fields: [HTTP2Field]) -> [HTTP2Field] {
        var edited = fields.filter { !removed.contains(String(decoding: $0.name, as: UTF8.self).lowercased()) }
        for field in added {
            edited.append(HTTP2Field(name: Array(field.name.lowercased().utf8), value: Array(field.value.utf8)))
        }
        return edited
    }
}

extension ExchangeContext {
    /// `final` as `--modify-headers` makes it for the client of `request` (the request as sent,
    /// `url` the flow's), the changes recorded in `draft`; `final` itself when no rule applied.
    func modifyingHeaders(of final: UpstreamResponseHead, request: HTTPRequest, url: String,
                          draft: inout FlowDraft) -> UpstreamResponseHead {
        let asked = LocalRequest(request, url: url, httpVersion: draft.flow.request?.httpVersion ?? "HTTP/1.1",
                                 clientOf: draft.flow)
        let fields = final.response.fields.map { ($0.name, $0.value) }
        guard let (edits, changes) = mapRules.responseEdits(for: asked, status: final.response.status,
                                                            fields: fields) else { return final }
        draft.recordResponseHeaderChanges(changes)
        guard var http1 = final.http1 else {
            var response = final.response
            response.fields = edits.applied(to: final.response.fields)
            return UpstreamResponseHead(response: response, httpVersion: final.httpVersion, http1: nil)
        }
        // An HTTP/1.1 origin's head is relayed as it came (`asHTTP1`): edited there, the record made from it.
        http1.headers.removeAll { edits.removed.contains($0.name.lowercased()) }
        for field in edits.added { http1.headers.add(name: field.name, value: field.value) }
        return UpstreamResponseHead(response: HTTPResponse(http1), httpVersion: final.httpVersion, http1: http1)
    }

    /// `response` as `--modify-headers` makes it for an HTTP/2 client's stream (`request` as it
    /// was sent, `url` the flow's), the changes recorded in `draft`; nil when no rule applied.
    func modifyingHeaders(of response: HTTPResponse, request: HTTPRequest, url: String,
                          draft: inout FlowDraft) -> HTTPResponse? {
        let asked = LocalRequest(request, url: url, httpVersion: draft.flow.request?.httpVersion ?? "HTTP/2",
                                 clientOf: draft.flow)
        let fields = response.fields.map { ($0.name, $0.value) }
        guard let (edits, changes) = mapRules.responseEdits(for: asked, status: response.status,
                                                            fields: fields) else { return nil }
        draft.recordResponseHeaderChanges(changes)
        var edited = response
        edited.fields = edits.applied(to: response.fields)
        return edited
    }

    /// An HTTP/2 origin's response `head` as `--modify-headers` makes it for an HTTP/2 client's
    /// stream, the changes recorded in `draft`; `head` itself when no rule applied.
    func modifyingHeaders(of head: HTTP2HeaderBlock, request: HTTPRequest, url: String,
                          draft: inout FlowDraft) -> HTTP2HeaderBlock {
        let asked = LocalRequest(request, url: url, httpVersion: draft.flow.request?.httpVersion ?? "HTTP/2",
                                 clientOf: draft.flow)
        let response = HTTPResponse(head)
        let fields = response.fields.map { ($0.name, $0.value) }
        guard let (edits, changes) = mapRules.responseEdits(for: asked, status: response.status,
                                                            fields: fields) else { return head }
        draft.recordResponseHeaderChanges(changes)
        var edited = head
        edited.fields = edits.applied(to: head.fields)
        return edited
    }
}

extension FlowDraft {
    /// Adds `changes` (made to the response) to the flow's `mapped`: after the request's, or in a
    /// `modify-headers` record of their own when no rule changed the request.
    mutating func recordResponseHeaderChanges(_ changes: [Flow.HeaderChange]) {
        if flow.mapped == nil {
            let url = flow.request?.url ?? ""
            flow.mapped = Flow.Mapping(rule: "modify-headers", from: url, to: url, by: [], headers: changes)
        } else {
            let earlier = flow.mapped?.headers ?? []
            flow.mapped?.headers = earlier + changes
        }
    }
}
