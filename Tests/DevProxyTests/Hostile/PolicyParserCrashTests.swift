import Foundation
import PinningPolicy
import Testing

/// Inputs fuzz/run found that trap the policy parsers (kept in fuzz/known-crashes/). They are
/// disabled because a trap ends the whole test process; each pins the behaviour the fix must
/// give — a thrown `PolicyError` or a policy, never a crash — and is enabled with the fix.
@Suite struct PolicyParserCrashTests {
    /// An `.add(` whose argument list runs past `.build()` makes `parseSource` search a range
    /// whose lower bound is beyond its upper bound (OkHttpPinnerParser.swift:36: `scan..<end`
    /// with `scan > end`). The fix: stop scanning once `scan >= end`.
    @Test(.disabled("traps: Range requires lowerBound <= upperBound in OkHttpPinnerParser.parseSource"))
    func addCallRunningPastBuildDoesNotTrap() {
        let source = """
        val pinner = CertificatePinner.Builder()
            .add("api.example.com", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            .add("*.example.com",
                 "sha256/BBBBBBBBBBBBBBBBBBBB
                 "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=",    .build()

        """
        _ = try? OkHttpPinnerParser().parse(source)
    }

    /// A network security config whose element name holds bytes that are not UTF-8 traps
    /// inside swift-corelibs-foundation's XMLParser (`_NSXMLParserStartElementNs`), called from
    /// XMLElementTree.parse. The fix belongs before XMLParser: reject input that is not valid
    /// UTF-8 with a PolicyError.
    @Test(.disabled("traps inside FoundationXML's XMLParser on a non-UTF-8 element name"))
    func nonUTF8ElementNameDoesNotTrap() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../fuzz/known-crashes/android-nsc/non-utf8-element-name").standardized.path
        let data = try #require(FileManager.default.contents(atPath: path))
        _ = try? AndroidNSCParser().parse(data)
    }
}
