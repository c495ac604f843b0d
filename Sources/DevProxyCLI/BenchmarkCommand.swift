import CertAuthority
import Foundation

/// `devproxy benchmark leaves`: how fast leaves are minted (new key + signature), per key type.
/// Run it from a release build; it is a measurement, not a test.
enum BenchmarkCommand {
    static let usage = """
    How fast leaves are minted (a new key and a signature each), per key type, on one core.

      devproxy benchmark leaves                       2,000 EC P-256 leaves and 20 RSA-2048 ones
      devproxy benchmark leaves --count 500 --rsa-count 0

    Run it from a release build (`swift run -c release devproxy benchmark leaves`); a debug
    build warns that its figures are not DevProxy's.
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" {
            Output.line(usage)
            return 0
        }
        guard raw.first == "leaves" else {
            throw UsageError("usage: devproxy benchmark leaves [--count N] [--rsa-count N]; see --help")
        }
        let arguments = try Arguments(raw.dropFirst(), valued: ["count", "rsa-count"], booleans: [])
        let count = try arguments.integer("count") ?? 2000
        let rsaCount = try arguments.integer("rsa-count") ?? 20
        guard count > 0, rsaCount >= 0 else { throw UsageError("--count must be positive and --rsa-count not negative") }
        let workspace = NSTemporaryDirectory() + "devproxy-bench-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: workspace) }
        let store = CAStore(directory: workspace)
        try store.initialize(name: "Benchmark Root", keyType: .p256, days: 2, passphrase: nil)
        let (_, bundle) = try store.issueIntermediate(email: "bench@devproxy.invalid", days: 1, permittedDNS: [],
                                                      keyType: .p256, output: nil, passphrase: nil)
        let signer = try Signer(bundle: try SecureFile.read(bundle, what: "bundle"))
        #if DEBUG
        Output.warning("this is a debug build; run `swift run -c release devproxy benchmark leaves` for real figures")
        #endif
        Output.line("Leaf issuance on one core (new key + signature), intermediate EC P-256:")
        for (type, n) in [(KeyType.p256, count), (.rsa2048, rsaCount)] where n > 0 {
            let issuer = LeafIssuer(signer: signer, keyType: type)
            var samples: [Double] = []
            samples.reserveCapacity(n)
            for index in 0..<n {
                let name = try LeafName("host\(index).bench.example")
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try issuer.issue(for: [name])
                samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
            }
            samples.sort()
            let median = samples[samples.count / 2]
            let p99 = samples[min(samples.count - 1, samples.count * 99 / 100)]
            let total = samples.reduce(0, +)
            Output.line(String(format: "  %-9@ %6d leaves  median %8.1f µs  p99 %9.1f µs  %8.0f leaves/s",
                               type.rawValue as NSString, n, median, p99, Double(n) / (total / 1_000_000)))
        }
        return 0
    }
}
