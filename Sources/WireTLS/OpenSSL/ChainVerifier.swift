import CWireOpenSSL
import Wire

/// Verifies a certificate chain outside any handshake, with OpenSSL's path building: the anchors
/// of one evaluation (the pinned certificates, another root set) without a context of their own.
enum ChainVerifier {
    /// The chain OpenSSL built from `chain[0]` (the leaf) through `chain[1...]` (untrusted
    /// intermediates) to an anchor of `anchors`, leaf first; or the first failure, as a handshake
    /// would report it.
    /// - Parameters:
    ///   - host: The name or IP literal the leaf must be valid for; nil checks no name.
    ///   - partialChain: Whether any anchor ends a path, not only a self-signed root (a pinned
    ///     intermediate, or a pinned self-signed leaf, is enough).
    static func verify(_ chain: [Certificate], anchors: TrustRoots, host: String?, partialChain: Bool)
        -> Result<[Certificate], TLSError>
    {
        guard let first = chain.first else {
            return .failure(TLSError(.noPeerCertificate, "the peer sent no certificate", host: host))
        }
        guard let store = X509_STORE_new() else { return .failure(SSLContext.failure(.handshakeFailed, "X509_STORE_new failed")) }
        defer { X509_STORE_free(store) }
        switch anchors {
        case .system:
            guard X509_STORE_set_default_paths(store) == 1 else {
                return .failure(SSLContext.failure(.localCertificate, "cannot load the system trust store"))
            }
        case .pemFile(let path):
            guard X509_STORE_load_file(store, path) == 1 else {
                return .failure(SSLContext.failure(.localCertificate, "cannot load trust roots from \(path)"))
            }
        case .der(let certificates):
            for der in certificates {
                guard let x509 = X509Reader.decoded(der) else {
                    return .failure(SSLContext.failure(.localCertificate, "a trust anchor is not a DER certificate"))
                }
                defer { X509_free(x509) }
                guard X509_STORE_add_cert(store, x509) == 1 else {
                    return .failure(SSLContext.failure(.localCertificate, "cannot add a trust anchor"))
                }
            }
        }
        if partialChain { X509_STORE_set_flags(store, UInt(X509_V_FLAG_PARTIAL_CHAIN)) }
        guard let leaf = X509Reader.decoded(first.der) else {
            return .failure(TLSError(.certificateInvalid, "the leaf is not a DER certificate", host: host))
        }
        defer { X509_free(leaf) }
        guard let untrusted = c_wire_tls_stack_new() else {
            return .failure(SSLContext.failure(.handshakeFailed, "sk_X509_new failed"))
        }
        defer { c_wire_tls_stack_free(untrusted) }
        for certificate in chain.dropFirst() {
            guard let x509 = X509Reader.decoded(certificate.der) else { continue }
            if c_wire_tls_stack_push(untrusted, x509) == 0 { X509_free(x509) }
        }
        guard let context = X509_STORE_CTX_new() else {
            return .failure(SSLContext.failure(.handshakeFailed, "X509_STORE_CTX_new failed"))
        }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf, untrusted) == 1 else {
            return .failure(SSLContext.failure(.handshakeFailed, "X509_STORE_CTX_init failed"))
        }
        // What a TLS client checks of a server's chain: the TLS server purpose, then the name.
        _ = X509_STORE_CTX_set_default(context, "ssl_server")
        if let host {
            let parameters = X509_STORE_CTX_get0_param(context)
            X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            let isIPAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
            let set =
                isIPAddress ? X509_VERIFY_PARAM_set1_ip_asc(parameters, host) : X509_VERIFY_PARAM_set1_host(parameters, host, 0)
            guard set == 1 else {
                return .failure(SSLContext.failure(.localCertificate, "cannot set \(host) as the name to verify"))
            }
        }
        if X509_verify_cert(context) == 1 {
            _ = OpenSSLErrorQueue.drain()
            return .success(X509Reader.certificates(stack: X509_STORE_CTX_get0_chain(context)))
        }
        let subject = X509_STORE_CTX_get_current_cert(context).map { X509Reader.name(X509_get_subject_name($0)) } ?? ""
        let failure = SSLConnection.VerifyFailure(
            code: X509_STORE_CTX_get_error(context), depth: X509_STORE_CTX_get_error_depth(context),
            subject: subject)
        return .failure(SSLConnection.verifyError(failure, host: host, openSSLErrors: OpenSSLErrorQueue.drain().map(\.text)))
    }

    /// Whether `certificate` names `host` (RFC 6125 rules of OpenSSL's `X509_check_host`/`X509_check_ip_asc`,
    /// no partial wildcards); nothing else about it is checked.
    static func matches(_ certificate: Certificate, host: String) -> Bool {
        guard let x509 = X509Reader.decoded(certificate.der) else { return false }
        defer { X509_free(x509) }
        let isIPAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        let result =
            isIPAddress
            ? X509_check_ip_asc(x509, host, 0)
            : X509_check_host(x509, host, host.utf8.count, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS), nil)
        return result == 1
    }
}
