import CertAuthority
import Foundation

/// An Android app package (`.apk`, a ZIP archive) opened with `unzip`, as a reviewer would open
/// it by hand: the `res/raw/` files that `<certificates src="@raw/name"/>` trust anchors name.
///
/// A release build whose resource names were shrunk (R8's `shrinkResources` with obfuscated
/// names) keeps them elsewhere under other names: then nothing is found and the caller says so.
public enum AndroidPackage {
    /// Why the package could not be read, in one line.
    public struct Failure: Error, Sendable {
        public let reason: String
    }

    /// The most a raw resource taken out may hold: a trust anchor file is a few kilobytes.
    static let fileLimit = 1 << 20

    /// Whether `path` is a ZIP archive (`PK\3\4` at its start), which an APK is.
    public static func isPackage(_ path: String) -> Bool {
        (try? SecureFile.head(of: path, count: 4)) == [0x50, 0x4B, 0x03, 0x04]
    }

    /// The files of `res/raw/` in the package whose names without extension are `names`, by file
    /// name (`team_ca.pem`).
    /// - Parameter unzip: the tool; a bare name is looked up on PATH.
    /// - Throws: `Failure` when unzip is missing or cannot read the archive.
    public static func rawFiles(in path: String, named names: Set<String>, unzip: String = "unzip") throws(Failure)
        -> [String: [UInt8]] {
        let tool = ExternalTool(unzip)
        guard tool.isInstalled else {
            throw Failure(reason: "reading an .apk needs unzip, and it is not installed (Debian: apt-get install unzip); "
                          + "or give the app's res directory")
        }
        do {
            let listing = try tool.run(["-Z1", path])
            guard listing.status == 0 else { throw Failure(reason: "unzip cannot read \(path): \(listing.lastLine)") }
            var files: [String: [UInt8]] = [:]
            for entry in listing.output.split(separator: "\n").map(String.init) where entry.hasPrefix("res/raw/") {
                let file = String(entry.dropFirst("res/raw/".count))
                guard !file.contains("/"), names.contains((file as NSString).deletingPathExtension) else { continue }
                // -p writes the entry's bytes to stdout; the name is matched as a pattern, and raw
                // resource names hold only [a-z0-9_.], which no pattern character is.
                let finished = try ChildProcess.run(tool.location() ?? unzip, ["-p", path, entry],
                                                    environment: ProcessInfo.processInfo.environment, standardError: false,
                                                    outputLimit: fileLimit + 1)
                guard finished.status == 0 else { throw Failure(reason: "unzip cannot take \(entry) out of \(path)") }
                guard finished.output.count <= fileLimit else {
                    throw Failure(reason: "\(path): \(entry) is over \(fileLimit >> 20) MB; a trust anchor file is not")
                }
                files[file] = finished.output
            }
            return files
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(reason: "cannot run unzip on \(path): \((error as? TrustStoreError)?.reason ?? "\(error)")")
        }
    }
}
