import CertAuthority
import DevProxy
import Foundation

/// `devproxy pins --host HOST:PORT`: the pins of a live server's chain.
enum PinsLiveCommand {
    struct Row: Encodable {
        let position: Int
        let subject: String
        let issuer: String
        let key: String
        let notAfter: String
        let pin: String
        /// TrustKit's hash when it differs from `pin`, "unsupported" when TrustKit cannot hash the key, else nil.
        let trustKitPin: String?

        enum CodingKeys: String, CodingKey {
            case position, subject, issuer, key, pin
            case notAfter = "not_after", trustKitPin = "trustkit_pin"
        }
    }

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["host", "proxy", "resolve", "format"], booleans: ["json"])
        let forms = try arguments.value("format").map(PinsFormatOutput.forms)
        guard let target = arguments.value("host") else { throw UsageError("--host HOST:PORT is required") }
        let address: HostPort
        do {
            address = try HostPort(parsing: target, defaultPort: 443)
            let proxy = try arguments.value("proxy").map { try HostPort(parsing: $0) }
            let resolve = try arguments.values("resolve").map(ResolveOverride.init(parsing:))
            let chain = try ChainProbe.fetch(Endpoint(host: address.host, port: address.port, proxy: proxy, resolve: resolve))
            if let forms {
                let sources = chain.enumerated().map { (address.description, $0.offset, PinSource(certificate: $0.element)) }
                PinsFormatOutput.print(PinsFormatOutput.rows(sources, forms: forms), json: arguments.flag("json"))
                return 0
            }
            let rows = chain.enumerated().map { index, certificate in
                let standard = SPKIPin.base64SHA256(certificate.spkiDER)
                let trustKit = TrustKitKeyHash.hash(of: certificate).map { $0.base64 }
                return Row(position: index, subject: certificate.subject, issuer: certificate.issuer, key: certificate.keyDescription,
                           notAfter: ISO8601.string(certificate.notAfter), pin: "sha256/" + standard,
                           trustKitPin: trustKit == nil ? "unsupported" : (trustKit == standard ? nil : trustKit))
            }
            if arguments.flag("json") {
                Output.json(rows)
                return 0
            }
            Output.line("Chain served by \(address)\(proxy.map { " through \($0)" } ?? "") (leaf first):")
            for row in rows {
                Output.line()
                Output.line("  [\(row.position)] \(row.subject)")
                Output.line("      issuer     \(row.issuer)")
                Output.line("      key        \(row.key), not after \(row.notAfter)")
                Output.line("      pin        \(row.pin)")
                if let trustKit = row.trustKitPin {
                    Output.line("      TrustKit   " + (trustKit == "unsupported" ? "cannot hash this key: a TrustKit app blocks (result 5)"
                                                                                : "\(trustKit) (differs: TrustKit rebuilds the SPKI)"))
                }
            }
            Output.line()
            Output.line("Pin the root or an intermediate, never the leaf; make a snippet with `devproxy pins snippet`.")
            return 0
        } catch let error as QAError {
            throw CommandFailure(error.reason)
        } catch let error as ConfigurationError {
            throw CommandFailure(error.description)
        } catch let error as CommandFailure {
            throw error
        } catch let error as UsageError {
            throw error
        } catch {
            throw CommandFailure("cannot get the chain of \(target): \(error)")
        }
    }
}
