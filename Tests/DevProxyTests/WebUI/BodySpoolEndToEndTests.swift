import CertAuthority
import Foundation
import Testing
import TestSupport

/// Large bodies through `devproxy run` with its default limits: the session store keeps them
/// whole up to 64 MiB (served by the UI's raw body route) as files beside the session, the flow
/// log keeps its first MiB, and the spool directory is private and empty after the run.
@Suite(.serialized) struct BodySpoolEndToEndTests {
    /// What origin.py's `/big?mb=N` sends: the bytes 0…255 over and over.
    static func originBody(megabytes: Int) -> [UInt8] {
        let block = [UInt8](0...255)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(megabytes << 20)
        while bytes.count < megabytes << 20 { bytes += block }
        return bytes
    }

    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test(.backstop) func largeBodiesAreStoredWholeUpTo64MiBAndTheSpoolEmpties() throws {
        let origin = try OriginServer(tls: true)
        let dir = TemporaryDirectory()
        let log = dir.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", dir.file("session.sqlite"),
                                         "--log", log, "--upstream-ca", origin.caPath, "--web", "127.0.0.1:0",
                                         "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let (base, token) = DevProxyProcess.webAPI(ui)
        let root = dir.file("ca/root.pem")
        let sizes = [5, 20, 70]
        for megabytes in sizes {
            let got = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", root,
                                                  "--max-time", "60", "-o", "/dev/null", "-w", "%{size_download}",
                                                  origin.url("/big?mb=\(megabytes)")], timeout: 90)
            #expect(got.stdout == String(megabytes << 20), "\(got.output)")
        }
        let spool = dir.file("ca/spool")
        #expect(Self.mode(spool) == 0o700)
        for megabytes in sizes {
            let whole = Self.originBody(megabytes: megabytes)
            let kept = min(whole.count, 64 << 20)
            let id = try Self.flowID(base: base, token: token, url: origin.url("/big?mb=\(megabytes)"))
            let file = dir.file("body-\(megabytes)")
            let fetched = try Subprocess.run("curl", ["-sS", "-D", "-", "-o", file,
                                                      "-H", "Authorization: Bearer \(token)",
                                                      "\(base)/api/flows/\(id)/response/body?raw=1"], timeout: 60)
            let headers = fetched.stdout.lowercased()
            #expect(headers.hasPrefix("http/1.1 200"), "\(fetched.output)")
            let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(body.count == kept, "\(megabytes) MiB")
            #expect(Digest.sha256(body).hex == Digest.sha256(Array(whole.prefix(kept))).hex, "\(megabytes) MiB")
            #expect(headers.contains("x-devproxy-stored: \(kept)\r\n"), "\(headers)")
            #expect(headers.contains("x-devproxy-body-size: \(whole.count)\r\n"), "\(headers)")
            #expect(headers.contains("x-devproxy-sha256: \(Digest.sha256(whole).hex)\r\n"), "\(headers)")
            #expect(headers.contains("x-devproxy-truncated: 1") == (kept < whole.count), "\(headers)")
            try? FileManager.default.removeItem(atPath: file)
        }
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? ["?"]).isEmpty, "spool left behind")
        #expect(Self.mode(dir.file("session.sqlite")) == 0o600)
        // The spool files became the bodies, beside the session, not copied into it.
        let bodies = dir.file("session.sqlite-bodies")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: bodies)) ?? []
        #expect(Self.mode(bodies) == 0o700 && names.count == sizes.count, "\(names)")
        #expect(names.allSatisfy { Self.mode("\(bodies)/\($0)") == 0o600 })
        let kept = names.reduce(0) { total, name in
            total + (((try? FileManager.default.attributesOfItem(atPath: "\(bodies)/\(name)"))?[.size] as? NSNumber)?.intValue ?? 0)
        }
        #expect(kept == (5 + 20 + 64) << 20)
        let sessionSize = ((try? FileManager.default.attributesOfItem(atPath: dir.file("session.sqlite")))?[.size] as? NSNumber)?.intValue ?? -1
        #expect(sessionSize < 4 << 20, "the session file holds \(sessionSize) bytes")
        // The flow log still keeps the first MiB of each (--body-limit's default).
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        for megabytes in sizes {
            let line = try #require(lines.first { $0.contains("/big?mb=\(megabytes)\"") })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let body = try #require((object["response"] as? [String: Any])?["body"] as? [String: Any])
            #expect(body["size"] as? Int == megabytes << 20)
            #expect(body["truncated"] as? Bool == true)
            #expect(Data(base64Encoded: body["base64"] as? String ?? "")?.count == 1 << 20)
        }

        // The session opened again by `devproxy web FILE`: its bodies read from the directory; a
        // copy without the directory answers 404 with the reason for those bodies only.
        let copy = dir.file("copied.sqlite")
        try FileManager.default.copyItem(atPath: dir.file("session.sqlite"), toPath: copy)
        for (session, found) in [(dir.file("session.sqlite"), true), (copy, false)] {
            let viewer = try DevProxyViewer(session)
            let id = try Self.flowID(base: viewer.base, token: viewer.token, url: origin.url("/big?mb=5"))
            let saved = dir.file("viewed-body")
            let answer = try Subprocess.run("curl", ["-sS", "-o", saved, "-w", "%{http_code}", "-H",
                                                     "Authorization: Bearer \(viewer.token)",
                                                     "\(viewer.base)/api/flows/\(id)/response/body?raw=1"], timeout: 30)
            let got = (try? Data(contentsOf: URL(fileURLWithPath: saved))) ?? Data()
            if found {
                #expect(answer.stdout == "200" && got.count == 5 << 20, "\(answer.stdout) \(got.count)")
            } else {
                let reason = String(decoding: got, as: UTF8.self)
                #expect(answer.stdout == "404", "\(answer.stdout) \(reason)")
                #expect(reason.contains("is missing: a session keeps its bodies past 64 KiB beside it, in \(copy)-bodies/"),
                        "\(reason)")
            }
        }
    }

    /// The id of the finished flow for `url`, waiting up to 30 s for the store to have it.
    static func flowID(base: String, token: String, url: String) throws -> String {
        let deadline = Date().addingTimeInterval(30)
        let filter = "~u " + url.replacingOccurrences(of: "?", with: "\\?")
        let query = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        while Date() < deadline {
            let answer = try Subprocess.run("curl", ["-sS", "-H", "Authorization: Bearer \(token)",
                                                     "\(base)/api/flows?filter=\(query)"], timeout: 10)
            let object = try? JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any]
            let flows = object?["flows"] as? [[String: Any]] ?? []
            if let flow = flows.first(where: { $0["url"] as? String == url && $0["phase"] as? String == "finished" }),
               let id = flow["id"] as? String {
                return id
            }
            usleep(200_000)
        }
        throw TestFailure("no finished flow for \(url) in the store")
    }
}
