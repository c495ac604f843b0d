// One-line wrappers over system calls with constants from the kernel's headers or GNU extensions.
#define _GNU_SOURCE
#include "CSystem.h"

#ifdef __linux__
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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
int CSystem_openTUN(const char *name) {
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    struct ifreq request;
    memset(&request, 0, sizeof request);
    request.ifr_flags = IFF_TUN | IFF_NO_PI;
    strncpy(request.ifr_name, name, IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &request) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}
long CSystem_sendDescriptors(int socket, const int *fds, int count, const void *data, unsigned long length) {
    char control[CMSG_SPACE(sizeof(int) * 8)];
    if (count < 0 || count > 8) { errno = EINVAL; return -1; }
    struct iovec part = { (void *)data, length };
    struct msghdr message;
    memset(&message, 0, sizeof message);
    memset(control, 0, sizeof control);
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    if (count > 0) {
        message.msg_control = control;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * count);
        memcpy(CMSG_DATA(header), fds, sizeof(int) * count);
    }
    return sendmsg(socket, &message, MSG_NOSIGNAL);
}
long CSystem_receiveDescriptors(int socket, int *fds, int capacity, int *received, void *data, unsigned long length) {
    char control[CMSG_SPACE(sizeof(int) * 8)];
    if (capacity < 0 || capacity > 8) { errno = EINVAL; return -1; }
    struct iovec part = { data, length };
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    *received = 0;
    long count = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (count < 0) return -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int carried = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *given = (int *)CMSG_DATA(header);
        for (int index = 0; index < carried; index++) {
            if (*received < capacity) fds[(*received)++] = given[index];
            else close(given[index]);
        }
    }
    return count;
}
#endif
