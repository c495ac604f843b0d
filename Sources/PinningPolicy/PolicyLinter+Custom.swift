import CertAuthority
import Foundation

extension PolicyLinter {
    /// The classic bugs of hand-written pinners, judged against every certificate the linter
    /// knows (the team root, the served chains): pins in the wrong hash form, a CA pin in a
    /// leaf-only pinner, no team-root pin in the pinner's own form.
    func lint(_ pinner: CustomPinner) -> [PolicyLint] {
        var findings: [PolicyLint] = []
        let name = pinner.name
        var known: [Certificate] = teamRoot.map { [$0] } ?? []
        for chain in Array(chains.values) + [expected] { known += chain.filter { candidate in !known.contains(candidate) } }
        for pin in pinner.pins {
            let matchesOwnForm = known.contains { pinner.hash.digest(of: $0) == pin.digest }
            guard !matchesOwnForm else { continue }
            for certificate in known {
                let other = PinHashForm.allCases.first { $0 != pinner.hash && $0.digest(of: certificate) == pin.digest }
                guard let form = other else { continue }
                let right = pinner.hash.digest(of: certificate).map { "its \(pinner.hash.rawValue) pin is \($0.base64)" }
                    ?? "its key has no \(pinner.hash.rawValue) form"
                findings.append(PolicyLint(kind: .wrongHashForm, domain: name, message: "pin \(pin.base64) is the "
                    + "\(form.rawValue) hash of \(certificate.subject), but the pinner hashes \(pinner.hash.rawValue): "
                    + "it matches nothing, in production too; \(right)"))
                break
            }
        }
        if pinner.scope == .leaf {
            let authorities = known.filter { $0.isCA }
            for pin in pinner.pins {
                guard let authority = authorities.first(where: { certificate in
                    PinHashForm.allCases.contains { $0.digest(of: certificate) == pin.digest }
                }) else { continue }
                findings.append(PolicyLint(kind: .caPinInLeafPinner, domain: name, message: "pin \(pin.base64) is "
                    + "\(authority.subject), a CA, but the pinner hashes the leaf only: no CA can satisfy it, the team "
                    + "CA included; pin a leaf key and run `devproxy run --leaf-key HOST=KEY.pem`"))
            }
            findings.append(PolicyLint(kind: .leafOnlyPinner, domain: name, message: "leaf-only: DevProxy's minted "
                + "leaves satisfy it only with `devproxy run --leaf-key HOST=KEY.pem` and that key's pin "
                + "(`devproxy pins --format \(pinner.hash.rawValue) KEY.pem`) in a debug build"))
        } else if let teamRoot, let own = pinner.hash.digest(of: teamRoot),
                  !pinner.pins.contains(where: { $0.digest == own }) {
            findings.append(PolicyLint(kind: .teamRootNotPinned, domain: name, message: "the team root's "
                + "\(pinner.hash.rawValue) pin \(own.base64) is not pinned: DevProxy cannot decrypt these hosts; "
                + "the app will block"))
        }
        if pinner.hash == .certificate {
            findings.append(PolicyLint(kind: .pinsCertificate, domain: name, message: "pins whole certificates, "
                + "which change at every renewal; hash the public key (spki) instead"))
        }
        return findings
    }
}
