import Synchronization
@_spi(Locking) import Wire

/// The server's TLS layer behind `HTTPServerConfiguration.tls`: one OpenSSL context loaded at
/// `start()`, and a `TLSStream` around every accepted connection.
final class TLSServerSecurity: ServerTransportSecurity {
    let configuration: TLSServerConfiguration
    private let context = Lock<Result<SSLContext, TLSError>?>(nil)
    /// The context once built: read on every accepted connection without taking the lock.
    private let built = AtomicLazyReference<SSLContext>()

    init(_ configuration: TLSServerConfiguration) {
        self.configuration = configuration
    }

    func prepare() throws {
        _ = try sslContext()
    }

    private func sslContext() throws(TLSError) -> SSLContext {
        if let ready = built.load() { return ready }
        let result = context.withLock { cached -> Result<SSLContext, TLSError> in
            if let cached { return cached }
            let made = Result { () throws(TLSError) -> SSLContext in try SSLContext.server(configuration) }
            cached = made
            return made
        }
        return built.storeIfNil(try result.get())
    }

    func wrap(_ stream: any ByteStream, handshakeTimeout: Duration) throws -> any ByteStream {
        let connection = try SSLConnection(server: try sslContext())
        return TLSStream(lower: stream, connection: connection, deadline: .after(handshakeTimeout))
    }
}

extension HTTPServerConfiguration {
    /// The TLS settings; setting them (with `import WireTLS`) makes the server speak HTTPS only.
    ///
    /// ```swift
    /// var configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "0.0.0.0", port: 8443))
    /// configuration.tls = TLSServerConfiguration(certificateChainFile: "cert.pem", privateKeyFile: "key.pem")
    /// ```
    public var tls: TLSServerConfiguration? {
        get { (transportSecurity as? TLSServerSecurity)?.configuration }
        set { transportSecurity = newValue.map { TLSServerSecurity($0) } }
    }
}
