import CertAuthority
import Foundation
import TestSupport

/// The peers' test vectors in `Tests/Fixtures/` (TrustKit's, AOSP's Network Security Config
/// files), read as data.
enum Vectors {
    /// `Tests/Fixtures`; `trustkit/` and `android-nsc/` sit under it.
    static let root = Fixtures.directory

    /// TrustKit's fixed test date, CFAbsoluteTime 475163640 (2016-01-22).
    static let trustKitTestDate = Date(timeIntervalSinceReferenceDate: 475_163_640)

    static func data(_ relative: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(relative))
    }

    static func json(_ relative: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: data(relative)) as? [String: Any] ?? [:]
    }

    /// A certificate fixture under `trustkit/`.
    static func certificate(_ relative: String) throws -> Certificate {
        try Certificate.all(from: [UInt8](data("trustkit/" + relative)))[0]
    }

    /// The TrustKit test-vector document.
    static func trustKit() throws -> [String: Any] { try json("trustkit/trustkit-test-vectors.json") }

    /// A vector fixture by its alias in `fixtures` (`leaf`, `root_anchor`, …).
    static func fixture(_ alias: String) throws -> Certificate {
        let fixtures = try trustKit()["fixtures"] as? [String: String] ?? [:]
        return try certificate(fixtures[alias] ?? alias)
    }
}

/// A JSON object wrapped so it can be a Swift Testing argument.
struct VectorCase: @unchecked Sendable, CustomTestStringConvertible {
    let name: String
    let body: [String: Any]
    var testDescription: String { name }

    /// The cases of one array in the TrustKit vectors document.
    static func trustKit(_ section: String) throws -> [VectorCase] {
        let cases = try Vectors.trustKit()[section] as? [[String: Any]] ?? []
        return cases.map { VectorCase(name: $0["test"] as? String ?? "?", body: $0) }
    }
}

import Testing
