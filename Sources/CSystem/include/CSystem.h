// CSystem: C library declarations Swift's Glibc module does not carry. No logic.
#ifndef CSYSTEM_H
#define CSYSTEM_H

#ifdef __linux__
#include <malloc.h>   // malloc_trim, mallopt: return freed heap memory, tune the allocator
#include <sys/socket.h>

// A redirected connection's original destination (iptables/nftables REDIRECT): getsockopt with
// SO_ORIGINAL_DST (IPv4, <linux/netfilter_ipv4.h>) or IP6T_SO_ORIGINAL_DST (IPv6,
// <linux/netfilter_ipv6/ip6_tables.h>). The kernel headers clash with glibc's <netinet/in.h>
// in one module, so the calls live in shims.c.
int CSystem_originalDestinationIPv4(int fd, void *address, socklen_t *length);
int CSystem_originalDestinationIPv6(int fd, void *address, socklen_t *length);

// IP_TRANSPARENT / IPV6_TRANSPARENT on a listening socket (TPROXY: the accepted socket's local
// address is the original destination).
int CSystem_setTransparentIPv4(int fd, int on);
int CSystem_setTransparentIPv6(int fd, int on);

// open(path, O_WRONLY | O_DIRECT | O_CLOEXEC): writes that bypass the page cache. O_DIRECT is a
// GNU extension the Glibc module does not export (its value differs between architectures).
int CSystem_openDirectForWriting(const char *path);
#endif

#endif
