// CSystem: C library declarations Swift's Glibc module does not carry. No logic.
#ifndef CSYSTEM_H
#define CSYSTEM_H

#ifdef __linux__
#include <malloc.h>   // malloc_trim: return freed heap memory to the system
#endif

#endif
