import Foundation
import Testing

/// Certificates made for a test run with the `openssl` command-line tool, in a temporary folder:
/// a root, an intermediate under it, and leaves under the intermediate for every verification
/// case (good, expired, not yet valid, wrong host, client), plus a self-signed leaf and a leaf of
/// an untrusted root. Dates come from `openssl ca -startdate/-enddate`, so no clock is faked.
///
/// Made once per process (`TestPKI.shared()`); each file path is what a server or client is given.
final class TestPKI: Sendable {
    let folder: String

    /// The trusted root (PEM), for `--cacert` and `.pemFile`.
    var rootCertificate: String { path("root.pem") }
    var intermediateCertificate: String { path("intermediate.pem") }
    /// The good leaf (`localhost`, `127.0.0.1`, `::1`) followed by the intermediate.
    var goodChain: String { path("good-chain.pem") }
    var goodLeaf: String { path("good.pem") }
    var goodKey: String { path("good.key") }
    /// The good leaf alone: the intermediate is missing.
    var leafOnlyChain: String { path("good.pem") }
    var expiredChain: String { path("expired-chain.pem") }
    var expiredKey: String { path("expired.key") }
    var notYetValidChain: String { path("future-chain.pem") }
    var notYetValidKey: String { path("future.key") }
    /// Valid for `wrong.example` only.
    var wrongHostChain: String { path("wronghost-chain.pem") }
    var wrongHostKey: String { path("wronghost.key") }
    var selfSignedChain: String { path("selfsigned.pem") }
    var selfSignedKey: String { path("selfsigned.key") }
    /// A leaf of another root, sent with that root.
    var untrustedChain: String { path("untrusted-chain.pem") }
    var untrustedKey: String { path("untrusted.key") }
    /// A client certificate (clientAuth) under the intermediate.
    var clientChain: String { path("client-chain.pem") }
    var clientKey: String { path("client.key") }
    /// The root and intermediate, as a server's client-CA file.
    var clientCAs: String { path("cas.pem") }
    /// The intermediate in DER, as AFNetworking's pinned `.cer` files are.
    var intermediateDER: String { path("intermediate.cer") }
    /// The other root in DER: a certificate that is in none of the good chains.
    var otherRootDER: String { path("other.cer") }
    /// Two PEM certificates: the other root, then the intermediate (the one a good chain contains).
    var otherRootThenIntermediate: String { path("other-then-intermediate.pem") }
    /// Text that is neither PEM nor DER.
    var notACertificate: String { path("not-a-certificate.txt") }

    func path(_ name: String) -> String { "\(folder)/\(name)" }

    /// The PKI of this test process, made on first use; if the `openssl` tool cannot make it, every test that asks
    /// fails with the reason (the process goes on).
    static func shared() throws -> TestPKI { try made.get() }

    private static let made = Result { try TestPKI() }

    private init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("wire-pki-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try write(
            "ca.ext",
            """
            [ca]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            """)
        try write("good.ext", Self.leafExtensions("DNS:localhost, IP:127.0.0.1, IP:::1", usage: "serverAuth"))
        try write("wronghost.ext", Self.leafExtensions("DNS:wrong.example", usage: "serverAuth"))
        try write("client.ext", Self.leafExtensions("DNS:client.example", usage: "clientAuth"))
        for ca in ["root", "other"] {
            try openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", path("\(ca).key"), "-out", path("\(ca).pem"), "-days", "3650",
                "-subj", "/O=Wire Tests/CN=Wire Test \(ca == "root" ? "Root" : "Other Root")",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        }
        try makeDatabase("root")
        try makeDatabase("intermediate")
        try makeDatabase("other")
        try request("intermediate", subject: "/O=Wire Tests/CN=Wire Test Intermediate")
        try sign(
            "intermediate", by: "root", extensions: "ca.ext", section: "ca", start: "20200101000000Z", end: "20991231000000Z")
        let leaves: [(name: String, subject: String, ext: String, start: String, end: String, issuer: String)] = [
            ("good", "/CN=localhost", "good.ext", "20200101000000Z", "20991231000000Z", "intermediate"),
            ("expired", "/CN=expired.localhost", "good.ext", "20200101000000Z", "20210101000000Z", "intermediate"),
            ("future", "/CN=future.localhost", "good.ext", "20900101000000Z", "20991231000000Z", "intermediate"),
            ("wronghost", "/CN=wrong.example", "wronghost.ext", "20200101000000Z", "20991231000000Z", "intermediate"),
            ("client", "/CN=Wire Test Client", "client.ext", "20200101000000Z", "20991231000000Z", "intermediate"),
            ("untrusted", "/CN=localhost/O=Untrusted", "good.ext", "20200101000000Z", "20991231000000Z", "other"),
        ]
        for leaf in leaves {
            try request(leaf.name, subject: leaf.subject)
            try sign(leaf.name, by: leaf.issuer, extensions: leaf.ext, section: "leaf", start: leaf.start, end: leaf.end)
            let issuerPEM = leaf.issuer == "other" ? "other.pem" : "intermediate.pem"
            try write("\(leaf.name)-chain.pem", try read("\(leaf.name).pem") + read(issuerPEM))
        }
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", path("selfsigned.key"), "-out", path("selfsigned.pem"), "-days", "3650",
            "-subj", "/CN=localhost/O=Self Signed", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        try write("cas.pem", try read("root.pem") + read("intermediate.pem"))
        try openssl(["x509", "-in", path("intermediate.pem"), "-outform", "DER", "-out", path("intermediate.cer")])
        try openssl(["x509", "-in", path("other.pem"), "-outform", "DER", "-out", path("other.cer")])
        try write("other-then-intermediate.pem", try read("other.pem") + read("intermediate.pem"))
        try write("not-a-certificate.txt", "this is a shopping list, not a certificate\n")
    }

    private static func leafExtensions(_ names: String, usage: String) -> String {
        """
        [leaf]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature, keyEncipherment
        extendedKeyUsage = \(usage)
        subjectAltName = \(names)
        subjectKeyIdentifier = hash
        authorityKeyIdentifier = keyid
        """
    }

    private func makeDatabase(_ ca: String) throws {
        try FileManager.default.createDirectory(atPath: path("\(ca)-db"), withIntermediateDirectories: true)
        try write("\(ca)-db/index.txt", "")
        try write("\(ca)-db/serial", "1000\n")
        try write(
            "\(ca).cnf",
            """
            [ca]
            default_ca = this
            [this]
            dir = \(path("\(ca)-db"))
            database = $dir/index.txt
            serial = $dir/serial
            new_certs_dir = $dir
            certificate = \(path("\(ca).pem"))
            private_key = \(path("\(ca).key"))
            default_md = sha256
            policy = anything
            unique_subject = no
            email_in_dn = no
            [anything]
            commonName = optional
            organizationName = optional
            """)
    }

    private func request(_ name: String, subject: String) throws {
        try openssl([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", path("\(name).key"), "-out", path("\(name).csr"), "-subj", subject,
        ])
    }

    private func sign(_ name: String, by ca: String, extensions: String, section: String, start: String, end: String) throws {
        try openssl([
            "ca", "-batch", "-notext", "-config", path("\(ca).cnf"), "-in", path("\(name).csr"), "-out", path("\(name).pem"),
            "-extfile", path(extensions), "-extensions", section, "-startdate", start, "-enddate", end,
        ])
    }

    private func write(_ name: String, _ text: String) throws {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
    }

    private func read(_ name: String) throws -> String {
        try String(contentsOfFile: path(name), encoding: .utf8)
    }

    private func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OpenSSLToolFailed(arguments: arguments, message: String(decoding: message, as: UTF8.self))
        }
    }
}

/// The `openssl` tool failed while making test certificates.
struct OpenSSLToolFailed: Error, CustomStringConvertible {
    let arguments: [String]
    let message: String
    var description: String { "openssl \(arguments.joined(separator: " ")): \(message)" }
}
