// CNGHTTP2: libnghttp2 headers for Swift, plus one-line wrappers (named CNGHTTP2_<original>) for the
// macros Swift cannot import (casts and shifts in their definitions). No logic lives here.
#ifndef CNGHTTP2_H
#define CNGHTTP2_H

#include <stdint.h>
#include <nghttp2/nghttp2.h>

// MARK: macro constants
int32_t CNGHTTP2_MAX_WINDOW_SIZE(void);
int32_t CNGHTTP2_INITIAL_WINDOW_SIZE(void);
int32_t CNGHTTP2_INITIAL_CONNECTION_WINDOW_SIZE(void);
uint32_t CNGHTTP2_DEFAULT_HEADER_TABLE_SIZE(void);
uint32_t CNGHTTP2_DEFAULT_MAX_SETTINGS(void);

#endif
