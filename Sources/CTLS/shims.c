// One-line wrappers for OpenSSL macros and deprecated calls. See CTLS.h.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "CTLS.h"

long CTLS_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
long CTLS_SSL_set_mode(SSL *ssl, long mode) { return SSL_set_mode(ssl, mode); }
int CTLS_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_min_proto_version(ctx, version); }
int CTLS_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_max_proto_version(ctx, version); }
int CTLS_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *cert) { return (int)SSL_CTX_add1_chain_cert(ctx, cert); }
int CTLS_SSL_add1_chain_cert(SSL *ssl, X509 *cert) { return (int)SSL_add1_chain_cert(ssl, cert); }
long CTLS_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
int CTLS_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
long CTLS_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*cb)(SSL *, int *, void *)) { return SSL_CTX_set_tlsext_servername_callback(ctx, cb); }
long CTLS_SSL_CTX_set_tlsext_servername_arg(SSL_CTX *ctx, void *arg) { return SSL_CTX_set_tlsext_servername_arg(ctx, arg); }
int CTLS_SSL_set_app_data(SSL *ssl, void *data) { return SSL_set_app_data(ssl, data); }
void *CTLS_SSL_get_app_data(const SSL *ssl) { return SSL_get_app_data(ssl); }
int CTLS_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list) { return (int)SSL_CTX_set1_groups_list(ctx, list); }
long CTLS_SSL_set_tmp_dh_auto(SSL *ssl, long onoff) { return SSL_set_dh_auto(ssl, onoff); }
long CTLS_SSL_CTX_sess_number(SSL_CTX *ctx) { return SSL_CTX_sess_number(ctx); }

uint64_t CTLS_SSL_OP_NO_COMPRESSION(void) { return SSL_OP_NO_COMPRESSION; }
uint64_t CTLS_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
uint64_t CTLS_SSL_OP_IGNORE_UNEXPECTED_EOF(void) { return SSL_OP_IGNORE_UNEXPECTED_EOF; }
uint64_t CTLS_SSL_OP_NO_TICKET(void) { return SSL_OP_NO_TICKET; }
uint64_t CTLS_SSL_OP_CIPHER_SERVER_PREFERENCE(void) { return SSL_OP_CIPHER_SERVER_PREFERENCE; }
uint64_t CTLS_SSL_OP_PRIORITIZE_CHACHA(void) { return SSL_OP_PRIORITIZE_CHACHA; }

unsigned long CTLS_XN_FLAG_ONELINE(void) { return XN_FLAG_ONELINE; }

long CTLS_BIO_get_mem_data(BIO *bio, char **pp) { return BIO_get_mem_data(bio, pp); }
long CTLS_BIO_set_nbio(BIO *bio, long nonblocking) { return BIO_set_nbio(bio, nonblocking); }
int CTLS_BIO_reset(BIO *bio) { return (int)BIO_reset(bio); }
long CTLS_BIO_set_write_buffer_size(BIO *bio, long size) { return BIO_set_write_buffer_size(bio, size); }
long CTLS_BIO_set_read_buffer_size(BIO *bio, long size) { return BIO_set_read_buffer_size(bio, size); }
long CTLS_BIO_buffer_peek(BIO *bio, void *into, long count) { return BIO_buffer_peek(bio, into, count); }
int CTLS_BIO_flush(BIO *bio) { return (int)BIO_flush(bio); }
int CTLS_BIO_should_retry(BIO *bio) { return BIO_should_retry(bio); }
long CTLS_BIO_wpending(BIO *bio) { return (long)BIO_wpending(bio); }

FILE *CTLS_stdout(void) { return stdout; }
FILE *CTLS_stderr(void) { return stderr; }

void CTLS_OPENSSL_free(void *ptr) { OPENSSL_free(ptr); }

int CTLS_init_without_atexit(void) {
    return OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
}

STACK_OF(X509) *CTLS_sk_X509_new_null(void) { return sk_X509_new_null(); }
int CTLS_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
int CTLS_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *CTLS_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
void CTLS_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
void CTLS_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
int CTLS_sk_GENERAL_NAME_num(const GENERAL_NAMES *names) { return sk_GENERAL_NAME_num(names); }
GENERAL_NAME *CTLS_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index) { return sk_GENERAL_NAME_value(names, index); }
void CTLS_GENERAL_NAMES_free(GENERAL_NAMES *names) { GENERAL_NAMES_free(names); }
int CTLS_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *stack) { return sk_OPENSSL_STRING_num(stack); }
char *CTLS_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *stack, int index) { return sk_OPENSSL_STRING_value(stack, index); }
int CTLS_sk_X509_NAME_num(const STACK_OF(X509_NAME) *stack) { return sk_X509_NAME_num(stack); }
X509_NAME *CTLS_sk_X509_NAME_value(const STACK_OF(X509_NAME) *stack, int index) {
    return sk_X509_NAME_value(stack, index);
}

void CTLS_X509V3_set_ctx_nodb(X509V3_CTX *ctx) { X509V3_set_ctx_nodb(ctx); }

EVP_PKEY *CTLS_EVP_PKEY_new_legacy_ec(const EC_GROUP *group) {
    EC_KEY *ec = EC_KEY_new();
    if (ec == NULL) return NULL;
    if (EC_KEY_set_group(ec, group) != 1 || EC_KEY_generate_key(ec) != 1) { EC_KEY_free(ec); return NULL; }
    EVP_PKEY *pkey = EVP_PKEY_new();
    if (pkey == NULL || EVP_PKEY_assign_EC_KEY(pkey, ec) != 1) { EVP_PKEY_free(pkey); EC_KEY_free(ec); return NULL; }
    return pkey;
}
