// CTLS: OpenSSL 3 headers for Swift, plus one-line wrappers (named CTLS_<original>) for the
// macros, variadic and deprecated functions that Swift cannot import. No logic lives here.
#ifndef CTLS_H
#define CTLS_H

#include <stdint.h>
#include <stdio.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/conf.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>

// MARK: SSL_CTX / SSL macros
long CTLS_SSL_CTX_set_mode(SSL_CTX *ctx, long mode);
long CTLS_SSL_set_mode(SSL *ssl, long mode);
int CTLS_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
int CTLS_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
int CTLS_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *cert);
int CTLS_SSL_add1_chain_cert(SSL *ssl, X509 *cert);
long CTLS_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);
int CTLS_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
long CTLS_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*cb)(SSL *, int *, void *));
long CTLS_SSL_CTX_set_tlsext_servername_arg(SSL_CTX *ctx, void *arg);
int CTLS_SSL_set_app_data(SSL *ssl, void *data);
void *CTLS_SSL_get_app_data(const SSL *ssl);
int CTLS_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list);
long CTLS_SSL_set_tmp_dh_auto(SSL *ssl, long onoff);
long CTLS_SSL_CTX_sess_number(SSL_CTX *ctx);

// MARK: SSL_OP_* constants (64-bit macros with casts)
uint64_t CTLS_SSL_OP_NO_COMPRESSION(void);
uint64_t CTLS_SSL_OP_NO_RENEGOTIATION(void);
uint64_t CTLS_SSL_OP_IGNORE_UNEXPECTED_EOF(void);
uint64_t CTLS_SSL_OP_NO_TICKET(void);
uint64_t CTLS_SSL_OP_CIPHER_SERVER_PREFERENCE(void);
uint64_t CTLS_SSL_OP_PRIORITIZE_CHACHA(void);

// MARK: name printing flags (composite macros)
unsigned long CTLS_XN_FLAG_ONELINE(void);

// MARK: BIO macros
long CTLS_BIO_get_mem_data(BIO *bio, char **pp);
long CTLS_BIO_set_nbio(BIO *bio, long nonblocking);
int CTLS_BIO_reset(BIO *bio);
long CTLS_BIO_set_write_buffer_size(BIO *bio, long size);
long CTLS_BIO_set_read_buffer_size(BIO *bio, long size);
long CTLS_BIO_buffer_peek(BIO *bio, void *into, long count);
int CTLS_BIO_flush(BIO *bio);
int CTLS_BIO_should_retry(BIO *bio);
long CTLS_BIO_wpending(BIO *bio);

// MARK: C standard streams (globals Swift 6 refuses as shared mutable state)
FILE *CTLS_stdout(void);
FILE *CTLS_stderr(void);

// MARK: memory
void CTLS_OPENSSL_free(void *ptr);
/// Initialises libcrypto and libssl without their atexit cleanup: called first thing, so a
/// connection thread still freeing a certificate while exit() runs finds OpenSSL's locks intact.
/// Returns 1 on success.
int CTLS_init_without_atexit(void);

// MARK: typed stacks
STACK_OF(X509) *CTLS_sk_X509_new_null(void);
int CTLS_sk_X509_push(STACK_OF(X509) *stack, X509 *cert);
int CTLS_sk_X509_num(const STACK_OF(X509) *stack);
X509 *CTLS_sk_X509_value(const STACK_OF(X509) *stack, int index);
void CTLS_sk_X509_free(STACK_OF(X509) *stack);
void CTLS_sk_X509_pop_free(STACK_OF(X509) *stack);
int CTLS_sk_GENERAL_NAME_num(const GENERAL_NAMES *names);
GENERAL_NAME *CTLS_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index);
void CTLS_GENERAL_NAMES_free(GENERAL_NAMES *names);
int CTLS_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *stack);
char *CTLS_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *stack, int index);
int CTLS_sk_X509_NAME_num(const STACK_OF(X509_NAME) *stack);
X509_NAME *CTLS_sk_X509_NAME_value(const STACK_OF(X509_NAME) *stack, int index);

// MARK: X509V3 macros
void CTLS_X509V3_set_ctx_nodb(X509V3_CTX *ctx);

// MARK: deprecated legacy EC keys: OpenSSL 3's provider path makes X509_set_pubkey cost
// ~300 µs for a fresh provider key; an EC_KEY-backed EVP_PKEY costs a few µs. `group` is built
// once by the caller (EC_GROUP_new_by_curve_name is an eighth of a leaf's cost).
EVP_PKEY *CTLS_EVP_PKEY_new_legacy_ec(const EC_GROUP *group);

#endif
