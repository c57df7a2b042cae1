import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport
import WireTLS

/// The security policy on real connections: every policy (pinning mode × `allowInvalidCertificates` ×
/// `validatesDomainName` × what is pinned × enforced or report-only) against every certificate case of
/// `MatrixCertificates`, served by Wire's TLS server and by nginx. The session trusts the test roots (standing in for
/// the system's). Each test case starts one server of its kind for all the certificate cases (one port each) and runs
/// one task per certificate case through a new `SessionManager`.
///
/// The expected outcome is not asked of the library: `expected(_:_:)` is the policy's decision table (and, for
/// report-only, the rule `SecurityPolicy.PinEnforcement.reportOnly` documents) written out as a rule, over facts about
/// each chain written by hand from how the certificates were made (`facts(_:)`).
@Suite(.sharedIO(minutes: 1))
struct SecurityPolicyMatrixTests {
    typealias Case = MatrixCertificates.Case

    /// What a policy pins.
    enum Pin: String, Sendable {
        /// Nothing (the only choice in mode `.none`; in a pinning mode the policy is refused when set).
        case nothing
        /// The intermediate: the CA of the valid chains, and the certificate the forged chains append.
        case intermediate
        /// The leaf the server sends.
        case leaf
    }

    /// One policy of the matrix.
    struct Row: Sendable, CustomTestStringConvertible {
        let mode: SecurityPolicy.PinningMode
        let allowInvalid: Bool
        let validatesDomain: Bool
        let pin: Pin
        let reportOnly: Bool

        var testDescription: String {
            "\(mode) allowInvalid=\(allowInvalid) validatesDomain=\(validatesDomain) pin=\(pin)\(reportOnly ? " reportOnly" : "")"
        }

        /// Every flag combination of every mode, enforced and report-only; mode `.none` pins nothing.
        static let all: [Row] = [false, true].flatMap { reportOnly in
            [SecurityPolicy.PinningMode.none, .publicKey, .certificate].flatMap { mode in
                let pins: [Pin] = mode == .none ? [.nothing] : [.nothing, .intermediate, .leaf]
                return [false, true].flatMap { allowInvalid in
                    [true, false].flatMap { validatesDomain in
                        pins.map {
                            Row(
                                mode: mode, allowInvalid: allowInvalid, validatesDomain: validatesDomain, pin: $0,
                                reportOnly: reportOnly)
                        }
                    }
                }
            }
        }

        /// The policy for a server sending `certificate`.
        func policy(_ pki: MatrixCertificates, _ certificate: Case) throws -> SecurityPolicy {
            let pinned: Set<Data> =
                switch pin {
                case .nothing: []
                case .intermediate: [Data(try Certificate.load(file: pki.intermediate)[0].der)]
                case .leaf: [Data(try Certificate.load(file: pki.leaf(certificate))[0].der)]
                }
            var policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: pinned)
            policy.allowInvalidCertificates = allowInvalid
            policy.validatesDomainName = validatesDomain
            policy.pinEnforcement = reportOnly ? .reportOnly : .enforced
            return policy
        }
    }

    /// How a task ends.
    enum Outcome: Equatable, Sendable, CustomStringConvertible {
        /// 200 `ok`.
        case served
        /// 200 `ok`, and the manager's monitors were told of one pin mismatch (report-only).
        case servedReportingMismatch
        /// `.serverCertificateUntrusted` (−1202) with this `TLSError` reason underneath.
        case untrusted(TLSError.Reason)
        /// `setSecurityPolicy` threw `.invalidSecurityPolicy` (no task runs).
        case refusedWhenSet
        /// Anything else.
        case other(String)

        var description: String {
            switch self {
            case .served: "served"
            case .servedReportingMismatch: "servedReportingMismatch"
            case .untrusted(let reason): "untrusted(\(reason))"
            case .refusedWhenSet: "refusedWhenSet"
            case .other(let text): "other(\(text))"
            }
        }
    }

    /// What OpenSSL makes of a case's chain, from how `MatrixCertificates` made it. Verdicts are OpenSSL's first
    /// error with the host name left aside; nil when the chain verifies.
    struct Facts {
        /// Verified against the session's roots (`Root`, `Other Root`).
        let sessionVerdict: TLSError.Reason?
        /// Whether the path verified against the session's roots contains the intermediate.
        let intermediateOnSessionPath: Bool
        /// Verified with the intermediate as the only anchor (partial chain: the path may end there).
        let intermediateAnchoredVerdict: TLSError.Reason?
        /// Verified with the leaf itself as the only anchor.
        let leafAnchoredVerdict: TLSError.Reason?
        /// Whether the leaf names `localhost`, the host of every URL.
        let namesHost: Bool
    }

    static func facts(_ certificate: Case) -> Facts {
        switch certificate {
        case .valid:
            // leaf ← intermediate ← root: the session's path runs through the intermediate; either pin is an anchor.
            Facts(
                sessionVerdict: nil, intermediateOnSessionPath: true, intermediateAnchoredVerdict: nil,
                leafAnchoredVerdict: nil, namesHost: true)
        case .expired:
            // Every path starts at the leaf, past its notAfter; dates are checked on anchors too.
            Facts(
                sessionVerdict: .certificateExpired, intermediateOnSessionPath: true,
                intermediateAnchoredVerdict: .certificateExpired, leafAnchoredVerdict: .certificateExpired, namesHost: true)
        case .wrongHost:
            // As valid, but the leaf names wrong.example only.
            Facts(
                sessionVerdict: nil, intermediateOnSessionPath: true, intermediateAnchoredVerdict: nil,
                leafAnchoredVerdict: nil, namesHost: false)
        case .selfSigned:
            // A lone self-signed leaf is its own issuer: trusted only when it is the anchor.
            Facts(
                sessionVerdict: .selfSigned, intermediateOnSessionPath: false, intermediateAnchoredVerdict: .selfSigned,
                leafAnchoredVerdict: nil, namesHost: true)
        case .untrustedRoot:
            // leaf ← rogue root, sent along: the path ends at a self-signed root nobody trusts.
            Facts(
                sessionVerdict: .selfSignedInChain, intermediateOnSessionPath: false,
                intermediateAnchoredVerdict: .selfSignedInChain, leafAnchoredVerdict: nil, namesHost: true)
        case .forged:
            // The rogue leaf's issuer is neither sent nor trusted; the appended intermediate did not sign it.
            Facts(
                sessionVerdict: .unknownIssuer, intermediateOnSessionPath: false, intermediateAnchoredVerdict: .unknownIssuer,
                leafAnchoredVerdict: nil, namesHost: true)
        case .forgedTrusted:
            // leaf ← other root (trusted): the path ends there without the appended intermediate, which did not sign
            // the leaf either.
            Facts(
                sessionVerdict: nil, intermediateOnSessionPath: false, intermediateAnchoredVerdict: .unknownIssuer,
                leafAnchoredVerdict: nil, namesHost: true)
        }
    }

    /// The decision table. A certificate verdict comes before the host name, and both before the pins.
    static func expected(_ row: Row, _ certificate: Case) -> Outcome {
        let facts = facts(certificate)
        let checksName = row.validatesDomain && !facts.namesHost
        if row.reportOnly {
            // Report-only needs pins to report on; and with allowInvalidCertificates in public-key mode the pins are
            // the only trust there is, which report-only would not enforce.
            if row.mode == .none || row.pin == .nothing || (row.mode == .publicKey && row.allowInvalid) { return .refusedWhenSet }
            // The chain is trusted the normal way (the session's roots, whatever the mode); the pins are only
            // compared with the path that was verified.
            if let verdict = facts.sessionVerdict { return .untrusted(verdict) }
            if checksName { return .untrusted(.hostnameMismatch) }
            return row.pin == .leaf || facts.intermediateOnSessionPath ? .served : .servedReportingMismatch
        }
        switch row.mode {
        case .none:
            // AF step 1: an untrusted certificate's domain name cannot be validated without pins.
            if row.allowInvalid && row.validatesDomain { return .refusedWhenSet }
            // curl's -k: anything goes.
            if row.allowInvalid { return .served }
            if let verdict = facts.sessionVerdict { return .untrusted(verdict) }
            return checksName ? .untrusted(.hostnameMismatch) : .served
        case .certificate:
            if row.pin == .nothing { return .refusedWhenSet }
            // The pins are the only anchors whatever allowInvalid says; a path ending at a pin contains it.
            let verdict = row.pin == .intermediate ? facts.intermediateAnchoredVerdict : facts.leafAnchoredVerdict
            if let verdict { return .untrusted(verdict) }
            return checksName ? .untrusted(.hostnameMismatch) : .served
        case .publicKey:
            if row.pin == .nothing { return .refusedWhenSet }
            if row.allowInvalid {
                // Nothing verified: the name is checked on the leaf, and only the leaf's key is compared.
                if checksName { return .untrusted(.hostnameMismatch) }
                return row.pin == .leaf ? .served : .untrusted(.pinMismatch)
            }
            if let verdict = facts.sessionVerdict { return .untrusted(verdict) }
            if checksName { return .untrusted(.hostnameMismatch) }
            return row.pin == .leaf || facts.intermediateOnSessionPath ? .served : .untrusted(.pinMismatch)
        }
    }

    /// The certificate cases a row meets: pinning a forged chain's own leaf is trusting the attacker's certificate
    /// on purpose, not a forgery, so forged chains meet only the intermediate pin (and no pin in mode `.none`).
    static func cases(for row: Row) -> [Case] {
        Case.allCases.filter { row.pin != .leaf || ($0 != .forged && $0 != .forgedTrusted) }
    }

    /// The table itself says what issue 15 asks: with pins enforced, both forged chains fail in every pinning mode.
    @Test func theTableRefusesTheForgedChainsInEveryPinningModeAndAcceptsTheValidChain() {
        for row in Row.all where row.mode != .none && row.pin != .nothing && !row.reportOnly {
            for forged in [Case.forged, .forgedTrusted] where Self.cases(for: row).contains(forged) {
                let outcome = Self.expected(row, forged)
                guard case .untrusted = outcome else {
                    Issue.record("\(row.testDescription) \(forged): \(outcome)")
                    continue
                }
            }
            #expect(
                Self.expected(row, .valid)
                    == (row.mode == .publicKey && row.allowInvalid && row.pin == .intermediate
                        ? .untrusted(.pinMismatch) : .served),
                "\(row.testDescription)")
        }
        // Report-only refuses the untrusted forgery and lets the trusted one through, telling the monitors.
        for row in Row.all where row.reportOnly && Self.expected(row, .valid) != .refusedWhenSet && row.pin == .intermediate {
            #expect(Self.expected(row, .forged) == .untrusted(.unknownIssuer), "\(row.testDescription)")
            #expect(Self.expected(row, .forgedTrusted) == .servedReportingMismatch, "\(row.testDescription)")
        }
    }

    /// One policy against every certificate case on one server kind; a refused connection carries no request.
    @Test(arguments: MatrixServerKind.allCases, Row.all)
    func everyCertificateCase(server: MatrixServerKind, row: Row) async throws {
        let pki = try MatrixCertificates.shared()
        let cases = Self.cases(for: row)
        // A policy refused when set runs no task, whatever the certificate.
        if cases.allSatisfy({ Self.expected(row, $0) == .refusedWhenSet }) {
            for certificate in cases {
                let observed = try await outcome(pki, row, certificate, url: URL(string: "https://localhost:1/ok.txt")!)
                #expect(observed == .refusedWhenSet, "\(certificate): got \(observed)")
            }
            return
        }
        try await MatrixServers.with(server, pki) { servers in
            var accepted = 0
            for certificate in cases {
                let expected = Self.expected(row, certificate)
                let observed = try await outcome(pki, row, certificate, url: servers.url(certificate))
                #expect(observed == expected, "\(certificate): expected \(expected), got \(observed)")
                if observed == .served || observed == .servedReportingMismatch { accepted += 1 }
            }
            // A refused connection never carried a request (nginx logs a request once it has answered it).
            #expect(
                await eventually(within: .seconds(5)) { servers.served() == accepted },
                "\(servers.served()) requests reached HTTP, \(accepted) tasks succeeded")
        }
    }

    /// Sets the row's policy on a new manager trusting the test roots and runs one task to `url`.
    private func outcome(_ pki: MatrixCertificates, _ row: Row, _ certificate: Case, url: URL) async throws -> Outcome {
        var configuration = SessionConfiguration()
        var tls = TLSConfiguration()
        tls.trustRoots = .pemFile(pki.roots)
        configuration.tls = tls
        configuration.timeoutIntervalForRequest = .seconds(10)
        let reports = ReportRecorder()
        let manager = SessionManager(configuration: configuration, eventMonitors: [reports])
        manager.responseSerializer = HTTPResponseSerializer()
        let policy = try row.policy(pki, certificate)
        do throws(ClientError) {
            try manager.setSecurityPolicy(policy)
        } catch {
            guard error.code == .invalidSecurityPolicy else { return .other("set: \(error)") }
            return manager.securityPolicy == .default ? .refusedWhenSet : .other("the refused policy was kept")
        }
        do throws(ClientError) {
            let result = try await manager.data(for: ClientRequest(url: url))
            let body = String(decoding: result.data ?? Data(), as: UTF8.self)
            guard result.response?.statusCode == 200 && body == "ok" else {
                return .other("\(result.response?.statusCode ?? 0) \(body)")
            }
            // A report is queued on the delegate queue during the handshake, before the request: it is out once
            // the queue has run what it held when the task completed.
            await withCheckedContinuation { done in manager.delegateQueue.async { done.resume() } }
            switch reports.all.map(\.mismatch.reason) {
            case []: return .served
            case [.pinMismatch]: return .servedReportingMismatch
            case let other: return .other("served, reports \(other)")
            }
        } catch {
            guard error.code == .serverCertificateUntrusted, error.urlErrorCode == -1202, error.failingURL == url,
                let tls = error.underlying as? TLSError
            else { return .other("\(error)") }
            return .untrusted(tls.reason)
        }
    }
}
