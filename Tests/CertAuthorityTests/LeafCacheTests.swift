@testable import CertAuthority
import Foundation
import Testing
import TestSupport

/// The leaf cache mints once per name even under concurrency and stays within its bound.
@Suite struct LeafCacheTests {
    @Test func concurrentRequestsForOneNameMintOnce() throws {
        let pki = try PKIFixture()
        let cache = LeafCache(issuer: LeafIssuer(signer: pki.signer))
        let name = try LeafName("api.example.com")
        let serials = Serials()
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            if let leaf = try? cache.leaf(for: name) { serials.add(leaf.certificate.serialHex) }
        }
        #expect(serials.all.count == 16)
        #expect(Set(serials.all).count == 1)
        #expect(cache.mintCount == 1)
    }

    @Test func leastRecentlyUsedIsEvicted() throws {
        let pki = try PKIFixture()
        let cache = LeafCache(issuer: LeafIssuer(signer: pki.signer), capacity: 2)
        let a = try LeafName("a.example.com"), b = try LeafName("b.example.com"), c = try LeafName("c.example.com")
        let first = try cache.leaf(for: a)
        _ = try cache.leaf(for: b)
        _ = try cache.leaf(for: a)          // a is now more recent than b
        _ = try cache.leaf(for: c)          // evicts b
        #expect(cache.count == 2)
        #expect(try cache.leaf(for: a).certificate.serialHex == first.certificate.serialHex)
        #expect(cache.mintCount == 3)
        _ = try cache.leaf(for: b)          // b was evicted: minted again
        #expect(cache.mintCount == 4)
    }

    /// In its signer's last hour a cached leaf (which lasts as long as the signer lets any) is
    /// still the leaf: every connection minted one of its own there.
    @Test func theSignersLastHourDoesNotMintPerConnection() throws {
        let pki = try PKIFixture()
        let cache = LeafCache(issuer: LeafIssuer(signer: pki.signer))
        let name = try LeafName("api.example.com")
        let lastHour = pki.signer.certificate.notAfter.addingTimeInterval(-1800)
        let first = try cache.leaf(for: name, now: lastHour)
        let second = try cache.leaf(for: name, now: lastHour.addingTimeInterval(60))
        #expect(first.certificate.serialHex == second.certificate.serialHex)
        #expect(cache.mintCount == 1)
    }

    /// With a renewal (a local development CA), a signer within a day of its end is replaced
    /// once, and leaves come from the new one; expired, it was refused for every host until a restart.
    @Test func aRenewalReplacesASignerNearItsEndOnce() throws {
        let pki = try PKIFixture()
        let (next, path) = try pki.store.issueIntermediate(email: "ana@acme.dev", days: 30, permittedDNS: [], keyType: .p256,
                                                           output: nil, passphrase: nil)
        let renewed = Serials()
        let cache = LeafCache(issuer: LeafIssuer(signer: pki.signer), renewal: { _ in
            renewed.add("renewed")
            return LeafIssuer(signer: try Signer(bundle: try SecureFile.read(path, what: "bundle")))
        })
        let soon = pki.signer.certificate.notAfter.addingTimeInterval(-3600 * 5)
        let a = try cache.leaf(for: try LeafName("a.example.com"), now: soon)
        let b = try cache.leaf(for: try LeafName("b.example.com"), now: soon)
        #expect(a.issuer.serialHex == next.serialHex && b.issuer.serialHex == next.serialHex)
        #expect(renewed.all.count == 1)
        #expect(cache.issuer.signer.certificate.serialHex == next.serialHex)
    }

    @Test func failuresAreNotCached() throws {
        let pki = try PKIFixture(permittedDNS: ["acme.dev"])
        let cache = LeafCache(issuer: LeafIssuer(signer: pki.signer))
        let outside = try LeafName("example.com")
        #expect(throws: CAError.self) { try cache.leaf(for: outside) }
        #expect(throws: CAError.self) { try cache.leaf(for: outside) }
        #expect(cache.count == 0)
    }
}

/// Thread-safe collector for test results.
final class Serials: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String] = []
    func add(_ value: String) { lock.lock(); values.append(value); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return values }
}
