import HTTPTypes

extension HTTPExchange {
    /// This exchange as `--map-remote` and `--map-local` make it (`MapRules`): bound for the new
    /// URL's scheme, host, port and path, its `Host` the new URL's (the client's is kept in the
    /// flow's `request.client_host`), or answered from a local file; its headers as
    /// `--modify-headers` makes them (a `Host` it sets is sent, the connection still going to
    /// the URL's host: `Destination.editedHost`). Nil when no rule applied, or
    /// for a request DevProxy answers whatever it names (the onboarding site).
    func mapped() -> HTTPExchange? {
        guard route == nil else { return nil }
        let request = HTTPRequest(head, scheme: destination.tls ? "https" : "http", authority: destination.hostHeader,
                                  path: destination.pathAndQuery)
        let asked = LocalRequest(request, url: destination.url, httpVersion: head.version.description,
                                 clientOf: context)
        guard let outcome = context.mapRules.apply(to: asked) else { return nil }
        var exchange = self
        exchange.mapping = outcome.record
        if let edits = outcome.edits {
            exchange.head.headers.removeAll { edits.removed.contains($0.name.lowercased()) }
            for field in edits.added { exchange.head.headers.add(name: field.name, value: field.value) }
        }
        if let destination = outcome.destination { exchange.destination = destination }
        if let host = outcome.edits?.host {
            // `--modify-headers |~q|Host|example.org`: one Host, sent as the rule says.
            exchange.head.headers.replaceOrAdd(name: "Host", value: host)
            exchange.destination.editedHost = host
        }
        exchange.route = outcome.route
        return exchange
    }
}
