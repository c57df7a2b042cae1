// OpenSSL 3 headers for WireTLS, and static inline `c_wire_tls_*` shims for what Swift cannot
// import: function-like macros (SSL_set_tlsext_host_name, BIO_set_retry_read, the
// stack accessors), composite constants (SSL_OP_*, XN_FLAG_RFC2253) and unions (GENERAL_NAME).
#ifndef C_WIRE_OPENSSL_SHIM_H
#define C_WIRE_OPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <string.h>
#include <time.h>

/// Sends `name` as the server name (SNI).
static inline int c_wire_tls_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// Bounds the protocol versions a context negotiates (0 means the library's limit).
static inline int c_wire_tls_set_versions(SSL_CTX *ctx, int min, int max) {
    if (SSL_CTX_set_min_proto_version(ctx, min) != 1) return 0;
    return (int)SSL_CTX_set_max_proto_version(ctx, max);
}

/// The key-exchange groups a context offers (a macro in OpenSSL).
static inline int c_wire_tls_set_groups(SSL_CTX *ctx, const char *list) {
    return (int)SSL_CTX_set1_groups_list(ctx, list);
}

/// Options every Wire context carries: no renegotiation (TLS 1.2), no compression, and
/// partial writes plus moving buffers, because records are written into memory BIOs.
static inline void c_wire_tls_harden(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
}

/// Completes a server's certificate chain once, from the context's store, as OpenSSL's automatic chaining does on
/// every full handshake when the certificate file holds the leaf alone (a chain that does not verify is kept as far
/// as it goes, the root included when found), then turns that per-handshake chaining off. A file that already holds
/// intermediates is sent as it is, as before: OpenSSL never chains automatically then.
static inline void c_wire_tls_fix_server_chain(SSL_CTX *ctx) {
    STACK_OF(X509) *chain = NULL;
    if (SSL_CTX_get0_chain_certs(ctx, &chain) == 1 && chain == NULL) {
        if (SSL_CTX_build_cert_chain(ctx, SSL_BUILD_CHAIN_FLAG_IGNORE_ERROR) <= 0) {
            ERR_clear_error();
            return; /* nothing changed: OpenSSL goes on chaining per handshake */
        }
        ERR_clear_error();
    }
    SSL_CTX_set_mode(ctx, SSL_MODE_NO_AUTO_CHAIN);
}

/// Client contexts keep sessions only through the new-session callback, never in OpenSSL's
/// internal cache; server contexts resume as `c_wire_tls_server_sessions` sets up.
static inline void c_wire_tls_client_session_cache(SSL_CTX *ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
}

/// How a server context resumes sessions (`TLSServerConfiguration.SessionResumption`):
/// 0, sessions kept in the context's own cache (at most `capacity`, for `seconds`), no stateless tickets: TLS 1.2
///    resumes by session ID, TLS 1.3 with tickets that only name a kept session (OpenSSL's stateful tickets);
/// 1, stateless tickets under the context's own keys, nothing kept;
/// 2, no resumption: no cache, no ticket.
static inline void c_wire_tls_server_sessions(SSL_CTX *ctx, int mode, long capacity, long seconds) {
    switch (mode) {
    case 0:
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ctx, capacity);
        break;
    case 1:
        SSL_CTX_clear_options(ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        break;
    default:
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_num_tickets(ctx, 0);
        break;
    }
    SSL_CTX_set_timeout(ctx, seconds);
}

/// Clears a BIO's retry flags, as every read or write callback does first (a macro in OpenSSL).
static inline void c_wire_tls_bio_clear_retry(BIO *bio) {
    BIO_clear_retry_flags(bio);
}

/// Marks a BIO's read as "retry once more bytes came", not end of file (a macro in OpenSSL).
static inline void c_wire_tls_bio_retry_read(BIO *bio) {
    BIO_set_retry_read(bio);
}

/// The reason part of a packed error code.
static inline int c_wire_tls_error_reason(unsigned long code) {
    return ERR_GET_REASON(code);
}

/// The library part of a packed error code.
static inline int c_wire_tls_error_library(unsigned long code) {
    return ERR_GET_LIB(code);
}

/// A new ex-data index on SSL objects, for the connection a callback belongs to.
static inline int c_wire_tls_new_ssl_ex_index(void) {
    return SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

/// The flags that print an X509_NAME as an RFC 2253 string.
static inline unsigned long c_wire_tls_rfc2253_flags(void) {
    return XN_FLAG_RFC2253;
}

/// The number of certificates in a stack (0 for NULL).
static inline int c_wire_tls_stack_count(const STACK_OF(X509) *stack) {
    return stack ? sk_X509_num(stack) : 0;
}

/// The certificate at `index` of a stack.
static inline X509 *c_wire_tls_stack_at(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

/// A new, empty certificate stack (free with c_wire_tls_stack_free), or NULL.
static inline STACK_OF(X509) *c_wire_tls_stack_new(void) {
    return sk_X509_new_null();
}

/// Appends `cert` to a stack, which takes the caller's reference; 0 on failure (the caller keeps it then).
static inline int c_wire_tls_stack_push(STACK_OF(X509) *stack, X509 *cert) {
    return sk_X509_push(stack, cert) > 0;
}

/// Frees a stack and the certificates it owns.
static inline void c_wire_tls_stack_free(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}

/// The subject alternative names of a certificate (free with c_wire_tls_names_free), or NULL.
static inline GENERAL_NAMES *c_wire_tls_alt_names(X509 *cert) {
    return (GENERAL_NAMES *)X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
}

static inline int c_wire_tls_names_count(const GENERAL_NAMES *names) {
    return sk_GENERAL_NAME_num(names);
}

/// One alternative name: its type (GEN_DNS, GEN_IPADD...) and its bytes (the name's own
/// storage, valid while `names` lives).
static inline int c_wire_tls_names_at(const GENERAL_NAMES *names, int index, const unsigned char **data, int *length) {
    const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, index);
    *data = NULL;
    *length = 0;
    if (name->type == GEN_DNS || name->type == GEN_IPADD || name->type == GEN_EMAIL || name->type == GEN_URI) {
        const ASN1_STRING *value = name->d.ia5;
        *data = ASN1_STRING_get0_data(value);
        *length = ASN1_STRING_length(value);
    }
    return name->type;
}

static inline void c_wire_tls_names_free(GENERAL_NAMES *names) {
    GENERAL_NAMES_free(names);
}

/// An ASN1_TIME as seconds since the Unix epoch; 0 on failure.
static inline int c_wire_tls_time_to_unix(const ASN1_TIME *time, long long *seconds) {
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (ASN1_TIME_to_tm(time, &tm) != 1) return 0;
    *seconds = (long long)timegm(&tm);
    return 1;
}

/// The server's ALPN choice: http/1.1 when the client offers it, otherwise no ALPN at all
/// (a client that offers only other protocols is still served, as HTTP/1.1 servers do).
static inline int c_wire_tls_select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                           const unsigned char *in, unsigned int inlen, void *arg) {
    static const unsigned char http11[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };
    (void)ssl; (void)arg;
    unsigned char *selected = NULL;
    unsigned char selectedLength = 0;
    if (SSL_select_next_proto(&selected, &selectedLength, http11, sizeof http11, in, inlen) == OPENSSL_NPN_NEGOTIATED) {
        *out = selected;
        *outlen = selectedLength;
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

static inline void c_wire_tls_server_alpn(SSL_CTX *ctx) {
    SSL_CTX_set_alpn_select_cb(ctx, c_wire_tls_select_http11, NULL);
}

/// Offers http/1.1 by ALPN; 0 on success, as SSL_set_alpn_protos.
static inline int c_wire_tls_client_alpn(SSL *ssl) {
    static const unsigned char http11[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };
    return SSL_set_alpn_protos(ssl, http11, sizeof http11);
}

#endif
