// One-line wrappers over system calls with constants from the kernel's headers or GNU extensions.
#define _GNU_SOURCE
#include "CSystem.h"

#ifdef __linux__
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <fcntl.h>

// SOL_IP and SOL_IPV6 are the protocol numbers (IPPROTO_IP, IPPROTO_IPV6) on Linux.

int CSystem_originalDestinationIPv4(int fd, void *address, socklen_t *length) {
    return getsockopt(fd, IPPROTO_IP, SO_ORIGINAL_DST, address, length);
}
int CSystem_originalDestinationIPv6(int fd, void *address, socklen_t *length) {
    return getsockopt(fd, IPPROTO_IPV6, IP6T_SO_ORIGINAL_DST, address, length);
}
int CSystem_setTransparentIPv4(int fd, int on) {
    return setsockopt(fd, IPPROTO_IP, IP_TRANSPARENT, &on, sizeof on);
}
int CSystem_setTransparentIPv6(int fd, int on) {
    return setsockopt(fd, IPPROTO_IPV6, IPV6_TRANSPARENT, &on, sizeof on);
}
int CSystem_openDirectForWriting(const char *path) {
    return open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
}
#endif
