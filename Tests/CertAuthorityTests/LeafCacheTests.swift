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
