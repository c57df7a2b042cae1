import CWireOpenSSL
import Wire

/// The ex-data slot of an `SSL` that points back at its `SSLConnection`, for OpenSSL's callbacks.
private let connectionSlot = c_wire_tls_new_ssl_ex_index()

/// The method of every connection's BIO (see `SSLConnection`), made once and never freed, as OpenSSL's own methods
/// are static; nil only if OpenSSL could not allocate it, which fails each connection's creation instead.
private nonisolated(unsafe) let streamBIOMethod: OpaquePointer? = SSLConnection.makeBIOMethod()

/// One TLS connection's OpenSSL state: an `SSL` over one BIO of Wire's own (`streamBIOMethod`), so OpenSSL never
/// touches a descriptor and never blocks: "want read" only means "wait for more bytes".
///
/// The BIO copies nothing twice. Its read callback copies ciphertext straight out of the buffer the lower stream read
/// it into, which the caller lends for the call (`input:` below) and which keeps what OpenSSL did not take; its write
/// callback appends OpenSSL's records to one outgoing buffer, moved out whole by `takeCiphertext`. (Two memory BIOs
/// copied each byte in and out of their own growing buffer: twice per direction, and as much memory as one read.)
///
/// Owns its `SSL` (which owns the BIO) and frees it once, in `deinit`. Loop-confined: used
/// only by the `TLSStream` that owns it, on that stream's loop.
package final class SSLConnection {
    /// Where a handshake stands after a step.
    enum HandshakeStep {
        case complete
        case needsInput
        case failed(TLSError)
    }

    /// What a read produced.
    enum ReadStep {
        case bytes(Int)
        case needsInput
        case closeNotify
        case failed(TLSError)
    }

    /// The first certificate failure the verify callback saw.
    struct VerifyFailure {
        let code: Int32
        let depth: Int32
        let subject: String
    }

    private let ssl: OpaquePointer
    private let bio: OpaquePointer
    // The BIO's state, touched by its callbacks inside OpenSSL's calls; no access is held across one, so dynamic
    // exclusivity checks (a few per record) are left out.
    /// The ciphertext lent for the current call, and how much of it OpenSSL has read.
    @exclusivity(unchecked) private var lent = UnsafeRawBufferPointer(start: nil, count: 0)
    @exclusivity(unchecked) private var lentConsumed = 0
    /// Records OpenSSL wrote, not yet taken.
    @exclusivity(unchecked) private var output = ByteBuffer()
    /// Whether this is the client side.
    let isClient: Bool
    /// The host a client connects to.
    let host: String?
    /// The server name a client sends (SNI): its host, unless that is an IP literal.
    let serverName: String?
    /// Whether a certificate failure stops the handshake (false for `.none`).
    private let enforcesVerification: Bool
    /// The first verification failure, kept even when it did not stop the handshake.
    private(set) var verifyFailure: VerifyFailure?
    /// Takes a new session (a reference the receiver now owns) for later resumption.
    var onNewSession: ((OpaquePointer) -> Void)?
    /// Both chains, read once the handshake is complete: from OpenSSL after a full handshake, from the stored chain
    /// verified again after a resumed one.
    private var chains: (peer: [Certificate], verified: [Certificate])?

    /// A client connection to `host`, verifying as `verification` says; with `deferringVerdict` a
    /// verification failure is only recorded, for a deferred evaluator to decide on.
    package init(client context: SSLContext, host: String, verification: CertificateVerification, deferringVerdict: Bool = false)
        throws(TLSError)
    {
        (ssl, bio) = try Self.makeSSL(context)
        isClient = true
        self.host = host
        enforcesVerification = verification != .none && !deferringVerdict
        let isIPAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        // RFC 6066 §3: literal IP addresses are not permitted in the server name.
        serverName = isIPAddress ? nil : host
        attach()
        SSL_set_connect_state(ssl)
        if let serverName { _ = c_wire_tls_set_server_name(ssl, serverName) }
        _ = c_wire_tls_client_alpn(ssl)
        if verification != .noHostnameVerification {
            // Set on the verify parameters, so OpenSSL's verdict includes the name (X509_check_host
            // and X509_check_ip under the hood) and a mismatch fails the handshake itself.
            let parameters = SSL_get0_param(ssl)
            X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            let set =
                isIPAddress ? X509_VERIFY_PARAM_set1_ip_asc(parameters, host) : X509_VERIFY_PARAM_set1_host(parameters, host, 0)
            guard set == 1 else {
                throw SSLContext.failure(.localCertificate, "cannot set \(host) as the name to verify")
            }
        }
    }

    /// A server connection.
    package init(server context: SSLContext) throws(TLSError) {
        (ssl, bio) = try Self.makeSSL(context)
        isClient = false
        host = nil
        serverName = nil
        enforcesVerification = true
        attach()
        SSL_set_accept_state(ssl)
    }

    private static func makeSSL(_ context: SSLContext) throws(TLSError) -> (OpaquePointer, OpaquePointer) {
        let ssl = try context.makeSSL()
        guard let method = streamBIOMethod, let bio = BIO_new(method) else {
            SSL_free(ssl)
            throw SSLContext.failure(.handshakeFailed, "BIO_new failed")
        }
        BIO_set_init(bio, 1)
        // One BIO both ways: the SSL takes the one reference.
        SSL_set_bio(ssl, bio, bio)
        return (ssl, bio)
    }

    private func attach() {
        SSL_set_ex_data(ssl, connectionSlot, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        BIO_set_data(bio, nil)
        // A connection that ended without close_notify (the peer just closed, a reset, a timeout) keeps its session
        // resumable, as TLS 1.1 on allows (RFC 4346 §7.2.1); `SSL_free` would otherwise drop it from a server's cache,
        // TLS 1.0's rule. OpenSSL itself forgets a session whose connection sent or received a fatal alert.
        if SSL_is_init_finished(ssl) == 1 { SSL_set_shutdown(ssl, SSL_get_shutdown(ssl) | SSL_SENT_SHUTDOWN) }
        SSL_free(ssl)
    }

    /// Offers `session` for resumption (OpenSSL takes its own reference): if the server resumes it, the chain it
    /// keeps is verified again before the handshake counts as complete.
    func resume(_ session: OpaquePointer) {
        if SSL_set_session(ssl, session) != 1 { OpenSSLErrorQueue.clear() }
    }

    /// Whether the handshake resumed a session.
    var isSessionResumed: Bool { SSL_session_reused(ssl) == 1 }

    // MARK: Bytes in and out

    /// Runs one OpenSSL call with the readable bytes of `input` lent to the BIO's read callback, then consumes from
    /// `input` what OpenSSL read. What it did not read stays there, for the next call.
    private func lending<R>(_ input: inout ByteBuffer, _ call: () -> R) -> R {
        let (result, consumed) = input.withUnsafeReadableBytes { bytes in
            lent = bytes
            lentConsumed = 0
            let result = call()
            lent = UnsafeRawBufferPointer(start: nil, count: 0)
            return (result, lentConsumed)
        }
        if consumed > 0 { input.moveReaderIndex(forwardBy: consumed) }
        return result
    }

    /// The records OpenSSL produced for the peer since the last call, if any, moved out whole: the next ones go into
    /// the buffer `offerCiphertextBuffer` lends, or a small one of the connection's own.
    func takeCiphertext() -> ByteBuffer? {
        guard output.readableBytes > 0 else { return nil }
        var records = ByteBuffer()
        swap(&records, &output)
        return records
    }

    /// Whether records wait to be taken.
    var hasCiphertext: Bool { output.readableBytes > 0 }

    /// Offers an empty buffer to write the next records into, so that records of up to its capacity need no new
    /// allocation; the connection takes it (leaving `buffer` without storage) when it holds no records and no
    /// buffer at least as large.
    func offerCiphertextBuffer(_ buffer: inout ByteBuffer) {
        guard output.readableBytes == 0, buffer.readableBytes == 0, buffer.capacity > output.capacity else { return }
        swap(&output, &buffer)
        buffer.releaseStorage()
    }

    /// The largest number of bytes the records for `count` bytes of plaintext take: at most 16 KiB of plaintext a
    /// record, each with a header, a MAC or tag and at most a block of padding (256 bytes covers every suite).
    static func ciphertextCapacity(forPlaintext count: Int) -> Int {
        count + (count / (16 * 1024) + 1) * 256
    }

    // MARK: The BIO

    /// Builds `streamBIOMethod`.
    fileprivate static func makeBIOMethod() -> OpaquePointer? {
        let index = BIO_get_new_index()
        guard index > 0, let method = BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "Wire stream") else { return nil }
        guard
            BIO_meth_set_read_ex(method, { bio, bytes, count, read in SSLConnection.bioRead(bio, bytes, count, read) }) == 1,
            BIO_meth_set_write_ex(method, { bio, bytes, count, written in SSLConnection.bioWrite(bio, bytes, count, written) })
                == 1,
            // A flush (after each handshake flight) succeeds: the records are in `output` already. Other controls
            // (pending counts, kTLS, datagram options) are not supported, as a memory BIO answers to unknown ones.
            BIO_meth_set_ctrl(method, { _, command, _, _ in command == BIO_CTRL_FLUSH ? 1 : 0 }) == 1
        else {
            BIO_meth_free(method)
            return nil
        }
        return method
    }

    private static func owner(of bio: OpaquePointer?) -> SSLConnection? {
        guard let bio, let data = BIO_get_data(bio) else { return nil }
        return Unmanaged<SSLConnection>.fromOpaque(data).takeUnretainedValue()
    }

    /// Copies up to `count` bytes of the lent ciphertext to OpenSSL; with none left, asks it to retry once more
    /// bytes came (what a memory BIO with an EOF return of -1 says).
    private static func bioRead(
        _ bio: OpaquePointer?, _ bytes: UnsafeMutablePointer<CChar>?, _ count: Int, _ read: UnsafeMutablePointer<Int>?
    ) -> Int32 {
        c_wire_tls_bio_clear_retry(bio)
        read?.pointee = 0
        guard let connection = owner(of: bio), let bytes, let read else { return 0 }
        let available = connection.lent.count - connection.lentConsumed
        guard available > 0, let base = connection.lent.baseAddress else {
            c_wire_tls_bio_retry_read(bio)
            return 0
        }
        let taken = min(count, available)
        UnsafeMutableRawPointer(bytes).copyMemory(from: base + connection.lentConsumed, byteCount: taken)
        connection.lentConsumed += taken
        read.pointee = taken
        return 1
    }

    /// Appends a record (or part of one) to the outgoing buffer: it grows to take any amount, so a write is never
    /// short and never retried.
    private static func bioWrite(
        _ bio: OpaquePointer?, _ bytes: UnsafePointer<CChar>?, _ count: Int, _ written: UnsafeMutablePointer<Int>?
    ) -> Int32 {
        c_wire_tls_bio_clear_retry(bio)
        written?.pointee = 0
        guard let connection = owner(of: bio), let bytes, let written else { return 0 }
        if connection.output.capacity == 0 {
            // No buffer offered: one just large enough for this record and a few like it (a handshake flight).
            connection.output = ByteBuffer(capacity: Swift.max(count, 4096))
        }
        connection.output.writeBytes(UnsafeRawBufferPointer(start: bytes, count: count))
        written.pointee = count
        return 1
    }

    // MARK: Handshake

    /// Advances the handshake with the ciphertext in `input` (consuming what OpenSSL read of it).
    func handshake(input: inout ByteBuffer) -> HandshakeStep {
        let ssl = self.ssl
        let result = lending(&input) { SSL_do_handshake(ssl) }
        if result == 1 {
            if chains == nil, let error = readChains() { return .failed(error) }
            return .complete
        }
        let code = SSL_get_error(ssl, result)
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE { return .needsInput }
        return .failed(handshakeError())
    }

    // MARK: Application data

    /// Decrypts up to `maxBytes` into `buffer` (making that much room) from the ciphertext in `input`, consuming
    /// what OpenSSL read of it: all of it when the answer is `.needsInput`.
    func read(into buffer: inout ByteBuffer, maxBytes: Int, input: inout ByteBuffer) -> ReadStep {
        buffer.reserveWritableBytes(maxBytes)
        var count = 0
        let ssl = self.ssl
        let result = lending(&input) {
            buffer.withUnsafeWritableBytes { bytes in
                SSL_read_ex(ssl, bytes.baseAddress, Swift.min(bytes.count, maxBytes), &count)
            }
        }
        if result == 1 {
            buffer.moveWriterIndex(forwardBy: count)
            return .bytes(count)
        }
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .needsInput
        case SSL_ERROR_ZERO_RETURN:
            OpenSSLErrorQueue.clear()
            return .closeNotify
        default:
            return .failed(streamError())
        }
    }

    /// Encrypts the readable bytes of `buffer` into records for `takeCiphertext`.
    func write(_ buffer: ByteBuffer) -> TLSError? {
        buffer.withUnsafeReadableBytes { write($0) }
    }

    /// Encrypts all of `bytes` into records for `takeCiphertext` (the BIO takes any amount).
    func write(_ bytes: UnsafeRawBufferPointer) -> TLSError? {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
        var offset = 0
        while offset < bytes.count {
            var written = 0
            guard SSL_write_ex(ssl, base + offset, bytes.count - offset, &written) == 1 else { return streamError() }
            offset += written
        }
        return nil
    }

    /// Queues close_notify.
    func shutdown() {
        _ = SSL_shutdown(ssl)
        OpenSSLErrorQueue.clear()
    }

    // MARK: What was negotiated

    /// The negotiated version, cipher, ALPN, resumption and chains.
    func securityInfo(peer: [Certificate], verified: [Certificate]) -> TransportSecurityInfo {
        let version = String(cString: SSL_get_version(ssl))
        let cipher = SSL_get_current_cipher(ssl).map { String(cString: SSL_CIPHER_get_name($0)) } ?? ""
        var alpnBytes: UnsafePointer<UInt8>?
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &alpnBytes, &alpnLength)
        let alpn = alpnBytes.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(alpnLength)), as: UTF8.self) }
        return TransportSecurityInfo(
            protocolVersion: version, cipherSuite: cipher, applicationProtocol: alpn,
            isSessionResumed: SSL_session_reused(ssl) == 1,
            peerCertificates: peer.map(\.der), verifiedCertificates: verified.map(\.der))
    }

    /// The certificates the peer sent, leaf first (on a resumed session, those its first handshake received).
    func peerChain() -> [Certificate] {
        if let chains { return chains.peer }
        let sent = X509Reader.certificates(stack: SSL_get_peer_cert_chain(ssl))
        // A server's view of the client's chain leaves out the client's own certificate.
        if isClient { return sent }
        guard let leaf = SSL_get0_peer_certificate(ssl).flatMap({ X509Reader.certificate($0) }) else { return sent }
        return [leaf] + sent
    }

    /// The chain verification built, leaf to anchor (on a resumed session, built again by `verifyResumedChain`).
    func verifiedChain() -> [Certificate] {
        if let chains { return chains.verified }
        return X509Reader.certificates(stack: SSL_get0_verified_chain(ssl))
    }

    // MARK: Resumption

    /// Reads both chains once the handshake is complete. A resumed client session has had nothing verified: its
    /// stored chain is verified again, as the handshake would have; the error is what the handshake would have
    /// failed with.
    private func readChains() -> TLSError? {
        if isClient && isSessionResumed {
            switch verifyResumedChain() {
            case .success(let resumed): chains = resumed
            case .failure(let error): return error
            }
        } else {
            chains = (peerChain(), verifiedChain())
        }
        return nil
    }

    /// The chain the resumed session keeps verified again with this connection's store and parameters (its roots,
    /// the host name, the TLS server purpose) and its verify callback, which records the first failure and stops on
    /// it when verification is enforced, exactly as during a full handshake: OpenSSL verifies nothing when it
    /// resumes a session. A session made in this process keeps the chain its first handshake received (leaf first,
    /// decoded), which is why the cache keeps sessions in memory: one read from `i2d_SSL_SESSION` bytes would keep
    /// the leaf alone.
    private func verifyResumedChain() -> Result<(peer: [Certificate], verified: [Certificate]), TLSError> {
        guard let sent = SSL_get_peer_cert_chain(ssl), c_wire_tls_stack_count(sent) > 0, let leaf = c_wire_tls_stack_at(sent, 0),
            let sessionLeaf = SSL_get0_peer_certificate(ssl), X509_cmp(sessionLeaf, leaf) == 0
        else {
            return .failure(TLSError(.certificateInvalid, "the resumed session keeps no certificate chain", host: host))
        }
        guard let context = X509_STORE_CTX_new() else {
            return .failure(SSLContext.failure(.handshakeFailed, "X509_STORE_CTX_new failed"))
        }
        defer { X509_STORE_CTX_free(context) }
        // What OpenSSL's ssl_verify_cert_chain sets up: the context's store, the peer's list as the untrusted
        // certificates, the security level as the authentication level, the SSL as ex-data (for the callback), the
        // TLS server purpose, then the connection's own verify parameters (the host name among them).
        guard X509_STORE_CTX_init(context, SSL_CTX_get_cert_store(SSL_get_SSL_CTX(ssl)), leaf, sent) == 1,
            X509_STORE_CTX_set_ex_data(context, SSL_get_ex_data_X509_STORE_CTX_idx(), UnsafeMutableRawPointer(ssl)) == 1
        else {
            return .failure(SSLContext.failure(.handshakeFailed, "X509_STORE_CTX_init failed"))
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        X509_VERIFY_PARAM_set_auth_level(parameters, SSL_get_security_level(ssl))
        _ = X509_STORE_CTX_set_default(context, "ssl_server")
        _ = X509_VERIFY_PARAM_set1(parameters, SSL_get0_param(ssl))
        X509_STORE_CTX_set_verify_cb(context) { ok, store in SSLConnection.verifyCallback(ok: ok, store: store) }
        let verified = X509_verify_cert(context) == 1
        let result = X509_STORE_CTX_get_error(context)
        SSL_set_verify_result(ssl, Int(verified ? X509_V_OK : (result == X509_V_OK ? X509_V_ERR_UNSPECIFIED : result)))
        if !verified && enforcesVerification {
            let failure =
                verifyFailure ?? VerifyFailure(code: result, depth: X509_STORE_CTX_get_error_depth(context), subject: "")
            return .failure(Self.verifyError(failure, host: host, openSSLErrors: OpenSSLErrorQueue.drain().map(\.text)))
        }
        OpenSSLErrorQueue.clear()
        return .success(
            (X509Reader.certificates(stack: sent), X509Reader.certificates(stack: X509_STORE_CTX_get0_chain(context))))
    }

    /// OpenSSL's verdict on the peer's chain: nil when it verified.
    var verdict: TLSError? {
        if let verifyFailure { return Self.verifyError(verifyFailure, host: host, openSSLErrors: []) }
        let result = SSL_get_verify_result(ssl)
        guard result != X509_V_OK else { return nil }
        return Self.verifyError(VerifyFailure(code: Int32(result), depth: 0, subject: ""), host: host, openSSLErrors: [])
    }

    // MARK: Errors

    private func handshakeError() -> TLSError {
        let entries = OpenSSLErrorQueue.drain()
        let texts = entries.map(\.text)
        if enforcesVerification, let verifyFailure {
            return Self.verifyError(verifyFailure, host: host, openSSLErrors: texts)
        }
        if let alert = Self.alert(in: entries, openSSLErrors: texts) { return alert }
        let reasons = Set(entries.filter { $0.library == ERR_LIB_SSL }.map(\.reason))
        if !reasons.isDisjoint(with: [SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_NO_PROTOCOLS_AVAILABLE, SSL_R_UNSUPPORTED_SSL_VERSION]) {
            return TLSError(.protocolVersion, "no protocol version both sides allow", openSSLErrors: texts)
        }
        if reasons.contains(SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
            return TLSError(.noPeerCertificate, "the client sent no certificate and one is required", openSSLErrors: texts)
        }
        if !reasons.isDisjoint(with: [
            SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_RECORD_LENGTH_MISMATCH,
            SSL_R_HTTP_REQUEST, SSL_R_HTTPS_PROXY_REQUEST,
        ]) {
            return TLSError(.handshakeFailed, "the peer does not speak TLS", openSSLErrors: texts)
        }
        if reasons.contains(SSL_R_NO_SHARED_CIPHER) {
            return TLSError(.handshakeFailed, "no cipher suite both sides allow", openSSLErrors: texts)
        }
        return TLSError(
            .handshakeFailed, texts.last.map { "the handshake failed: \($0)" } ?? "the handshake failed", openSSLErrors: texts)
    }

    private func streamError() -> TLSError {
        let entries = OpenSSLErrorQueue.drain()
        let texts = entries.map(\.text)
        if let alert = Self.alert(in: entries, openSSLErrors: texts) { return alert }
        return TLSError(.protocolError, texts.last.map { "TLS record error: \($0)" } ?? "TLS record error", openSSLErrors: texts)
    }

    /// An alert the peer sent, which OpenSSL queues as `SSL_AD_REASON_OFFSET + alert`.
    private static func alert(in entries: [OpenSSLErrorQueue.Entry], openSSLErrors: [String]) -> TLSError? {
        guard
            let entry = entries.first(where: {
                $0.library == ERR_LIB_SSL && $0.reason >= SSL_AD_REASON_OFFSET && $0.reason < SSL_AD_REASON_OFFSET + 256
            })
        else {
            return nil
        }
        let code = entry.reason - SSL_AD_REASON_OFFSET
        var name = String(cString: SSL_alert_desc_string_long(code))
        // OpenSSL 3.0's table stops at TLS 1.2's alerts; name TLS 1.3's (RFC 8446 §6) ourselves.
        if name == "unknown" {
            name =
                [109: "missing extension", 116: "certificate required", 120: "no application protocol"][code]
                ?? "unknown (\(code))"
        }
        if code == SSL_AD_PROTOCOL_VERSION {
            return TLSError(
                .protocolVersion, "the peer refused the protocol version (alert \(name))", alert: name,
                openSSLErrors: openSSLErrors)
        }
        return TLSError(.alertReceived, "the peer sent the alert \"\(name)\"", alert: name, openSSLErrors: openSSLErrors)
    }

    static func verifyError(_ failure: VerifyFailure, host: String?, openSSLErrors: [String]) -> TLSError {
        let subject = failure.subject
        let what = subject.isEmpty ? "the peer's certificate" : "the certificate \(subject)"
        let openSSLText = String(cString: X509_verify_cert_error_string(Int(failure.code)))
        let (reason, detail): (TLSError.Reason, String) =
            switch failure.code {
            case X509_V_ERR_CERT_HAS_EXPIRED:
                (.certificateExpired, "\(what) has expired")
            case X509_V_ERR_CERT_NOT_YET_VALID:
                (.certificateNotYetValid, "\(what) is not yet valid")
            case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
                X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
                (.unknownIssuer, "no trusted issuer for \(what) (\(openSSLText))")
            case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
                (.selfSigned, "\(what) is self-signed and not trusted")
            case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
                (.selfSignedInChain, "the chain ends in the untrusted self-signed root \(subject.isEmpty ? "?" : subject)")
            case X509_V_ERR_HOSTNAME_MISMATCH:
                (.hostnameMismatch, "\(what) is not valid for the host name \(host ?? "?")")
            case X509_V_ERR_IP_ADDRESS_MISMATCH:
                (.ipAddressMismatch, "\(what) is not valid for the IP address \(host ?? "?")")
            default:
                (.certificateInvalid, "\(what) failed verification: \(openSSLText)")
            }
        return TLSError(reason, detail, subject: subject.isEmpty ? nil : subject, host: host, openSSLErrors: openSSLErrors)
    }

    // MARK: Callbacks from OpenSSL (on the loop thread, inside a call above)

    private static func connection(of ssl: OpaquePointer) -> SSLConnection? {
        SSL_get_ex_data(ssl, connectionSlot).map { Unmanaged<SSLConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Records the first failure; stops the handshake on it unless verification is off.
    static func verifyCallback(ok: Int32, store: OpaquePointer?) -> Int32 {
        guard let store, let raw = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
            let connection = connection(of: OpaquePointer(raw))
        else { return ok }
        guard ok == 0 else { return 1 }
        if connection.verifyFailure == nil {
            let subject = X509_STORE_CTX_get_current_cert(store).map { X509Reader.name(X509_get_subject_name($0)) } ?? ""
            connection.verifyFailure = VerifyFailure(
                code: X509_STORE_CTX_get_error(store), depth: X509_STORE_CTX_get_error_depth(store),
                subject: subject)
        }
        return connection.enforcesVerification ? 0 : 1
    }

    /// Hands a new session to the cache; 1 tells OpenSSL the reference was taken.
    static func newSessionCallback(ssl: OpaquePointer?, session: OpaquePointer?) -> Int32 {
        guard let ssl, let session, let sink = connection(of: ssl)?.onNewSession else { return 0 }
        sink(session)
        return 1
    }
}
