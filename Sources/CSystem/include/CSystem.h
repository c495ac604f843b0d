// CSystem: C library declarations Swift's Glibc module does not carry. No logic.
#ifndef CSYSTEM_H
#define CSYSTEM_H

#ifdef __linux__
#include <malloc.h>   // malloc_trim: return freed heap memory to the system
// glibc declares strcasestr only under _GNU_SOURCE, which Swift's Glibc module does not set.
// The session store's filters use it for case-insensitive literal search.
char *strcasestr(const char *haystack, const char *needle);
#else
#include <string.h>
#endif

#endif
