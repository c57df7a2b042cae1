import Foundation

/// The certificate cases of the security-policy matrix, made once per process with the `openssl` tool in a
/// temporary folder. The session trusts `Root` and `Other Root` (`roots`); `Rogue Root` is trusted by nobody.
/// `Intermediate` (under `Root`) is the CA the matrix pins; every leaf names `localhost` and `127.0.0.1` unless
/// said otherwise. `openssl ca` sets both dates of each certificate, so the expired leaf needs no faked clock.
final class MatrixCertificates: Sendable {
    /// A certificate case: what a server sends, in which file, with which key.
    enum Case: String, CaseIterable, Sendable, CustomStringConvertible {
        /// A leaf under the intermediate, sent with the intermediate.
        case valid
        /// A leaf under the intermediate that expired in 2021, sent with the intermediate.
        case expired
        /// A leaf under the intermediate for `wrong.example` only, sent with the intermediate.
        case wrongHost
        /// A self-signed leaf, sent alone.
        case selfSigned
        /// A leaf under the rogue root, sent with that root.
        case untrustedRoot
        /// The pin bypass on an untrusted chain: the rogue root's leaf, with the pinned intermediate appended.
        case forged
        /// The pin bypass of OkHttp's CVE-2016-2402: a leaf mis-issued by a root the session trusts (`Other Root`),
        /// with the pinned intermediate appended. It verifies, through the other root, without the intermediate.
        case forgedTrusted

        var description: String { rawValue }

        /// The file name stem of the case's chain (`<stem>-chain.pem`) and leaf (`<leaf>.pem`, `<leaf>.key`).
        fileprivate var leaf: String {
            switch self {
            case .valid: "valid"
            case .expired: "expired"
            case .wrongHost: "wronghost"
            case .selfSigned: "selfsigned"
            case .untrustedRoot, .forged: "rogueleaf"
            case .forgedTrusted: "misissued"
            }
        }
    }

    let folder: String

    /// The session's trust roots (PEM): the root and the other root.
    var roots: String { path("roots.pem") }
    /// The CA certificate the matrix pins (PEM).
    var intermediate: String { path("intermediate.pem") }

    /// The file a server sends for `certificate`: its leaf first, then the rest of the case's list.
    func chain(_ certificate: Case) -> String { path("\(certificate.rawValue)-chain.pem") }
    /// The key of `certificate`'s leaf.
    func key(_ certificate: Case) -> String { path("\(certificate.leaf).key") }
    /// `certificate`'s leaf alone (PEM).
    func leaf(_ certificate: Case) -> String { path("\(certificate.leaf).pem") }

    func path(_ name: String) -> String { "\(folder)/\(name)" }

    /// The certificates of this test process, made on first use.
    static func shared() throws -> MatrixCertificates { try made.get() }

    private static let made = Result { try MatrixCertificates() }

    private init() throws {
        folder = try makeTemporaryFolder()
        let script = #"""
            set -e
            cd "$PKI"
            exec 2>openssl.log
            key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"; }
            root() {
              key "$1"
              openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 3650 -subj "$2" \
                -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
            }
            # issue NAME SUBJECT ISSUER NOT_BEFORE NOT_AFTER SUBJECT_ALT_NAMES (empty: a CA)
            issue() {
              key "$1"
              openssl req -new -key "$1.key" -out "$1.csr" -subj "$2"
              if [ -z "$6" ]; then
                printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n' > "$1.ext"
              else
                printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=%s\n' "$6" > "$1.ext"
              fi
              mkdir -p "$3-db"; touch "$3-db/index.txt"; [ -f "$3-db/serial" ] || echo 1000 > "$3-db/serial"
              printf '[ca]\ndefault_ca=this\n[this]\ndir=%s\ndatabase=$dir/index.txt\nserial=$dir/serial\nnew_certs_dir=$dir\ncertificate=%s\nprivate_key=%s\ndefault_md=sha256\npolicy=any\nunique_subject=no\n[any]\ncommonName=optional\norganizationName=optional\n' \
                "$PWD/$3-db" "$PWD/$3.pem" "$PWD/$3.key" > "$3.cnf"
              openssl ca -batch -notext -config "$3.cnf" -in "$1.csr" -out "$1.pem" -extfile "$1.ext" -startdate "$4" -enddate "$5"
            }
            NAMES=DNS:localhost,IP:127.0.0.1
            root root "/O=Wire Matrix/CN=Root"
            root other "/O=Wire Matrix/CN=Other Root"
            root rogue "/O=Wire Matrix/CN=Rogue Root"
            issue intermediate "/O=Wire Matrix/CN=Intermediate" root 20200101000000Z 20991231000000Z ""
            issue valid "/CN=localhost" intermediate 20200101000000Z 20991231000000Z "$NAMES"
            issue expired "/CN=expired" intermediate 20200101000000Z 20210101000000Z "$NAMES"
            issue wronghost "/CN=wrong.example" intermediate 20200101000000Z 20991231000000Z DNS:wrong.example
            issue rogueleaf "/O=Rogue/CN=localhost" rogue 20200101000000Z 20991231000000Z "$NAMES"
            issue misissued "/O=Misissued/CN=localhost" other 20200101000000Z 20991231000000Z "$NAMES"
            key selfsigned
            openssl req -x509 -new -key selfsigned.key -out selfsigned.pem -days 3650 -subj "/O=Self Signed/CN=localhost" \
              -addext subjectAltName=$NAMES
            cat root.pem other.pem > roots.pem
            cat valid.pem intermediate.pem > valid-chain.pem
            cat expired.pem intermediate.pem > expired-chain.pem
            cat wronghost.pem intermediate.pem > wrongHost-chain.pem
            cp selfsigned.pem selfSigned-chain.pem
            cat rogueleaf.pem rogue.pem > untrustedRoot-chain.pem
            cat rogueleaf.pem intermediate.pem > forged-chain.pem
            cat misissued.pem intermediate.pem > forgedTrusted-chain.pem
            """#
        try runPKIScript(script, in: folder)
    }
}
