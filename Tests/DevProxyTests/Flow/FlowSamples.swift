@testable import DevProxy
import Foundation

/// Flows as the engine records them, written in the log format itself so the samples also
/// pin the field names down.
enum FlowSamples {
    /// `GET https://api.example.com/v1/x?q=a%20b&lang=en` → 200, 1234-byte JSON body, 35 ms.
    static let get = decode("""
    {"id":"f1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","client":"127.0.0.1:53122",
     "mode":"https","server":{"host":"api.example.com","port":443,"address":"203.0.113.5:443"},
     "request":{"method":"GET","url":"https://api.example.com/v1/x?q=a%20b&lang=en","http_version":"HTTP/1.1",
       "headers":[["Host","api.example.com"],["Cookie","session=abc; theme=dark"]]},
     "response":{"status":200,"reason":"OK","http_version":"HTTP/1.1",
       "headers":[["Content-Type","application/json"],["Set-Cookie","id=7; Path=/; HttpOnly; Secure"]],
       "body":{"size":1234,"sha256":"00","text":"{\\"ok\\":true}","truncated":false}},
     "timings":{"connect":3,"tls":7,"send":1,"wait":20,"receive":4}}
    """)

    /// A POST with a binary body and a 302.
    static let post = decode("""
    {"id":"f2","started":"2026-03-01T12:01:03.000Z","ended":"2026-03-01T12:01:03.010Z","client":"127.0.0.1:53123",
     "mode":"http","server":{"host":"upload.example.com","port":80,"address":"[2001:db8::1]:80","retried":true},
     "request":{"method":"POST","url":"http://upload.example.com/put","http_version":"HTTP/1.1",
       "headers":[["Content-Type","image/png"],["Content-Length","4"]],
       "body":{"size":4,"sha256":"00","base64":"iVBORw==","truncated":false}},
     "response":{"status":302,"reason":"Found","http_version":"HTTP/1.1",
       "headers":[["Location","/done"],["Content-Type","image/png"]],
       "body":{"size":3,"sha256":"00","base64":"AAEC","truncated":false}},
     "timings":{"connect":1,"tls":-1,"send":2,"wait":3,"receive":1}}
    """)

    /// A passthrough tunnel that ran 5.1 s.
    static let tunnel = decode("""
    {"id":"f3","started":"2026-03-01T12:01:02.000Z","ended":"2026-03-01T12:01:07.100Z","client":"127.0.0.1:53124",
     "mode":"tunnel","server":{"host":"api.apple.com","port":443,"address":"17.1.2.3:443"},
     "tunnel":{"sni":"api.apple.com","bytes_from_client":1234,"bytes_from_server":30000,
       "reason":"passthrough rule *.apple.com"},
     "timings":{"connect":12,"tls":-1,"send":-1,"wait":-1,"receive":-1}}
    """)

    /// The client rejected our certificate with an `unknown_ca` alert.
    static let rejected = decode("""
    {"id":"f4","started":"2026-03-01T12:01:02.500Z","ended":"2026-03-01T12:01:02.520Z","client":"127.0.0.1:53125",
     "mode":"https","server":{"host":"pinned.example.com","port":443},
     "error":{"kind":"client_rejected_certificate","message":"client sent TLS alert unknown_ca","alert":"unknown_ca"},
     "timings":{"connect":-1,"tls":-1,"send":-1,"wait":-1,"receive":-1}}
    """)

    static let all = [get, post, tunnel, rejected]

    static func decode(_ json: String) -> Flow {
        let line = json.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined()
        do {
            return try JSONDecoder().decode(Flow.self, from: Data(line.utf8))
        } catch {
            fatalError("sample flow does not decode: \(error)")
        }
    }
}
