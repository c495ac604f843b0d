// CCompression: zlib, brotli and zstd for Swift, plus one-line wrappers (named
// CCompression_<original>) for the macros Swift cannot import. No logic lives here.
#ifndef CCOMPRESSION_H
#define CCOMPRESSION_H

#include <zlib.h>
#include <brotli/decode.h>
#include <brotli/encode.h>
#include <zstd.h>

// MARK: zlib macros (they pass ZLIB_VERSION and sizeof(z_stream) to the real functions)
int CCompression_inflateInit2(z_stream *stream, int windowBits);
int CCompression_deflateInit2(z_stream *stream, int level, int windowBits);

#endif
