@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The identity an intermediate is issued for: DEVPROXY_EMAIL, else git's user.email (git run
/// with the given environment), else USER@host.
@Suite struct LocalIdentityTests {
    /// An environment whose git sees only `home`'s config: no system file, no repository.
    private func environment(home: TemporaryDirectory, _ extra: [String: String] = [:]) -> [String: String] {
        ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home.path,
         "GIT_CONFIG_NOSYSTEM": "1", "GIT_DIR": home.file("no-repository")].merging(extra) { $1 }
    }

    @Test func gitsUserEmailWhenSet() throws {
        let home = TemporaryDirectory()
        try "[user]\n\temail = ana@acme.dev\n".write(toFile: home.file(".gitconfig"), atomically: true, encoding: .utf8)
        #expect(LocalIdentity.gitEmail(environment: environment(home: home)) == "ana@acme.dev")
        #expect(LocalIdentity.email(environment: environment(home: home, ["USER": "ana"])) == "ana@acme.dev")
        #expect(LocalIdentity.email(environment: environment(home: home, ["DEVPROXY_EMAIL": "qa@acme.dev"])) == "qa@acme.dev")
    }

    @Test func userAtHostWithoutGitConfig() {
        let home = TemporaryDirectory()
        #expect(LocalIdentity.gitEmail(environment: environment(home: home)) == nil, "git exits 1: no such key")
        let email = LocalIdentity.email(environment: environment(home: home, ["USER": "ana"]))
        #expect(email.hasPrefix("ana@") && email.dropFirst(4).contains("."), "\(email)")
    }

    /// Values git accepts and a certificate cannot carry as they are: `Name <address>` gives its
    /// address, a dotless domain gets `.local`, and anything else falls back to USER@host with one
    /// warning naming DEVPROXY_EMAIL (the first run stopped on it with an error that named neither).
    @Test(arguments: [("Ana <ana@acme.dev>", "ana@acme.dev"), ("ana@laptop", "ana@laptop.local"),
                      ("not an address", nil)])
    func gitValuesAnAddressCannotBeAreMadeOneOrSaid(_ value: String, _ expected: String?) throws {
        let home = TemporaryDirectory()
        try "[user]\n\temail = \(value)\n".write(toFile: home.file(".gitconfig"), atomically: true, encoding: .utf8)
        var warnings: [String] = []
        let email = LocalIdentity.email(environment: environment(home: home, ["USER": "ana"])) { warnings.append($0) }
        if let expected {
            #expect(email == expected && warnings.isEmpty, "\(email) \(warnings)")
        } else {
            #expect(email.hasPrefix("ana@") && warnings.count == 1, "\(email) \(warnings)")
            #expect(warnings.first?.contains("DEVPROXY_EMAIL") == true && warnings.first?.contains(value) == true)
        }
    }

    @Test func noGitAtAll() {
        let home = TemporaryDirectory()
        #expect(LocalIdentity.gitEmail(environment: environment(home: home), git: "devproxy-test-no-such-git") == nil)
    }
}
