#include "CCompression.h"

int CCompression_inflateInit2(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

int CCompression_deflateInit2(z_stream *stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
