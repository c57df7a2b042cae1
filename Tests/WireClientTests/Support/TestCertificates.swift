import Foundation
import Testing

/// Certificates for the security-policy tests, made once per process with the `openssl` tool in a temporary folder:
/// a root and an intermediate under it, a good leaf (`localhost`, `127.0.0.1`) under the intermediate, another root
/// with a leaf for the same names, two self-signed leaves, and the forged chains of the pin-bypass attack (an
/// untrusted leaf sent with the pinned intermediate appended).
final class TestCertificates: Sendable {
    let folder: String

    /// The root and the other root (PEM): the session's trust roots in these tests.
    var roots: String { path("roots.pem") }
    /// The good leaf then the intermediate, and its key.
    var goodChain: String { path("good-chain.pem") }
    var goodKey: String { path("good.key") }
    /// The intermediate, the CA certificate the tests pin (PEM and DER).
    var intermediate: String { path("intermediate.pem") }
    var intermediateDER: String { path("intermediate.cer") }
    /// The other root (PEM): trusted, but in no good chain.
    var otherRoot: String { path("other.pem") }
    /// A self-signed leaf for `localhost` and `127.0.0.1`, its key, and a second one.
    var selfSigned: String { path("selfsigned.pem") }
    var selfSignedKey: String { path("selfsigned.key") }
    var otherSelfSigned: String { path("selfsigned2.pem") }
    var otherSelfSignedKey: String { path("selfsigned2.key") }
    /// A self-signed leaf with the pinned intermediate and its root appended (key: `selfSignedKey`).
    var forgedSelfSignedChain: String { path("forged-selfsigned-chain.pem") }
    /// A leaf of the other (trusted) root, with that root and the pinned intermediate appended (key: `otherLeafKey`):
    /// it verifies, through the other root, and the pinned intermediate is only in the list the server sent.
    var forgedTrustedChain: String { path("forged-trusted-chain.pem") }
    var otherLeafKey: String { path("otherleaf.key") }

    func path(_ name: String) -> String { "\(folder)/\(name)" }

    /// The certificates of this test process, made on first use.
    static func shared() throws -> TestCertificates { try made.get() }

    private static let made = Result { try TestCertificates() }

    private init() throws {
        folder = try makeTemporaryFolder()
        let script = #"""
            set -e
            cd "$PKI"
            exec 2>openssl.log
            ca() {
              openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.pem" -days 3650 \
                -subj "$2" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
            }
            issue() {
              openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2"
              printf '%s\n' "$4" > "$1.ext"
              openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial -days 3650 -sha256 -extfile "$1.ext" -out "$1.pem"
            }
            selfsigned() {
              openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.pem" -days 3650 \
                -subj "$2" -addext subjectAltName=DNS:localhost,IP:127.0.0.1
            }
            LEAF='basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth
            subjectAltName=DNS:localhost,IP:127.0.0.1'
            ca root "/O=WireClient Tests/CN=Root"
            ca other "/O=WireClient Tests/CN=Other Root"
            issue intermediate "/O=WireClient Tests/CN=Intermediate" root 'basicConstraints=critical,CA:TRUE
            keyUsage=critical,keyCertSign,cRLSign'
            issue good "/CN=localhost" intermediate "$LEAF"
            issue otherleaf "/O=Other/CN=localhost" other "$LEAF"
            selfsigned selfsigned "/O=Self Signed/CN=localhost"
            selfsigned selfsigned2 "/O=Self Signed 2/CN=localhost"
            cat good.pem intermediate.pem > good-chain.pem
            cat root.pem other.pem > roots.pem
            cat selfsigned.pem intermediate.pem root.pem > forged-selfsigned-chain.pem
            cat otherleaf.pem other.pem intermediate.pem > forged-trusted-chain.pem
            openssl x509 -in intermediate.pem -outform DER -out intermediate.cer
            """#
        try runPKIScript(script, in: folder)
    }

    /// The DER bytes of the first certificate of a PEM file.
    func der(_ pemFile: String) throws -> Data {
        let text = try String(contentsOfFile: pemFile, encoding: .utf8)
        let body = text.components(separatedBy: "-----BEGIN CERTIFICATE-----")[1].components(
            separatedBy: "-----END CERTIFICATE-----")[0]
        guard let der = Data(base64Encoded: body.filter { !$0.isWhitespace }) else {
            throw OpenSSLFailed(message: "bad PEM \(pemFile)")
        }
        return der
    }
}

/// The `openssl` tool could not make the test certificates.
struct OpenSSLFailed: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Runs a certificate-making bash script (written indented inside a Swift literal) with `$PKI` set to `folder`; the
/// script sends openssl's errors to `openssl.log`, which a failure quotes.
func runPKIScript(_ script: String, in folder: String) throws {
    let status = try runBash(script.replacingOccurrences(of: "\n            ", with: "\n"), environment: ["PKI": folder])
    guard status == 0 else {
        let log = (try? String(contentsOfFile: folder + "/openssl.log", encoding: .utf8)) ?? ""
        throw OpenSSLFailed(message: "openssl exited \(status): \(log)")
    }
}
