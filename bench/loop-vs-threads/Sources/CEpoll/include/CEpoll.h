// CEpoll: the Linux headers Swift's Glibc module does not carry. No logic.
#ifndef CEPOLL_H
#define CEPOLL_H

#include <sys/epoll.h>
#include <sys/eventfd.h>

#endif
