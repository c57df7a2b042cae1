import Foundation
import Testing
import Wire
import WireClient
import WireTLS
import WireTestSupport

/// HTTP Digest authentication (RFC 7616): the response hash against the RFCs' own worked examples, the parsing of
/// challenge lists (malformed ones included), and a session answering a Python server's Digest challenges from the
/// hook's credentials, as NSURLSession does.
struct DigestAuthenticationTests {
    static func challenge(_ text: String) throws -> DigestChallenge {
        try #require(DigestChallenge.preferred(in: AuthenticationChallengeField.parse([text])))
    }

    /// RFC 7616 §3.9.1 (SHA-256 and MD5) and RFC 2617 §3.5 (MD5 with qop=auth): (challenge, user, password, method,
    /// uri, cnonce, response).
    static let examples: [(String, String, String, String, String, String, String)] = [
        (
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
            "Mufasa", "Circle of Life", "GET", "/dir/index.html", "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
            "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"
        ),
        (
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
            "Mufasa", "Circle of Life", "GET", "/dir/index.html", "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
            "8ca523f5e9506fed4657c9700eebdbec"
        ),
        (
            #"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#,
            "Mufasa", "Circle Of Life", "GET", "/dir/index.html", "0a4f113b", "6629fae49393a05397450978507c4ef1"
        ),
    ]

    @Test func theRFCExamplesResponses() throws {
        for (text, user, password, method, uri, cnonce, expected) in Self.examples {
            let digest = try Self.challenge(text)
            #expect(
                digest.response(user: user, password: password, method: method, uri: uri, clientNonce: cnonce, nonceCount: 1)
                    == expected, "\(text)")
            let header = digest.authorization(
                user: user, password: password, method: method, uri: uri, nonceCount: 1, clientNonce: cnonce)
            #expect(header.hasPrefix(#"Digest username="Mufasa", realm=""#))
            #expect(header.contains(#"response="\#(expected)""#) && header.contains("nc=00000001, qop=auth"))
            #expect(header.contains(#"cnonce="\#(cnonce)""#) && header.contains(#"uri="/dir/index.html""#))
            #expect(header.contains("opaque=\""))
        }
    }

    @Test func theNonceCountUserhashAndTheFormWithoutQOP() throws {
        let digest = try Self.challenge(#"Digest realm="r", nonce="n", algorithm=SHA-256, qop=auth, userhash=true"#)
        let header = digest.authorization(
            user: "u", password: "p", method: "GET", uri: "/", nonceCount: 0x1F, clientNonce: "c")
        #expect(header.contains("nc=0000001f"))
        // userhash: the name is H(user:realm).
        #expect(header.contains(#"username="\#(MessageDigest.hexDigest(Array("u:r".utf8), .sha256))""#))
        #expect(header.hasSuffix("algorithm=SHA-256, userhash=true"))
        // No qop offered: RFC 2069's response, no cnonce or nc sent.
        let old = try Self.challenge(#"Digest realm="r", nonce="n""#)
        let oldHeader = old.authorization(user: "u", password: "p", method: "GET", uri: "/x", clientNonce: "c")
        let ha1 = MessageDigest.hexDigest(Array("u:r:p".utf8), .md5)
        let ha2 = MessageDigest.hexDigest(Array("GET:/x".utf8), .md5)
        let expected = MessageDigest.hexDigest(Array((ha1 + ":n:" + ha2).utf8), .md5)
        #expect(oldHeader.contains("response=\"\(expected)\""))
        #expect(!oldHeader.contains("cnonce") && !oldHeader.contains("qop"))
        // -sess: the first hash covers the nonce and the client nonce.
        let session = try Self.challenge(#"Digest realm="r", nonce="n", algorithm=MD5-sess, qop="auth""#)
        #expect(session.isSession && session.algorithm == .md5)
        #expect(
            session.authorization(user: "u", password: "p", method: "GET", uri: "/", clientNonce: "c").contains(
                "algorithm=MD5-sess"))
    }

    @Test func challengeListsAreSplitAndUnsupportedOnesSkipped() throws {
        let fields = AuthenticationChallengeField.parse([
            #"Basic realm="a, b", Digest realm="r", nonce="n1", algorithm=SHA-999, qop=auth"#,
            #"Digest realm="r", qop="auth-int", nonce="n2", Negotiate abc==, Digest nonce="n3", realm="r\"q""#,
        ])
        #expect(fields.map(\.scheme) == ["basic", "digest", "digest", "negotiate", "digest"])
        #expect(fields[0].parameters["realm"] == "a, b")
        #expect(fields[3].token68 == "abc==")
        #expect(fields[4].parameters["realm"] == #"r"q"#)
        // SHA-999 and auth-int alone cannot be answered: the third Digest challenge is taken.
        #expect(DigestChallenge.preferred(in: fields)?.nonce == "n3")
        // Malformed input ends its challenge, never the process.
        for text in [
            "", ",,,", "Digest", #"Digest realm="unterminated"#, "Digest =x", "@@@, Digest realm=r, nonce=n",
            String(repeating: "@,", count: 100_000), "Digest realm=\"\\", String(repeating: "Digest ", count: 10_000),
        ] {
            _ = AuthenticationChallengeField.parse([text])
        }
        #expect(DigestChallenge.preferred(in: AuthenticationChallengeField.parse(["@@@, Digest realm=r, nonce=n"]))?.nonce == "n")
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("WireTests/Resources/digest_peer.py").path

    @Test(.sharedIO(minutes: 1))
    func aSessionAnswersDigestFromTheHooksCredentials() async throws {
        let folder = try makeTemporaryFolder()
        let (process, port) = try await PythonPeer.start(script: Self.script, folder: folder)
        defer {
            kill(process.processIdentifier, SIGKILL)
            try? FileManager.default.removeItem(atPath: folder)
        }
        let manager = rawDataManager()
        let seen = Recorder<AuthenticationChallenge>()
        manager.taskDidReceiveAuthenticationChallenge = { _, challenge in
            seen.record(challenge)
            return .useCredential(user: "alice", password: "s3cret")
        }
        // (path, the body the server answers with once it has checked the answer)
        let cases = [
            ("/digest/MD5/a?q=1", "ok digest MD5 nc=00000001 uri=/digest/MD5/a?q=1"),
            ("/digest/SHA-256/b", "ok digest SHA-256 nc=00000001 uri=/digest/SHA-256/b"),
            ("/digest/SHA-256-sess/c", "ok digest SHA-256-sess nc=00000001 uri=/digest/SHA-256-sess/c"),
            ("/digest/SHA-512-256/d", "ok digest SHA-512-256 nc=00000001 uri=/digest/SHA-512-256/d"),
            ("/noqop/e", "ok digest MD5 nc=- uri=/noqop/e"),
            // Basic, Digest MD5 and Digest SHA-256 offered: Digest, the first of them.
            ("/both/f", "ok digest MD5 nc=00000001 uri=/both/f"),
            // A stale nonce: answered again with the new one, not counted as a refusal.
            ("/stale/g", "ok digest SHA-256 nc=00000001 uri=/stale/g"),
        ]
        for (path, expected) in cases {
            let result = try await manager.data(for: ClientRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!))
            #expect(result.response?.statusCode == 200, "\(path)")
            #expect(String(decoding: result.data ?? Data(), as: UTF8.self) == expected, "\(path)")
        }
        let digestSpaces = seen.all.filter { $0.scheme == "digest" }
        #expect(digestSpaces.count == cases.count + 1)
        #expect(digestSpaces.allSatisfy { $0.realm == "wire-tests@127.0.0.1" })
        #expect(seen.all.allSatisfy { $0.previousFailureCount == 0 })

        // Wrong credentials: refused once, not sent again; the 401 is delivered.
        let wrong = rawDataManager()
        let failures = Recorder<Int>()
        wrong.taskDidReceiveAuthenticationChallenge = { _, challenge in
            failures.record(challenge.previousFailureCount)
            return .useCredential(user: "alice", password: "wrong")
        }
        let refused = try? await wrong.data(for: ClientRequest(url: URL(string: "http://127.0.0.1:\(port)/digest/MD5/x")!))
        #expect(refused?.response?.statusCode == 401 || refused == nil)
        #expect(failures.all == [0, 1])
    }
}
