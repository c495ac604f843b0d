// CLibXML2: parses an XML document with libxml2, loaded with dlopen the first time a document is
// parsed, and reports its elements as events. No policy logic.
//
// Loaded on demand rather than linked: libxml2 brings ICU and liblzma with it, ~1 MiB that every
// devproxy process kept resident for the one command that reads an Android network security config
// (docs/performance.md, "Run 27"). This header names no libxml2 type, so its users need no
// libxml2 headers.
#ifndef CLIBXML2_H
#define CLIBXML2_H

#include <stddef.h>

/// What the walk reports, in document order. `attributes` is name, value, name, value, ...,
/// NULL: namespace declarations first (`xmlns`, `xmlns:p`), then attributes, each name with its
/// prefix (`android:src`) as written. Text is character data and CDATA; comments, processing
/// instructions and entity references are skipped.
typedef struct CLibXML2_Events {
    void *context;
    void (*start)(void *context, const char *name, const char *const *attributes);
    void (*text)(void *context, const char *bytes, size_t length);
    void (*end)(void *context);
} CLibXML2_Events;

enum {
    CLibXML2_OK = 0,
    /// The document does not parse: `message` says why, `line` where.
    CLibXML2_Malformed = -1,
    /// libxml2 could not be loaded: `message` says what dlopen said.
    CLibXML2_Unavailable = -2,
};

/// Parses `length` bytes without network access, external entities or DTD loading, and walks
/// the document's elements. Thread-safe. `message` gets a NUL-terminated reason on failure.
int CLibXML2_parse(const char *bytes, size_t length, const CLibXML2_Events *events,
                   char *message, size_t messageSize, int *line);

#endif
