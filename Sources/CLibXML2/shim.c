// See include/CLibXML2.h. libxml2's functions are looked up with dlsym, never linked: a direct
// call would make the linker add libxml2 (and ICU) to every devproxy process.
#include "CLibXML2.h"

// Only Linux builds use it (PinningPolicy depends on it there); elsewhere Foundation's XMLParser
// reads the XML and this file compiles to nothing, so no libxml2 headers are needed.
#if defined(__linux__)

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#define CLIBXML2_NAME "libxml2.so.2"

static struct {
    xmlDocPtr (*readMemory)(const char *, int, const char *, const char *, int);
    void (*freeDoc)(xmlDocPtr);
    xmlNodePtr (*rootElement)(const xmlDoc *);
    void (*setStructuredErrorFunc)(void *, xmlStructuredErrorFunc);
} xml;
static char loadError[256];
static pthread_once_t loadOnce = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen(CLIBXML2_NAME, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(loadError, sizeof loadError, "%s", reason ? reason : "dlopen failed");
        return;
    }
    void (*initParser)(void) = (void (*)(void))dlsym(library, "xmlInitParser");
    xml.readMemory = (xmlDocPtr (*)(const char *, int, const char *, const char *, int))dlsym(library, "xmlReadMemory");
    xml.freeDoc = (void (*)(xmlDocPtr))dlsym(library, "xmlFreeDoc");
    xml.rootElement = (xmlNodePtr (*)(const xmlDoc *))dlsym(library, "xmlDocGetRootElement");
    xml.setStructuredErrorFunc = (void (*)(void *, xmlStructuredErrorFunc))dlsym(library, "xmlSetStructuredErrorFunc");
    if (!initParser || !xml.readMemory || !xml.freeDoc || !xml.rootElement || !xml.setStructuredErrorFunc) {
        snprintf(loadError, sizeof loadError, "%s lacks a function devproxy needs", CLIBXML2_NAME);
        xml.readMemory = NULL;
        return;
    }
    // Once, before any thread parses (libxml2's rule for multithreaded use).
    initParser();
}

static size_t length(const xmlChar *text) { return text ? strlen((const char *)text) : 0; }

/// Appends `prefix:name` (or `name`) at `*cursor`, NUL-terminated; returns where it starts.
static const char *appendName(char **cursor, const xmlChar *prefix, const xmlChar *name) {
    char *start = *cursor;
    if (prefix != NULL) {
        memcpy(*cursor, prefix, length(prefix));
        *cursor += length(prefix);
        *(*cursor)++ = ':';
    }
    memcpy(*cursor, name, length(name));
    *cursor += length(name);
    *(*cursor)++ = 0;
    return start;
}

/// An attribute's value is its text children joined: libxml2 has already replaced character and
/// predefined entity references in them.
static size_t valueLength(const xmlAttr *attribute) {
    size_t total = 0;
    for (const xmlNode *child = attribute->children; child != NULL; child = child->next)
        if (child->type == XML_TEXT_NODE) total += length(child->content);
    return total;
}

static const char *appendValue(char **cursor, const xmlAttr *attribute) {
    char *start = *cursor;
    for (const xmlNode *child = attribute->children; child != NULL; child = child->next) {
        if (child->type != XML_TEXT_NODE) continue;
        memcpy(*cursor, child->content, length(child->content));
        *cursor += length(child->content);
    }
    *(*cursor)++ = 0;
    return start;
}

static const xmlChar *prefixOf(const xmlNs *ns) { return ns ? ns->prefix : NULL; }

/// Reports `node` and what it holds. Recursion depth is bounded by libxml2's own limit on
/// nesting (256 levels without XML_PARSE_HUGE); each level's strings are on the heap.
static int walk(const xmlNode *node, const CLibXML2_Events *events) {
    size_t pairs = 0, bytes = length(prefixOf(node->ns)) + length(node->name) + 2;
    static const xmlChar xmlnsPrefix[] = "xmlns";
    for (const xmlNs *ns = node->nsDef; ns != NULL; ns = ns->next, pairs++)
        bytes += sizeof xmlnsPrefix + length(ns->prefix) + 1 + length(ns->href) + 1;
    for (const xmlAttr *a = node->properties; a != NULL; a = a->next, pairs++)
        bytes += length(prefixOf(a->ns)) + length(a->name) + 2 + valueLength(a) + 1;
    const char **pointers = malloc((2 * pairs + 1) * sizeof *pointers + bytes);
    if (pointers == NULL) return -1;
    char *cursor = (char *)(pointers + 2 * pairs + 1);
    size_t index = 0;
    for (const xmlNs *ns = node->nsDef; ns != NULL; ns = ns->next) {
        pointers[index++] = ns->prefix ? appendName(&cursor, xmlnsPrefix, ns->prefix) : appendName(&cursor, NULL, xmlnsPrefix);
        pointers[index++] = appendName(&cursor, NULL, ns->href ? ns->href : (const xmlChar *)"");
    }
    for (const xmlAttr *a = node->properties; a != NULL; a = a->next) {
        pointers[index++] = appendName(&cursor, prefixOf(a->ns), a->name);
        pointers[index++] = appendValue(&cursor, a);
    }
    pointers[index] = NULL;
    events->start(events->context, appendName(&cursor, prefixOf(node->ns), node->name), pointers);
    free(pointers);
    for (const xmlNode *child = node->children; child != NULL; child = child->next) {
        switch (child->type) {
        case XML_ELEMENT_NODE:
            if (walk(child, events) != 0) return -1;
            break;
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
            if (child->content != NULL) events->text(events->context, (const char *)child->content, length(child->content));
            break;
        default:
            break;
        }
    }
    events->end(events->context);
    return 0;
}

/// The first error of a parse: libxml2 goes on after a well-formedness error, and its "last error"
/// is then a consequence (an unclosed tag at the end of the data), not the cause. Every error of
/// the parse reaches this handler (set for the parse's thread), so it is the one source.
struct FirstError {
    int seen;
    int line;
    char message[256];
};

static void recordFirstError(void *context, xmlErrorPtr error) {
    struct FirstError *first = context;
    if (first->seen || error == NULL || error->level < XML_ERR_ERROR) return;
    first->seen = 1;
    first->line = error->line;
    snprintf(first->message, sizeof first->message, "%s", error->message ? error->message : "unknown error");
    // libxml2's messages end with a newline.
    size_t end = strlen(first->message);
    while (end > 0 && (first->message[end - 1] == '\n' || first->message[end - 1] == ' ')) first->message[--end] = 0;
}

int CLibXML2_parse(const char *bytes, size_t length, const CLibXML2_Events *events,
                   char *message, size_t messageSize, int *line) {
    pthread_once(&loadOnce, load);
    *line = 0;
    if (xml.readMemory == NULL) {
        snprintf(message, messageSize, "libxml2 cannot be loaded (%s)", loadError);
        return CLibXML2_Unavailable;
    }
    if (length > 0x7fffffff) {
        snprintf(message, messageSize, "the document is larger than 2 GiB");
        return CLibXML2_Malformed;
    }
    // Per thread in libxml2, so parses on other threads keep their own.
    struct FirstError first = {0};
    xml.setStructuredErrorFunc(&first, recordFirstError);
    // No network, no DTD loading, no entity substitution beyond XML's own; errors are returned,
    // never printed.
    int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA;
    xmlDocPtr document = xml.readMemory(bytes, (int)length, "noname.xml", NULL, options);
    xml.setStructuredErrorFunc(NULL, NULL);
    xmlNodePtr root = document ? xml.rootElement(document) : NULL;
    if (root == NULL) {
        snprintf(message, messageSize, "%s", first.seen ? first.message : "no root element");
        *line = first.line;
        if (document) xml.freeDoc(document);
        return CLibXML2_Malformed;
    }
    int walked = walk(root, events);
    xml.freeDoc(document);
    if (walked != 0) {
        snprintf(message, messageSize, "out of memory");
        return CLibXML2_Malformed;
    }
    return CLibXML2_OK;
}

#endif
