import Synchronization
@_spi(Locking) import Wire

/// The client's TLS layer behind `HTTPClientConfiguration.tls`: builds the OpenSSL context on
/// first use (so a configuration error surfaces as the request's `.localCertificate` error),
/// keeps the session cache, and wraps each new connection in a `TLSStream`.
final class TLSClientSecurity: ClientTransportSecurity {
    let configuration: TLSConfiguration
    let poolKey: String
    private let context = Lock<Result<SSLContext, TLSError>?>(nil)
    /// The configuration's shared cache, or one of this layer's own.
    let sessions: TLSSessionCache
    /// What of the configuration a session is keyed by, read once.
    private let sessionSettings: TLSSessionKey.Settings

    private static let nextIdentity = Atomic<Int>(0)

    init(_ configuration: TLSConfiguration) {
        self.configuration = configuration
        sessions = configuration.sessionCache ?? TLSSessionCache()
        sessionSettings = TLSSessionKey.Settings(configuration)
        poolKey = "tls#\(Self.nextIdentity.add(1, ordering: .relaxed).newValue)"
    }

    /// The OpenSSL context, built once.
    func sslContext() throws(TLSError) -> SSLContext {
        let result = context.withLock { cached -> Result<SSLContext, TLSError> in
            if let cached { return cached }
            let built = Result { () throws(TLSError) -> SSLContext in try SSLContext.client(configuration) }
            cached = built
            return built
        }
        return try result.get()
    }

    func secure(_ stream: LoopBound<any ByteStream>, host: String, port: Int, deadline: Deadline) async throws
        -> LoopBound<any ByteStream>
    {
        let context: SSLContext
        do { context = try sslContext() } catch {
            try? await stream.loop.submit { stream.value.close(error: error) }
            throw error
        }
        let loop = stream.loop
        let (secured, trust) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(LoopBound<any ByteStream>, TrustContext?), any Error>) in
            loop.execute {
                self.start(stream.value, context: context, host: host, port: port, deadline: deadline) { result in
                    continuation.resume(with: result.map { (LoopBound($0.0, loop: loop), $0.1) })
                }
            }
        }
        if let evaluate = configuration.deferredTrustEvaluation, let trust, let refusal = await evaluate(trust) {
            try? await loop.submit { secured.value.close(error: refusal) }
            throw refusal
        }
        return secured
    }

    /// Creates the TLS stream and starts its handshake; loop thread only.
    func start(
        _ lower: any ByteStream, context: SSLContext, host: String, port: Int, deadline: Deadline,
        completion: @escaping (Result<(any ByteStream, TrustContext?), TLSError>) -> Void
    ) {
        let connection: SSLConnection
        let defers = configuration.deferredTrustEvaluation != nil
        do {
            connection = try SSLConnection(
                client: context, host: host, verification: configuration.certificateVerification,
                deferringVerdict: defers)
        } catch {
            lower.close(error: error)
            completion(.failure(error))
            return
        }
        if configuration.resumesSessions {
            // A resumed session is checked as a new one is: the connection verifies the chain the session keeps
            // again, and the pins and hooks below run on that.
            let sessionKey = TLSSessionKey(host: host, port: port, serverName: connection.serverName, settings: sessionSettings)
            sessions.resume(connection, key: sessionKey)
            let sessions = self.sessions
            connection.onNewSession = { session in sessions.store(session, for: sessionKey) }
        }
        let configuration = self.configuration
        // The completion holds the stream until the handshake ends (it is dropped then, breaking
        // the cycle): nothing else owns a client stream before it is handed to the pool.
        var tls: TLSStream?
        tls = TLSStream(
            lower: lower, connection: connection, deadline: deadline,
            evaluateTrust: { connection in
                TrustEvaluation.evaluate(connection, host: host, port: port, configuration: configuration)
            },
            completion: { result in
                switch result {
                case .success:
                    // The deferred evaluator runs off the loop: what it needs is read here, on it.
                    let trust =
                        defers
                        ? TrustContext(
                            host: host, port: port, verifiedChain: CertificateChain(connection.verifiedChain()),
                            peerChain: CertificateChain(connection.peerChain()), verdict: connection.verdict,
                            verification: configuration.certificateVerification,
                            isSessionResumed: connection.isSessionResumed) : nil
                    if let stream = tls { completion(.success((stream, trust))) }
                case .failure(let error):
                    completion(.failure(error))
                }
            })
        _ = tls
    }
}

extension HTTPClientConfiguration {
    /// The TLS settings for `https` URLs; setting them (with `import WireTLS`) enables https.
    ///
    /// Each assignment makes a new TLS layer: its own OpenSSL context (built on the first https
    /// connection, so an unreadable file fails that request with `.localCertificate`), its own
    /// session cache (unless the configuration shares one), and pools of its own.
    ///
    /// ```swift
    /// var configuration = HTTPClientConfiguration()
    /// configuration.tls = TLSConfiguration()   // the system's roots, full verification
    /// ```
    public var tls: TLSConfiguration? {
        get { (transportSecurity as? TLSClientSecurity)?.configuration }
        set { transportSecurity = newValue.map { TLSClientSecurity($0) } }
    }
}

extension HTTPClientConfiguration {
    /// The TLS settings for `https` proxies that carry none of their own (`Proxy.tls`), such as one the environment
    /// names: the proxy's certificate is verified against the proxy's name with these, never with `tls`, which is
    /// for origins. Nil (the default) refuses an `https` proxy without settings of its own.
    ///
    /// ```swift
    /// var configuration = HTTPClientConfiguration()
    /// configuration.proxy = .environment()
    /// configuration.proxyTLS = TLSConfiguration()   // the system's roots for the proxy too
    /// ```
    public var proxyTLS: TLSConfiguration? {
        get { (proxyTransportSecurity as? TLSClientSecurity)?.configuration }
        set { proxyTransportSecurity = newValue.map { TLSClientSecurity($0) } }
    }
}

extension Proxy {
    /// The TLS settings for reaching this proxy when it is an `https` one (TLS to the proxy itself, verified against
    /// the proxy's name), apart from the origin's settings (`HTTPClientConfiguration.tls`), which TLS through the
    /// proxy's tunnels uses. Nil uses the client's `proxyTLS`.
    ///
    /// Each assignment makes a new TLS layer, and the proxy then differs from an otherwise equal one with another
    /// layer (their connections are not shared).
    ///
    /// ```swift
    /// var proxy = try Proxy(parsing: "https://proxy.internal:8443")
    /// var trust = TLSConfiguration()
    /// trust.trustRoots = .pemFile("/etc/ssl/proxy-ca.pem")
    /// proxy.tls = trust
    /// ```
    public var tls: TLSConfiguration? {
        get { (transportSecurity as? TLSClientSecurity)?.configuration }
        set { transportSecurity = newValue.map { TLSClientSecurity($0) } }
    }
}
