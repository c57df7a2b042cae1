import CWireOpenSSL
import Synchronization
import Wire

/// One configured `SSL_CTX`: trust store, versions, own certificate, callbacks. Built once per
/// configuration and shared by every connection made with it, on any loop.
///
/// OpenSSL allows an `SSL_CTX` to be shared by threads once it is configured: `SSL_new` only reads it (and counts
/// its reference atomically), and Wire changes nothing in it after `init`, so connections are made without a lock
/// of Wire's (one per accepted connection, on every loop).
package final class SSLContext: Sendable {
    // Safe to share: the pointer never changes after init, and neither does the context it points to (see above).
    private nonisolated(unsafe) let context: OpaquePointer

    private init(_ context: sending OpaquePointer) {
        self.context = context
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// Creates a connection (an `SSL`) from the context.
    func makeSSL() throws(TLSError) -> OpaquePointer {
        let ssl = SSL_new(context)
        guard let ssl else {
            throw TLSError(.handshakeFailed, "SSL_new failed", openSSLErrors: OpenSSLErrorQueue.drain().map(\.text))
        }
        return ssl
    }

    // MARK: Building

    /// A client context for `configuration`.
    package static func client(_ configuration: TLSConfiguration) throws(TLSError) -> SSLContext {
        let context = try newContext(
            TLS_client_method(), minimum: configuration.minimumVersion, maximum: configuration.maximumVersion)
        do throws(TLSError) {
            try setCiphers(context.raw, configuration)
            switch configuration.trustRoots {
            case .system where configuration.trustDirectory != nil:
                // The system's bundle file; the directories below replace its directory.
                guard SSL_CTX_set_default_verify_file(context.raw) == 1 else {
                    throw failure(.localCertificate, "cannot load the system trust store")
                }
            case .system:
                guard SSL_CTX_set_default_verify_paths(context.raw) == 1 else {
                    throw failure(.localCertificate, "cannot load the system trust store")
                }
            case .pemFile(let path):
                guard SSL_CTX_load_verify_locations(context.raw, path, nil) == 1 else {
                    throw failure(.localCertificate, "cannot load trust roots from \(path)")
                }
            case .der(let certificates):
                let store = SSL_CTX_get_cert_store(context.raw)
                for der in certificates {
                    guard let x509 = X509Reader.decoded(der) else {
                        throw failure(.localCertificate, "a trust root is not a DER certificate")
                    }
                    defer { X509_free(x509) }
                    guard X509_STORE_add_cert(store, x509) == 1 else {
                        throw failure(.localCertificate, "cannot add a trust root")
                    }
                }
            }
            if let directory = configuration.trustDirectory {
                guard SSL_CTX_load_verify_locations(context.raw, nil, directory) == 1 else {
                    throw failure(.localCertificate, "cannot use the certificate directory \(directory)")
                }
            }
            if configuration.certificateChainFile != nil || configuration.privateKeyFile != nil {
                guard let chain = configuration.certificateChainFile, let key = configuration.privateKeyFile else {
                    throw TLSError(.localCertificate, "a client certificate needs both a certificate file and a key file")
                }
                try useCertificate(context.raw, chain: chain, key: key)
            }
            // Always verify, so OpenSSL builds the chain and reports its verdict; the callback
            // decides whether a failure stops the handshake (it does not with `.none`).
            SSL_CTX_set_verify(context.raw, SSL_VERIFY_PEER) { ok, store in SSLConnection.verifyCallback(ok: ok, store: store) }
            c_wire_tls_client_session_cache(context.raw)
            SSL_CTX_sess_set_new_cb(context.raw) { ssl, session in SSLConnection.newSessionCallback(ssl: ssl, session: session) }
        } catch {
            SSL_CTX_free(context.raw)
            throw error
        }
        return SSLContext(context.raw)
    }

    /// A server context for `configuration`.
    package static func server(_ configuration: TLSServerConfiguration) throws(TLSError) -> SSLContext {
        let context = try newContext(
            TLS_server_method(), minimum: configuration.minimumVersion, maximum: configuration.maximumVersion)
        do throws(TLSError) {
            try useCertificate(context.raw, chain: configuration.certificateChainFile, key: configuration.privateKeyFile)
            c_wire_tls_server_alpn(context.raw)
            // Needed for resumption whenever client certificates may be verified.
            let sessionContext: [UInt8] = Array("wire".utf8)
            SSL_CTX_set_session_id_context(context.raw, sessionContext, UInt32(sessionContext.count))
            let caFile: String?
            var mode = SSL_VERIFY_NONE
            switch configuration.clientCertificates {
            case .none:
                caFile = nil
            case .optional(let file):
                caFile = file
                mode = SSL_VERIFY_PEER
            case .required(let file):
                caFile = file
                mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
            }
            if let caFile {
                guard SSL_CTX_load_verify_locations(context.raw, caFile, nil) == 1 else {
                    throw failure(.localCertificate, "cannot load client CA certificates from \(caFile)")
                }
                guard let names = SSL_load_client_CA_file(caFile) else {
                    throw failure(.localCertificate, "no client CA names in \(caFile)")
                }
                SSL_CTX_set_client_CA_list(context.raw, names)
                SSL_CTX_set_verify(context.raw, mode) { ok, store in SSLConnection.verifyCallback(ok: ok, store: store) }
            }
            // The chain the certificate is sent with, completed once here from the context's store (the client CAs,
            // if any) as OpenSSL would otherwise do on every full handshake when the file holds the leaf alone.
            // Then OpenSSL sends exactly that (nginx's SSL_MODE_NO_AUTO_CHAIN).
            c_wire_tls_fix_server_chain(context.raw)
            try setSessionResumption(context.raw, configuration.sessionResumption)
        } catch {
            SSL_CTX_free(context.raw)
            throw error
        }
        return SSLContext(context.raw)
    }

    /// Sets up how the server resumes sessions (see `TLSServerConfiguration.SessionResumption`). OpenSSL takes a
    /// cache size of 0 as "no limit" and counts lifetimes in whole seconds, so both are checked here; a lifetime is at
    /// most 7 days, the longest a TLS 1.3 ticket may live (RFC 8446 §4.6.1).
    private static func setSessionResumption(
        _ context: OpaquePointer, _ resumption: TLSServerConfiguration.SessionResumption
    ) throws(TLSError) {
        func seconds(_ lifetime: Duration) throws(TLSError) -> Int {
            let whole = lifetime.components.seconds
            guard whole >= 1, whole <= 604_800 else {
                throw TLSError(.invalidConfiguration, "a session lifetime of \(lifetime) is outside 1 second to 7 days")
            }
            return Int(whole)
        }
        switch resumption {
        case .serverCache(let capacity, let lifetime):
            guard capacity >= 1 else {
                throw TLSError(.invalidConfiguration, "a session cache of \(capacity) entries holds no session")
            }
            c_wire_tls_server_sessions(context, 0, capacity, try seconds(lifetime))
        case .tickets(let lifetime):
            c_wire_tls_server_sessions(context, 1, 0, try seconds(lifetime))
        case .disabled:
            c_wire_tls_server_sessions(context, 2, 0, 1)
        }
    }

    /// A bare pointer during construction, before the context is wrapped.
    private struct Raw {
        let raw: OpaquePointer
    }

    private static func newContext(_ method: OpaquePointer?, minimum: TLSVersion, maximum: TLSVersion) throws(TLSError) -> Raw {
        guard minimum <= maximum else {
            throw TLSError(.protocolVersion, "the minimum version \(minimum) is above the maximum \(maximum)")
        }
        guard let context = SSL_CTX_new(method) else { throw failure(.handshakeFailed, "SSL_CTX_new failed") }
        c_wire_tls_harden(context)
        TLSKeyLog.install(on: context)
        guard c_wire_tls_set_versions(context, Int32(minimum.rawValue), Int32(maximum.rawValue)) == 1 else {
            SSL_CTX_free(context)
            throw failure(.protocolVersion, "cannot limit the versions to \(minimum)–\(maximum)")
        }
        return Raw(raw: context)
    }

    /// The cipher list, TLS 1.3 suites and groups the configuration names, each as curl sets it.
    private static func setCiphers(_ context: OpaquePointer, _ configuration: TLSConfiguration) throws(TLSError) {
        if let list = configuration.cipherList, SSL_CTX_set_cipher_list(context, list) != 1 {
            throw failure(.cipherList, "failed setting cipher list: \(list)")
        }
        if let suites = configuration.tls13CipherSuites, SSL_CTX_set_ciphersuites(context, suites) != 1 {
            throw failure(.cipherList, "failed setting TLS 1.3 cipher suite: \(suites)")
        }
        if let groups = configuration.groups, c_wire_tls_set_groups(context, groups) != 1 {
            throw failure(.cipherList, "failed setting curves list: '\(groups)'")
        }
    }

    private static func useCertificate(_ context: OpaquePointer, chain: String, key: String) throws(TLSError) {
        guard SSL_CTX_use_certificate_chain_file(context, chain) == 1 else {
            throw failure(.localCertificate, "cannot load the certificate chain \(chain)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            throw failure(.localCertificate, "cannot load the private key \(key)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw failure(.localCertificate, "the private key \(key) does not match the certificate \(chain)")
        }
    }

    /// An error with whatever OpenSSL queued, emptying the queue.
    static func failure(_ reason: TLSError.Reason, _ detail: String) -> TLSError {
        TLSError(reason, detail, openSSLErrors: OpenSSLErrorQueue.drain().map(\.text))
    }
}
