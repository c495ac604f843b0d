import Foundation
import Testing
import TestSupport
@testable import WireGuard

@Suite struct WireGuardKeyTests {
    @Test func base64RoundTripsAndRejectsOtherLengths() throws {
        let key = WireGuardKey.generatePrivate()
        #expect(WireGuardKey(base64: key.base64) == key)
        #expect(WireGuardKey(base64: key.base64 + "\n") == key)
        #expect(WireGuardKey(base64: Data(repeating: 1, count: 31).base64EncodedString()) == nil)
        #expect(WireGuardKey(base64: "not base64!") == nil)
        #expect(WireGuardKey(bytes: [UInt8](repeating: 0, count: 33)) == nil)
        #expect(key.bytes[0] & 7 == 0 && key.bytes[31] & 0xc0 == 0x40, "clamped")
    }

    @Test func theDescriptionNeverShowsTheKey() {
        let key = WireGuardKey.generatePrivate()
        for text in [key.description, "\(key)", String(describing: [key])] {
            #expect(!text.contains(key.base64) && !text.contains(String(key.base64.prefix(8))))
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/wg"), "needs wg (wireguard-tools)"))
    func publicKeysMatchWhatWgPrints() throws {
        let generated = try Subprocess.run("wg", ["genkey"], timeout: 10)
        let theirs = try #require(WireGuardKey(base64: generated.stdout))
        let printed = try Subprocess.run("wg", ["pubkey"], stdin: Array(generated.stdout.utf8), timeout: 10)
        #expect(theirs.publicKey.base64 == printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let ours = WireGuardKey.generatePrivate()
        let ourPrinted = try Subprocess.run("wg", ["pubkey"], stdin: Array((ours.base64 + "\n").utf8), timeout: 10)
        #expect(ours.publicKey.base64 == ourPrinted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

@Suite struct ReplayWindowTests {
    @Test func matchesASetModel() {
        var window = ReplayWindow()
        var seen = Set<UInt64>()
        var highest: UInt64? = nil
        var base: UInt64 = 0
        for step in 0..<20_000 {
            if step % 500 == 0 { base += UInt64.random(in: 0...5000) }
            let counter = base + UInt64.random(in: 0...2500)
            let fresh = !seen.contains(counter)
            let inWindow = highest.map { counter > $0 || $0 + 1 - counter <= ReplayWindow.size - 64 } ?? true
            #expect(window.accept(counter) == (fresh && inWindow), "counter \(counter) highest \(String(describing: highest))")
            if fresh && inWindow {
                seen.insert(counter)
                highest = max(highest ?? 0, counter)
            }
        }
    }
}
