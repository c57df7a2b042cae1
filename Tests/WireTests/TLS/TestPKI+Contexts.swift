import WireTLS

extension TestPKI {
    /// The two contexts a stream-level TLS test starts from: a client trusting the test root, and a server sending
    /// the good chain.
    func streamContexts() throws -> (client: SSLContext, server: SSLContext) {
        var clientTLS = TLSConfiguration()
        clientTLS.trustRoots = .pemFile(rootCertificate)
        return (
            try SSLContext.client(clientTLS),
            try SSLContext.server(TLSServerConfiguration(certificateChainFile: goodChain, privateKeyFile: goodKey))
        )
    }
}
