// CSystem: C library declarations Swift's Glibc module does not carry, and thin wrappers over system calls
// whose structures are macros (ifreq, cmsghdr).
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

// A TUN device (<linux/if_tun.h>: TUNSETIFF with IFF_TUN | IFF_NO_PI, IP packets without a
// header) named `name` in the caller's network namespace; the descriptor, or -1 with errno.
int CSystem_openTUN(const char *name);

// Descriptors over a Unix socket (SCM_RIGHTS; CMSG_* are macros Swift cannot import), with
// `length` bytes of `data` beside them. Send: bytes sent or -1. Receive: bytes received or -1;
// `*received` says how many descriptors came (at most `capacity`).
long CSystem_sendDescriptors(int socket, const int *fds, int count, const void *data, unsigned long length);
long CSystem_receiveDescriptors(int socket, int *fds, int capacity, int *received, void *data, unsigned long length);
#endif

#endif
