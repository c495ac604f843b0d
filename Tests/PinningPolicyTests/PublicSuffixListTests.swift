import Testing
@testable import PinningPolicy

/// `GetRegistryLength` values measured in spec §2.3.1, against the Debian list.
@Suite struct PublicSuffixListTests {
    @Test func systemListIsInstalled() throws {
        // scripts/test installs the publicsuffix package; without it TrustKit validation is off.
        _ = try PublicSuffixList.system.get()
    }

    @Test(arguments: [
        ("com", 3), ("co.uk", 5), ("appspot.com", 11), ("localhost", 0), ("example.local", 0),
        ("192.168.0.1", 0), ("good.com.", 4), ("good.com..", 0), ("www.good.com", 3), ("WWW.Good.COM", 3),
        ("bücher.de", 0),
    ])
    func registryLength(_ host: String, _ expected: Int) throws {
        #expect(try PublicSuffixList.system.get().registryLength(of: host) == expected)
    }

    @Test func wildcardAndExceptionRules() {
        let list = PublicSuffixList(text: "// comment\nck\n*.ck\n!www.ck\ncom\n")
        #expect(list.registryLength(of: "a.b.ck") == 4)
        #expect(list.registryLength(of: "www.ck") == 2)
        #expect(list.isPublicSuffix("b.ck"))
        #expect(!list.isPublicSuffix("www.ck"))
    }
}
