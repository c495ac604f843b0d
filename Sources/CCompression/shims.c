#include "CCompression.h"

int CCompression_inflateInit2(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
