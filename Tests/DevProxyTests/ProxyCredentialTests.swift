@testable import DevProxy
import Testing

/// `--proxy-auth FILE`: `user:password` lines, whatever ends them.
@Suite struct ProxyCredentialTests {
    /// A file saved with Windows line endings is read line by line: split on "\n", its CR LF
    /// (one Character in Swift) ended no line, so it read as one credential whose password ran
    /// into the next line, and nobody could sign in.
    @Test(arguments: ["\n", "\r\n", "\r"])
    func eachLineIsACredential(_ end: String) throws {
        let text = ["# team", "ana:s3cret", "", "bob:pass:with:colons"].joined(separator: end) + end
        let credentials = try ProxyCredential.parse(text, source: "auth.txt")
        #expect(credentials == [ProxyCredential(user: "ana", password: "s3cret"),
                                ProxyCredential(user: "bob", password: "pass:with:colons")])
    }

    /// The line number of a bad line counts lines as an editor does, whatever ends them.
    @Test func aBadLineIsNamedByItsNumber() {
        do {
            _ = try ProxyCredential.parse("ana:s3cret\r\n\r\nno colon here\r\n", source: "auth.txt")
            Issue.record("a line without a colon was taken")
        } catch {
            #expect("\(error)" == "auth.txt line 3 is not user:password")
        }
    }
}
