import Foundation
import Testing
@testable import PinningPolicy

/// The element tree the Android network security config is read into: on Linux libxml2 loaded
/// on first use (CLibXML2), elsewhere Foundation's XMLParser; both must read a config the same way.
@Suite struct XMLElementTreeTests {
    private func parse(_ text: String) throws -> XMLElementTree { try XMLElementTree.parse(Data(text.utf8)) }

    @Test func elementsAttributesAndTextComeInDocumentOrder() throws {
        let tree = try parse("""
        <?xml version="1.0" encoding="utf-8"?>
        <network-security-config>
            <domain-config cleartextTrafficPermitted="false">
                <domain includeSubdomains="true">api.example.com</domain>
                <pin-set expiration="2030-01-01">
                    <pin digest="SHA-256">AAAA&amp;=</pin>
                    <pin digest="SHA-256"><![CDATA[BBBB<=]]></pin>
                </pin-set>
            </domain-config>
        </network-security-config>
        """)
        #expect(tree.name == "network-security-config")
        let config = try #require(tree.children.first)
        #expect(config.attributes == ["cleartextTrafficPermitted": "false"])
        #expect(config.children.map(\.name) == ["domain", "pin-set"])
        #expect(config.children[0].text == "api.example.com")
        #expect(config.children[0].attributes["includeSubdomains"] == "true")
        let pins = config.children[1].children(named: "pin")
        #expect(pins.map(\.text) == ["AAAA&=", "BBBB<="], "entities replaced, CDATA read as text")
    }

    @Test func prefixedNamesAndNamespaceDeclarationsAreKeptAsWritten() throws {
        let tree = try parse("""
        <network-security-config xmlns:tools="http://schemas.android.com/tools" tools:ignore="x">
            <tools:note a="1"/>
        </network-security-config>
        """)
        #expect(tree.attributes["xmlns:tools"] == "http://schemas.android.com/tools")
        #expect(tree.attributes["tools:ignore"] == "x")
        #expect(tree.children.map(\.name) == ["tools:note"])
    }

    @Test func longValuesArriveWhole() throws {
        let long = String(repeating: "A", count: 100_000)
        let tree = try parse("<a v=\"\(long)\">\(long)</a>")
        #expect(tree.attributes["v"]?.count == 100_000)
        #expect(tree.text.count == 100_000)
    }

    @Test func aDocumentThatDoesNotParseSaysWhereAndWhy() throws {
        let error = #expect(throws: PolicyError.self) { try parse("<a>\n<b>\n</a>") }
        #expect(error?.code == .unreadable)
        let reason = error?.reason ?? ""
        // The first error, where it is (the mismatched end tag), not its consequence at the end.
        #expect(reason.hasPrefix("the XML does not parse (line 3): "), "\(reason)")
        #if os(Linux)
        #expect(reason.contains("tag mismatch"), "\(reason)")
        #endif
        #expect(throws: PolicyError.self) { try parse("") }
        #expect(throws: PolicyError.self) { try parse("just text") }
    }

    /// An external entity is never fetched or read: the file's contents must not reach the tree.
    @Test func externalEntitiesAreNotResolved() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xxe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = directory.appendingPathComponent("secret.txt")
        try Data("top-secret-value".utf8).write(to: secret)
        let document = """
        <?xml version="1.0"?>
        <!DOCTYPE a [<!ENTITY x SYSTEM "\(secret.absoluteString)">]>
        <a>&x;</a>
        """
        let tree: XMLElementTree
        do { tree = try parse(document) } catch { return }  // refusing it is as good
        #expect(!tree.text.contains("top-secret-value"))
    }

    /// Nesting deeper than libxml2's limit is refused, not a stack overflow.
    @Test func deepNestingIsRefused() throws {
        let depth = 5_000
        let document = String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
        #expect(throws: PolicyError.self) { try parse(document) }
    }
}
