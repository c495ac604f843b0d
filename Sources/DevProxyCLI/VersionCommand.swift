import CCompression
import CNGHTTP2
import CSQLite
import CTLS
import DevProxy
import Foundation

/// `devproxy --version`: DevProxy's version and the libraries it runs on, for bug reports (as
/// `mitmdump --version` gives its own, Python's, OpenSSL's and the platform). The libraries are
/// linked dynamically, so what a machine has installed is what runs: the versions are read from
/// the libraries themselves, not from the headers the build saw.
enum VersionCommand {
    static func text() -> String {
        var uts = utsname()
        uname(&uts)
        let rows: [(String, String)] = [
            ("DevProxy", DevProxyVersion.current),
            ("OpenSSL", String(cString: OpenSSL_version(OPENSSL_VERSION))),
            ("nghttp2", nghttp2_version(0).map { String(cString: $0.pointee.version_str) } ?? "unknown"),
            ("SQLite", String(cString: sqlite3_libversion())),
            ("zstd", String(cString: ZSTD_versionString())),
            ("zlib", String(cString: zlibVersion())),
            ("Platform", "\(field(uts.sysname)) \(field(uts.release)) \(field(uts.machine)), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores"),
        ]
        return rows.map { name, value in (name + ":").padding(toLength: 10, withPad: " ", startingAt: 0) + value }
            .joined(separator: "\n")
    }

    /// One of `utsname`'s fixed-size C strings (imported as a tuple of `CChar`).
    private static func field<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
