import CertAuthority
import Foundation

extension PolicyLinter {
    /// ATS pinned domains: a CA's SPKI among leaf identities matches nothing (Apple compares leaf
    /// identities with the leaf only), and the team root must be among the CA identities.
    func lint(_ ats: ATSPolicy) -> [PolicyLint] {
        var findings: [PolicyLint] = []
        var authorities: [Certificate] = teamRoot.map { [$0] } ?? []
        for chain in Array(chains.values) + [expected] { authorities += chain.filter { $0.isCA && !authorities.contains($0) } }
        for domain in ats.pinnedDomains {
            let leafPins = domain.leafIdentities ?? []
            for authority in authorities where leafPins.contains(where: { $0.digest == Digest.sha256(authority.spkiDER) }) {
                findings.append(PolicyLint(kind: .caPinInLeafPinner, domain: domain.name, message: "NSPinnedLeafIdentities "
                    + "holds \(authority.subject), a CA: Apple compares leaf identities with the leaf only, so it never "
                    + "matches; move it to NSPinnedCAIdentities"))
            }
            guard let teamRoot else { continue }
            let rootPin = Digest.sha256(teamRoot.spkiDER)
            if (domain.caIdentities ?? []).contains(where: { $0.digest == rootPin }) { continue }
            if domain.caIdentities == nil, domain.leafIdentities != nil {
                findings.append(PolicyLint(kind: .leafOnlyPinner, domain: domain.name, message: "leaf identities only: "
                    + "DevProxy's leaves match only with `devproxy run --leaf-key HOST=KEY.pem` and that key's pin "
                    + "(`devproxy pins --format spki KEY.pem`) in a debug build's NSPinnedLeafIdentities"))
            } else {
                findings.append(PolicyLint(kind: .teamRootNotPinned, domain: domain.name,
                                           message: "DevProxy cannot decrypt this host; the app will block"))
            }
        }
        return findings
    }
}
