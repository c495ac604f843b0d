import CertAuthority
import Foundation
import PinningPolicy
import Synchronization

/// A flow sink that captures pin-failure reports into `reports.jsonl` (0600).
///
/// A flow is a report when its request body text parses as a TrustKit or RFC 7469 report, or
/// when its URL matches one of the `--report-uri` patterns (then `kind` may be `unknown`). The
/// signer of the reported chain is traced through the CA's ledger, so QA can tell whose
/// intermediate an app saw.
public final class ReportCollector: FlowSink {
    /// Where records are appended.
    public let path: String
    /// `--report-uri PATTERN`s (`GlobPattern` over the URL; without a scheme, over host and path).
    public let reportURIPatterns: [GlobPattern]
    /// The CA used to trace signers; nil records `signer: null`.
    public let store: CAStore?

    private let file: Mutex<Int32>
    private let failure = Mutex<String?>(nil)

    /// Why a report could not be written (a full disk), if one could not: the CLI reports it at
    /// exit; the first is said on stderr at once.
    public var writeError: String? { failure.withLock { $0 } }

    /// Opens (creating 0600, appending) the report file.
    ///
    /// - Throws: `QAError(.unreadable)` when the file cannot be opened for appending.
    public init(path: String, reportURIPatterns: [String] = [], store: CAStore? = nil) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw QAError(.unreadable, "cannot open \(path) for appending: \(String(cString: strerror(errno)))") }
        // A file of ours is tightened to 0600; a device or a FIFO (`/dev/stdout`) is left as it is.
        var status = stat()
        if fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG { fchmod(fd, 0o600) }
        self.path = path
        self.reportURIPatterns = reportURIPatterns.map(GlobPattern.init)
        self.store = store
        self.file = Mutex(fd)
    }

    deinit { close() }

    /// Appends a record when `flow` carries a report.
    public func record(_ flow: Flow) {
        // Reports are POSTs; checking first keeps JSON parsing off every other flow.
        guard flow.request?.method == "POST", let record = report(in: flow, id: Self.newID()),
              var line = try? Self.encoder.encode(record) else { return }
        line.append(UInt8(ascii: "\n"))
        file.withLock { fd in
            guard fd >= 0 else { return }
            // One write per record with O_APPEND: concurrent flows never interleave within a line.
            let written = line.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            guard written != line.count else { return }
            let reason = "cannot write \(path): " + (written < 0 ? String(cString: strerror(errno)) : "a short write")
            let first = failure.withLock { kept in
                defer { if kept == nil { kept = reason } }
                return kept == nil
            }
            if first { StandardError.warn("the report log failed: \(reason); later reports may be missing from it") }
        }
    }

    /// Closes the file; later flows are ignored.
    public func close() {
        file.withLock { fd in
            if fd >= 0 { fsync(fd); Foundation.close(fd) }
            fd = -1
        }
    }

    /// The record `flow` would produce, or nil when it is not a report (pure; used by `record`).
    public func report(in flow: Flow, id: String = ReportCollector.newID()) -> ReportRecord? {
        guard let request = flow.request else { return nil }
        let parsed = request.body?.text.flatMap { PinFailureReport.parse(Data($0.utf8)) }
        guard parsed != nil || matchesPattern(request.url) else { return nil }
        var record = ReportRecord(id: id, flowID: flow.id, received: flow.ended, url: request.url, kind: .unknown)
        if let parsed { record.fill(from: parsed) }
        record.signer = signer(of: record.validatedCertificateChain ?? [])
        if QAVerdict.isProbe(flow) { record.probe = "pin-check" }
        return record
    }

    /// Whether the engine should answer this request itself (`--sink-reports`, 204) instead of
    /// forwarding it: a POST to a `--report-uri` pattern, to TrustKit's default endpoint, or a
    /// JSON POST whose last path segment names a report (`/report`, `/log_report`, `/pin-report`)
    /// or whose path mentions `trustkit`.
    public func isReportRequest(method: String, url: String, contentType: String?) -> Bool {
        guard method.uppercased() == "POST" else { return false }
        if matchesPattern(url) || url == PinningEvaluator.trustKitDefaultReportURI { return true }
        let type = contentType?.lowercased() ?? ""
        guard type.hasPrefix("application/json") || type.hasPrefix("application/reports+json") else { return false }
        let path = URLComponents(string: url)?.path.lowercased() ?? ""
        // TrustKit's documentation names its report URI `…/log_report`; apps use `/pin-report`,
        // `/pinning/report` and the like: a last segment that names a report.
        let last = path.split(separator: "/").last ?? ""
        return last.contains("report") || path.contains("trustkit")
    }

    /// A fresh record id: `rpt-` and 12 hex digits.
    public static func newID() -> String {
        "rpt-" + (0..<6).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    private func matchesPattern(_ url: String) -> Bool {
        let schemeless = url.range(of: "://").map { String(url[$0.upperBound...]) } ?? url
        return reportURIPatterns.contains { pattern in
            pattern.pattern.contains("://") ? pattern.matches(url) : pattern.matches(schemeless)
        }
    }

    private func signer(of chain: [String]) -> ReportRecord.Signer? {
        guard let store, !chain.isEmpty,
              let findings = try? store.trace(Array(chain.joined(separator: "\n").utf8)) else { return nil }
        if findings.isEmpty {
            // The `unpinned` persona's chains come from the QA alternate root kept beside the team's.
            guard let certificates = try? chain.flatMap({ try Certificate.all(from: Array($0.utf8)) }),
                  let qaRoot = QAAlternateRoot(store: store).root(of: certificates) else { return nil }
            return ReportRecord.Signer(serial: qaRoot.serialHex, email: nil, qaAlternateRoot: true)
        }
        if let entry = findings.first(where: { $0.intermediate != nil })?.intermediate {
            return ReportRecord.Signer(serial: entry.serial, email: entry.email)
        }
        if let root = findings.first(where: { $0.relation == .isRoot || $0.relation == .issuedByRoot }) {
            let rootCertificate = root.relation == .isRoot ? root.certificate : (try? store.rootCertificate()) ?? root.certificate
            return ReportRecord.Signer(serial: rootCertificate.serialHex, email: nil)
        }
        return nil
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
