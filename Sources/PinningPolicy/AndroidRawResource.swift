import CertAuthority
import Foundation

/// The certificates of an Android `<certificates src="@raw/name"/>` trust anchor, read from the
/// app's `res/raw/name.*`: PEM (one or several) or DER, as Android's `ResourceCertificateSource`
/// reads them with `CertificateFactory.generateCertificates`.
public struct AndroidRawResource: Sendable {
    /// Where it was read from, for messages.
    public let file: String
    public let certificates: [Certificate]

    public init(file: String, certificates: [Certificate]) {
        self.file = file
        self.certificates = certificates
    }

    /// Whether `certificate` is one of these anchors, matched as Android matches a trust anchor:
    /// by subject and public key (`findTrustAnchorBySubjectAndPublicKey`).
    public func holds(_ certificate: Certificate) -> Bool {
        certificates.contains { $0.subject == certificate.subject && $0.spkiDER == certificate.spkiDER }
    }

    /// Reads `@raw/name` from the app's resources: the file in `raw/` whose name without its
    /// extension is `name`.
    ///
    /// - Returns: nil when `source` is not an `@raw/` reference.
    /// - Throws: `PolicyError` `.unreadable` saying why when there is no such file or it holds no
    ///   certificate (the app would fail to load it too).
    public static func read(_ source: String, from resources: AndroidResources) throws -> AndroidRawResource? {
        guard source.hasPrefix("@raw/") else { return nil }
        let name = String(source.dropFirst("@raw/".count))
        let (directory, files) = resources.rawFiles
        guard let match = files.sorted().first(where: { ($0 as NSString).deletingPathExtension == name }) else {
            throw PolicyError(.unreadable, "\(directory) has no \(name) (or \(name).pem, .crt, …) for \(source)")
        }
        let path = directory + "/" + match
        do {
            let certificates = try Certificate.all(from: try resources.bytes(of: match))
            guard !certificates.isEmpty else { throw CAError(.corruptCertificate, "no certificate in it") }
            return AndroidRawResource(file: path, certificates: certificates)
        } catch let error as CAError {
            throw PolicyError(.unreadable, "\(path) (\(source)): \(error.reason)")
        }
    }
}

/// Where an app's resources are: its `res` directory, or the `res/raw/` files taken out of its
/// package (an `.apk`).
public enum AndroidResources: Sendable {
    /// A source tree's `res` directory (`app/src/main/res`).
    case directory(String)
    /// An `.apk`'s `res/raw/` files, by file name, that were taken out of it.
    case package(String, raw: [String: [UInt8]])

    /// The `raw/` directory for messages, and the file names in it.
    var rawFiles: (String, [String]) {
        switch self {
        case .directory(let path):
            return (path + "/raw", (try? FileManager.default.contentsOfDirectory(atPath: path + "/raw")) ?? [])
        case .package(let path, let raw):
            return (path + "!/res/raw", Array(raw.keys))
        }
    }

    /// The bytes of `file` in `raw/`.
    func bytes(of file: String) throws -> [UInt8] {
        switch self {
        case .directory(let path): return try SecureFile.read(path + "/raw/" + file, what: "@raw/" + file)
        case .package(_, let raw): return raw[file] ?? []
        }
    }
}
