/* A pinner in OpenSSL's verify callback, as native apps pin through libcurl's
 * CURLOPT_SSL_CTX_FUNCTION: the chain is checked while the handshake runs and refused with
 * X509_V_ERR_APPLICATION_VERIFICATION, which OpenSSL answers with a handshake_failure alert.
 * Usage: callback_pinner PROXY_PORT HOST PORT CAFILE. Prints "refused" or "connected". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* No chain is the pinned one here: every certificate is refused once OpenSSL has checked it. */
static int refuse_every_chain(int preverified, X509_STORE_CTX *store) {
    (void)preverified;
    X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in proxy = { .sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1])) };
    inet_pton(AF_INET, "127.0.0.1", &proxy.sin_addr);
    if (connect(fd, (struct sockaddr *)&proxy, sizeof proxy) != 0) return 2;
    char request[512], answer[512];
    int length = snprintf(request, sizeof request, "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n",
                          argv[2], argv[3], argv[2], argv[3]);
    if (write(fd, request, (size_t)length) != length) return 2;
    ssize_t got = read(fd, answer, sizeof answer - 1);
    if (got < 12 || strncmp(answer, "HTTP/1.1 200", 12) != 0) return 2;
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_locations(context, argv[4], NULL);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, refuse_every_chain);
    SSL *ssl = SSL_new(context);
    SSL_set_tlsext_host_name(ssl, argv[2]);
    SSL_set_fd(ssl, fd);
    int result = SSL_connect(ssl);
    puts(result == 1 ? "connected" : "refused");
    SSL_free(ssl);
    SSL_CTX_free(context);
    close(fd);
    return result == 1 ? 0 : 1;
}
