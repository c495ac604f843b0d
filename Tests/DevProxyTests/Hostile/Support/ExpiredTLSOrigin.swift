import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import TestSupport

/// A TLS origin on 127.0.0.1:0 whose certificate for `localhost` expired a moment ago (its
/// root is valid): it completes handshakes when a client lets it and then closes. Stopped
/// when released.
final class ExpiredTLSOrigin: @unchecked Sendable {
    let port: Int
    let root: Certificate
    private let listener: Listener
    private let directory = TemporaryDirectory()
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init() throws {
        let store = CAStore(directory: directory.file("expired-ca"))
        root = try store.initialize(name: "Expired Origin CA", keyType: .p256, days: 2, passphrase: nil)
        var issuer = LeafIssuer(signer: try store.rootSigner(passphrase: nil))
        issuer.backdate = 0
        issuer.lifetime = 1
        let leaf = try issuer.issue(for: [try LeafName("localhost")])
        while Date() <= leaf.certificate.notAfter.addingTimeInterval(1) { usleep(50_000) }
        listener = try Listener(host: "127.0.0.1", port: 0)
        port = listener.address.port
        let context = try TLSContext.server()
        let thread = Thread { [self] in
            defer { finished.signal() }
            while !stopped.load(ordering: .sequentiallyConsistent) {
                guard let socket = (try? listener.accept(timeout: 0.1)) ?? nil else { continue }
                socket.setTimeout(5)
                (try? TLSConnection.accept(socket: socket, context: context, leaf: leaf, peerName: "the proxy"))?.close()
                socket.close()
            }
        }
        thread.start()
    }

    deinit {
        stopped.store(true, ordering: .sequentiallyConsistent)
        finished.wait()
    }
}
