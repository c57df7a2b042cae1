// The system's zlib (Debian's zlib1g-dev) for WireClient's content decoding, and a static inline shim for
// inflateInit2, a macro Swift cannot import. Only WireClient/Decoding/ZlibStream.swift and the tool's
// HdrHistogram log codec (WireTool/Bench/HistogramCoding.swift: compress2 and uncompress) import it.
#ifndef C_WIRE_ZLIB_SHIM_H
#define C_WIRE_ZLIB_SHIM_H

#include <zlib.h>

/// inflateInit2 with the library's version and stream size, as the macro passes them.
static inline int c_wire_zlib_inflate_init(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

#endif
