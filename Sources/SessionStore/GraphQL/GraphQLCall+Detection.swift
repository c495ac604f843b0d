import Foundation

extension GraphQLCall {
    /// The GraphQL call a finished flow is, or nil when it is none (GraphQL over HTTP: a POST of
    /// `application/json` `{"query", "operationName", "variables", "extensions"}` or an array of
    /// them, a POST of an `application/graphql` document, a GET with `?query=`; Apollo's persisted
    /// queries by `extensions.persistedQuery.sha256Hash`, with or without the document).
    ///
    /// Cheap for any other flow: the method, the request's content type and its body's first
    /// byte (or, for a GET, whether the URL has `query=` or `extensions=`) rule it out before
    /// anything is parsed; the store's writer asks this of every finished flow.
    /// - Parameters:
    ///   - requestBody: the request's body as stored (its decoded text when it has one).
    ///   - responseBody: the response's, read for its top-level `errors` only when the request is GraphQL.
    static func detect(method: String?, url: String?, requestContentType: String?, requestBody: StoredBody?,
                       responseContentType: String?, responseBody: StoredBody?) -> GraphQLCall? {
        guard let method else { return nil }
        let operations: [GraphQLOperation]?
        if method == "POST" {
            guard let contentType = requestContentType, let body = requestBody, !body.bytes.isEmpty || body.text != nil,
                  max(body.bytes.count, body.text?.utf8.count ?? 0) <= Self.largestRequest else { return nil }
            if Self.contains(contentType, "json") {
                let first = Self.firstByte(of: body)
                guard first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return nil }
                // A JSON API's POST that names neither key is not parsed at all (nor copied).
                guard Self.mentionsGraphQLKeys(body) else { return nil }
                operations = Self.operations(json: Self.bytes(of: body))
            } else if Self.contains(contentType, "graphql") {
                operations = Self.operation(document: Self.bytes(of: body),
                                            operationName: Self.parameters(url)["operationName"], persisted: false)
                    .map { [$0] }
            } else {
                return nil
            }
        } else if method == "GET" {
            guard let url, url.utf8.contains(UInt8(ascii: "?")),
                  url.contains("query=") || url.contains("extensions=") else { return nil }
            let parameters = Self.parameters(url)
            let extensions = parameters["extensions"].flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            operations = Self.operation(document: parameters["query"].map { Array($0.utf8) },
                                        operationName: parameters["operationName"],
                                        persisted: Self.isPersisted(extensions)).map { [$0] }
        } else {
            return nil
        }
        guard let operations else { return nil }
        return GraphQLCall(operations: operations,
                           errors: GraphQLResponseErrors.count(contentType: responseContentType, body: responseBody))
    }

    /// The largest request body read for its operations (4 MiB): a GraphQL request is its document
    /// and variables, kilobytes; a larger JSON POST (an upload that happens to have a `query` key)
    /// would cost the writer a parse of all of it.
    static let largestRequest = 4 << 20

    /// The operations of a JSON request body: one for an object, one per entry of an array (a
    /// batch); nil unless every entry is a GraphQL request.
    private static func operations(json bytes: [UInt8]) -> [GraphQLOperation]? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes)) else { return nil }
        let entries: [Any] = (value as? [Any]) ?? [value]
        guard !entries.isEmpty else { return nil }
        var operations: [GraphQLOperation] = []
        for entry in entries {
            guard let object = entry as? [String: Any],
                  let operation = Self.operation(document: (object["query"] as? String).map { Array($0.utf8) },
                                                 operationName: object["operationName"] as? String,
                                                 persisted: Self.isPersisted(object["extensions"] as? [String: Any]))
            else { return nil }
            operations.append(operation)
        }
        return operations
    }

    /// The operation a request runs: the one `operationName` names (else the document's first),
    /// by the document's own type; for a persisted query sent without its document, unknown type
    /// and the `operationName`. Nil when there is neither a document nor a persisted query.
    static func operation(document: [UInt8]?, operationName: String?, persisted: Bool) -> GraphQLOperation? {
        let name = operationName.flatMap { $0.isEmpty ? nil : $0 }
        if let document, let defined = GraphQLDocument.operations(document) {
            let chosen = name.flatMap { name in defined.first { $0.name == name } } ?? defined[0]
            return GraphQLOperation(kind: name == nil || chosen.name == name || defined.count == 1 ? chosen.kind : nil,
                                    name: name ?? chosen.name, persisted: persisted)
        }
        guard persisted else { return nil }
        return GraphQLOperation(kind: nil, name: name, persisted: true)
    }

    /// Whether `extensions` names an Apollo persisted query (`persistedQuery.sha256Hash`).
    private static func isPersisted(_ extensions: [String: Any]?) -> Bool {
        (extensions?["persistedQuery"] as? [String: Any])?["sha256Hash"] is String
    }

    /// The URL's query parameters, decoded as a form is (`+` a space), the first of each name.
    static func parameters(_ url: String?) -> [String: String] {
        guard let url, let mark = url.firstIndex(of: "?") else { return [:] }
        var query = url[url.index(after: mark)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (part: Substring) in part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), parameters[name] == nil,
                  let value = decode(parts.count > 1 ? parts[1] : "") else { continue }
            parameters[name] = value
        }
        return parameters
    }

    /// The body's decoded text when it has one, else its bytes.
    private static func bytes(of body: StoredBody) -> [UInt8] {
        body.text.map { Array($0.utf8) } ?? body.bytes
    }

    /// The first byte of the body that is not JSON white space.
    static func firstByte(of body: StoredBody) -> UInt8? {
        if let text = body.text { return text.utf8.first { !isSpace($0) } }
        return body.bytes.first { !isSpace($0) }
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "\t")
    }

    /// Whether `text` holds `word` (lowercase ASCII), ignoring ASCII case: a content type's words.
    static func contains(_ text: String, _ word: StaticString) -> Bool {
        let needle = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        var text = text
        return text.withUTF8 { haystack in
            guard haystack.count >= needle.count, !needle.isEmpty else { return false }
            for start in 0...(haystack.count - needle.count) {
                var index = 0
                while index < needle.count, haystack[start + index] | 0x20 == needle[index] { index += 1 }
                if index == needle.count { return true }
            }
            return false
        }
    }

    /// Whether the body holds `"query"` or `"extensions"` (a JSON key with its quotes), read in place.
    private static func mentionsGraphQLKeys(_ body: StoredBody) -> Bool {
        let search = { (bytes: UnsafeBufferPointer<UInt8>) in
            holds(bytes, "\"query\"") || holds(bytes, "\"extensions\"")
        }
        if var text = body.text { return text.withUTF8(search) }
        return body.bytes.withUnsafeBufferPointer(search)
    }

    /// Whether `bytes` hold `word` exactly.
    private static func holds(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        let needle = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard needle.count > 0, bytes.count >= needle.count else { return false }
        let first = needle[0]
        var start = 0
        while start <= bytes.count - needle.count {
            if bytes[start] == first {
                var index = 1
                while index < needle.count, bytes[start + index] == needle[index] { index += 1 }
                if index == needle.count { return true }
            }
            start += 1
        }
        return false
    }
}
