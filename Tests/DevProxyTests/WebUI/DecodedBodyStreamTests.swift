import CertAuthority
import Foundation
import Testing
import TestSupport

/// The decoded body route with big compressed bodies through `devproxy run`: gzip, br and zstd
/// bodies of 24 MiB decoded are served whole and byte-identical to the origin's plain body, read
/// and decoded from the store a piece at a time (the proxy's peak RSS grows by far less than a
/// body); one decoding past the session's body limit is cut there and says so; `?limit=` answers
/// with the first part only.
@Suite(.serialized) struct DecodedBodyStreamTests {
    /// The session's body limit in this test (`--store-body-limit`): also the decoded answers' cap.
    static let storeLimit = 32 << 20

    @Test(.backstop) func bigCodedBodiesAreServedDecodedInPieces() throws {
        let origin = try OriginServer(tls: true)
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", dir.file("session.sqlite"),
                                         "--log", dir.file("flows.jsonl"), "--upstream-ca", origin.caPath,
                                         "--store-body-limit", String(Self.storeLimit), "--web", "127.0.0.1:0",
                                         "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let (base, token) = DevProxyProcess.webAPI(ui)
        let root = dir.file("ca/root.pem")
        // 24 MiB in each coding (whole), and 40 MiB of gzip that decodes past the 32 MiB cap.
        let cases = [("gzip", 24), ("br", 24), ("zstd", 24), ("gzip", 40)]
        var plain: [Int: [UInt8]] = [:]
        for megabytes in Set(cases.map(\.1)) {
            let file = dir.file("plain-\(megabytes)")
            let got = try Subprocess.run("curl", ["-sS", "--cacert", origin.caPath, "-o", file, "--max-time", "60",
                                                  origin.url("/coded?mb=\(megabytes)&coding=identity")], timeout: 90)
            #expect(got.status == 0, "\(got.output)")
            plain[megabytes] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        }
        var ids: [String] = []
        for (coding, megabytes) in cases {
            let url = origin.url("/coded?mb=\(megabytes)&coding=\(coding)")
            let got = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", root,
                                                  "--max-time", "60", "-o", "/dev/null", "-w", "%{http_code}", url],
                                         timeout: 90)
            #expect(got.stdout == "200", "\(got.output)")
            ids.append(try BodySpoolEndToEndTests.flowID(base: base, token: token, url: url))
        }
        // The peak so far is the capture's; from here on it is the serving's.
        proxy.resetPeakResident()
        let before = proxy.residentBytes
        for ((coding, megabytes), id) in zip(cases, ids) {
            let whole = try #require(plain[megabytes])
            let served = min(whole.count, Self.storeLimit)
            let answer = try Self.fetch(base: base, token: token, path: "/api/flows/\(id)/response/body", into: dir)
            #expect(answer.headers.hasPrefix("http/1.1 200"), "\(coding) \(megabytes): \(answer.headers)")
            #expect(answer.headers.contains("content-type: text/plain; charset=utf-8\r\n"), "\(answer.headers)")
            #expect(answer.headers.contains("x-devproxy-decoded: \(coding)\r\n"), "\(answer.headers)")
            #expect(answer.headers.contains("content-length: \(served)\r\n"), "\(answer.headers)")
            #expect(answer.body.count == served, "\(coding) \(megabytes) MiB")
            #expect(Digest.sha256(answer.body).hex == Digest.sha256(Array(whole.prefix(served))).hex,
                    "\(coding) \(megabytes) MiB")
            let cut = whole.count > Self.storeLimit
            #expect(answer.headers.contains("x-devproxy-decoded-cut: \(Self.storeLimit)\r\n") == cut,
                    "\(answer.headers)")
        }
        let growth = proxy.peakResidentBytes - before
        // Holding one body decoded takes 24 MiB, twice that with the answer's copy; the pieces, the
        // decoders' windows (brotli 4 MiB here, zstd up to 8 MiB) and SQLite's cache take far less.
        #expect(growth < 16 << 20, "peak RSS grew by \(growth >> 10) KiB serving 24–32 MiB bodies")
        print("decoded body route: peak RSS grew by \(growth >> 10) KiB serving \(cases.count) bodies")

        // The first MiB only: cut on a character boundary, marked as limited.
        let whole = try #require(plain[24])
        let first = try Self.fetch(base: base, token: token, path: "/api/flows/\(ids[1])/response/body?limit=1048576",
                                   into: dir)
        #expect(first.headers.contains("x-devproxy-limited: 1\r\n"), "\(first.headers)")
        #expect(first.body.count <= 1 << 20 && first.body.count > (1 << 20) - 4, "\(first.body.count)")
        let firstIsPrefix = first.body == Array(whole.prefix(first.body.count))
        #expect(firstIsPrefix)
        #expect(String(validating: first.body, as: UTF8.self) != nil)
        // A range of the decoded body.
        let range = try Self.fetch(base: base, token: token, path: "/api/flows/\(ids[2])/response/body",
                                   into: dir, headers: ["Range: bytes=20000000-20000099"])
        #expect(range.headers.hasPrefix("http/1.1 206"), "\(range.headers)")
        #expect(range.headers.contains("content-range: bytes 20000000-20000099/\(whole.count)\r\n"), "\(range.headers)")
        let rangeMatches = range.body == Array(whole[20_000_000..<20_000_100])
        #expect(rangeMatches, "\(range.body.count) bytes")
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    /// An answer's head (lowercased) and body, fetched with curl.
    static func fetch(base: String, token: String, path: String, into dir: TemporaryDirectory,
                      headers: [String] = []) throws -> (headers: String, body: [UInt8]) {
        let file = dir.file("answer")
        let result = try Subprocess.run("curl", ["-sS", "-D", "-", "-o", file, "-H", "Authorization: Bearer \(token)"]
                                        + headers.flatMap { ["-H", $0] } + ["\(base)\(path)"], timeout: 60)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let body = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data())
        return (result.stdout.lowercased(), body)
    }
}

extension DevProxyProcess {
    /// Resident memory now (VmRSS), in bytes.
    var residentBytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }

    /// Starts `peakResidentBytes` (VmHWM) over from the current RSS (`5` to clear_refs, proc(5)).
    func resetPeakResident() {
        try? "5".write(toFile: "/proc/\(process.processIdentifier)/clear_refs", atomically: false, encoding: .utf8)
    }
}
