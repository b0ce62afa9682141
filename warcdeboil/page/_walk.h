/*
 * The declarations the files of warcdeboil.page._walk share (see _walk.c): the leading fields
 * of lexbor's public DOM structs, the Walker object and its tables, growable buffers, UTF-8 and
 * the helpers more than one file reads. Functions here are static inline: each file that uses
 * one gets its own copy.
 */
#ifndef WARCDEBOIL_WALK_H
#define WARCDEBOIL_WALK_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- lexbor's structs, leading fields (lexbor/dom/interfaces/{node,element,attr,
 * character_data}.h, unchanged in these fields since 2020) ---- */

typedef struct {
    unsigned char *data;
    size_t length;
} lb_str;

typedef struct lb_node lb_node;
struct lb_node {
    void *events;
    uintptr_t local_name;
    uintptr_t prefix;
    uintptr_t ns;
    void *owner_document;
    lb_node *next;
    lb_node *prev;
    lb_node *parent;
    lb_node *first_child;
    lb_node *last_child;
    void *user;
    int type;
};

typedef struct lb_attr lb_attr;

typedef struct {
    lb_node node;
    uintptr_t upper_name;
    uintptr_t qualified_name;
    lb_str *is_value;
    lb_attr *first_attr;
    lb_attr *last_attr;
    lb_attr *attr_id;
    lb_attr *attr_class;
} lb_element;

struct lb_attr {
    lb_node node;
    uintptr_t upper_name;
    uintptr_t qualified_name;
    lb_str *value;
    lb_element *owner;
    lb_attr *next;
    lb_attr *prev;
};

typedef struct {
    lb_node node;
    lb_str data;
} lb_chardata;

/* A name lexbor does not know in advance (an attribute such as role or itemprop) is numbered by
 * the address of its entry in the document's name table, which starts with its characters:
 * inline up to SHORT_NAME bytes, else through a pointer (lexbor/core/hash.h). Known names have
 * small numbers, the same in every document. */
#define SHORT_NAME 16
#define KNOWN_NAMES 0x10000

typedef struct {
    union {
        unsigned char *long_str;
        unsigned char short_str[SHORT_NAME + 1];
    } u;
    size_t length;
} lb_name;

#define NODE_ELEMENT 1

/* ---- what each tag is to analyse() (flags of Walker.flags) ---- */

enum {
    F_CANDIDATE = 1 << 0,   /* OPEN before, CLOSE after; hashed */
    F_LINE_END = 1 << 1,    /* LINE after */
    F_LINE_START = 1 << 2,  /* LINE before */
    F_ROLE_TAG = 1 << 3,    /* may have a role (block level) */
    F_TAG_ROLE = 1 << 4,    /* has a role by its tag alone */
    F_FORM_LIST = 1 << 5,   /* <select>, <datalist>: not read, nor what it holds */
    F_INVISIBLE = 1 << 6,   /* script, style ...: counted, no text */
    F_HEADING = 1 << 7,     /* h1-h6: a link to "#..." among its children gets no mark */
    F_LINK = 1 << 8,        /* a */
};

#define ROLES 5
#define ROLE_MAIN 4 /* dom.ROLE_MAIN: the role marks are U+FDE1 + 2 * role (open), + 1 (close) */
#define MARK_BYTES 3

/* U+FDD0.. as UTF-8 is EF B7 90.. (every mark used here lies in U+FDD0..U+FDEF). */
#define MARK_OPEN 0xFDD0
#define MARK_CLOSE 0xFDD1
#define MARK_LINE 0xFDD2
#define MARK_ROLE_OPEN 0xFDE1 /* + 2 * role; the closing mark is one more */

typedef struct {
    PyObject_HEAD
    Py_ssize_t ntags;
    uint16_t *flags;       /* per tag number below ntags */
    uint16_t *before;      /* structure mark before the element (code point, 0: none) */
    uint16_t *after;       /* structure mark after it */
    uintptr_t text_tag;    /* a text node's tag number */
    /* the numbers of the names role, itemprop and href where lexbor knows them (0 where it
     * numbers them per document: they are then compared by their characters) */
    uintptr_t attr_role, attr_itemprop, attr_href;
    /* The roles an element's class and id name (dom._describe): each word that names one, in
     * the order the regular expression tries them, as (lower-case ASCII, role bits) */
    PyObject *literals;
    uint64_t first[4];     /* a bit per byte value: some word begins with it */
    PyObject *aria;        /* (ARIA role, role bits) */
    uint16_t *tag_bits;    /* per tag number below ntags: the roles its tag gives */
    PyObject *tag_names;   /* per tag number below ntags: its name (bytes) or None */
    PyObject *describe;    /* dom._describe, for a class or id that is not ASCII */
    PyObject *hasher;      /* xxh3_64_intdigest */
    unsigned slot_roles;   /* role bits of the roles whose elements can be template slots */
    unsigned main_bits;    /* the role bit itemprop=articleBody gives */
} Walker;

static inline uint16_t tag_flags(const Walker *w, uintptr_t tag) {
    return tag < (uintptr_t)w->ntags ? w->flags[tag] : 0;
}

/* ---- a growable byte buffer ---- */

typedef struct {
    char *data;
    size_t size, cap;
} Buf;

static inline int buf_reserve(Buf *b, size_t more) {
    if (b->size + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->size + more) cap *= 2;
    char *data = PyMem_Realloc(b->data, cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int buf_put(Buf *b, const void *data, size_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->size, data, n);
    b->size += n;
    return 0;
}

/* Growable arrays of sizes and of tag numbers. */
typedef struct {
    Py_ssize_t *data;
    Py_ssize_t size, cap;
} Ints;

static inline int ints_put(Ints *a, Py_ssize_t v) {
    if (a->size == a->cap) {
        Py_ssize_t cap = a->cap ? 2 * a->cap : 256;
        Py_ssize_t *data = PyMem_Realloc(a->data, (size_t)cap * sizeof(Py_ssize_t));
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        a->data = data;
        a->cap = cap;
    }
    a->data[a->size++] = v;
    return 0;
}

/* ---- UTF-8 ---- */

/* The code point at s (n bytes left, at least 1), its length in *len; -1 if the bytes are not
 * strict UTF-8 as CPython's decoder reads it (no overlong forms, no surrogates, at most
 * U+10FFFF). */
static inline long utf8_at(const unsigned char *s, size_t n, int *len) {
    unsigned char c = s[0];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        if (n < 2 || (s[1] & 0xC0) != 0x80) return -1;
        *len = 2;
        return ((long)(c & 0x1F) << 6) | (s[1] & 0x3F);
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return -1;
        long cp = ((long)(c & 0x0F) << 12) | ((long)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
        if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
        *len = 3;
        return cp;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return -1;
        long cp = ((long)(c & 0x07) << 18) | ((long)(s[1] & 0x3F) << 12) |
                  ((long)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
        if (cp < 0x10000 || cp > 0x10FFFF) return -1;
        *len = 4;
        return cp;
    }
    return -1;
}

/* Whether the n bytes are strict UTF-8; pure ASCII is checked a word at a time. */
static inline int utf8_valid(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int len = 1;
        if (utf8_at(s + i, n - i, &len) < 0) return 0;
        i += (size_t)len;
    }
    return 1;
}

/* HTML's ASCII whitespace: what selectolax's skip_empty skips a text node made only of. */
static inline int ascii_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* The key selectolax's ``attributes`` gives an attribute (its qualified name, which lexbor
 * keeps only where it differs from the local name), as a name number. */
static inline uintptr_t attr_key(const lb_attr *attr) {
    return attr->qualified_name ? attr->qualified_name : attr->node.local_name;
}

/* The characters of a name numbered per document (NULL for a known name). */
static inline const unsigned char *name_chars(uintptr_t key, size_t *length) {
    if (key < KNOWN_NAMES) return NULL;
    const lb_name *entry = (const lb_name *)key;
    *length = entry->length;
    return entry->length <= SHORT_NAME ? entry->u.short_str : entry->u.long_str;
}

/* Whether an attribute's key is the name ``name`` (``known``: its number, 0 if lexbor numbers
 * it per document). */
static inline int is_named(uintptr_t key, uintptr_t known, const char *name, size_t n) {
    if (key < KNOWN_NAMES) return known != 0 && key == known;
    size_t length;
    const unsigned char *chars = name_chars(key, &length);
    return known == 0 && length == n && memcmp(chars, name, n) == 0;
}

static inline const lb_attr *find_attr(const lb_element *element, uintptr_t known, const char *name,
                                size_t n) {
    for (const lb_attr *attr = element->first_attr; attr != NULL; attr = attr->next)
        if (is_named(attr_key(attr), known, name, n)) return attr;
    return NULL;
}


static inline int node_address(PyObject *arg, const lb_node **node) {
    size_t address = PyLong_AsSize_t(arg);
    if (address == (size_t)-1 && PyErr_Occurred()) return -1;
    if (address == 0) {
        PyErr_SetString(PyExc_ValueError, "no node at address 0");
        return -1;
    }
    *node = (const lb_node *)address;
    return 0;
}

/* An attribute's value as selectolax gives it: None without one, else its UTF-8 decoded with
 * replacement. */
static inline PyObject *attr_value(const lb_attr *attr) {
    if (attr == NULL || attr->value == NULL || attr->value->data == NULL) return Py_NewRef(Py_None);
    return PyUnicode_DecodeUTF8((const char *)attr->value->data, (Py_ssize_t)attr->value->length,
                                "replace");
}

/* ---- marks ---- */

/* The marks that end a text block (dom._BLOCK_MARKS) and those that lie inside one. */
static inline int block_mark(long cp) {
    return (cp >= 0xFDD0 && cp <= 0xFDD2) || (cp >= 0xFDD5 && cp <= 0xFDDB) || cp == 0xFDDD ||
           cp == 0xFDDE || (cp >= 0xFDE1 && cp <= 0xFDEA);
}

static inline int inline_mark(long cp) {
    return cp == 0xFDD3 || cp == 0xFDD4 || cp == 0xFDDC || cp == 0xFDDF || cp == 0xFDE0;
}

/* The n bytes at s into ``out`` without every mark U+FDD3..(U+FD00 + last) that follows a
 * space, with that space: what re.sub of b" \xef\xb7[\x93-last]" with b"" gives. */
static inline int spaced_marks_removed(const unsigned char *s, size_t n, unsigned char last, Buf *out) {
    size_t i = 0, from = 0;
    if (buf_reserve(out, n + 1) < 0) return -1;
    while (i + 3 < n) {
        const unsigned char *space = memchr(s + i, ' ', n - 3 - i);
        if (space == NULL) break;
        i = (size_t)(space - s);
        if (s[i + 1] == 0xEF && s[i + 2] == 0xB7 && s[i + 3] >= 0x93 && s[i + 3] <= last) {
            buf_put(out, s + from, i - from);
            i += 4;
            from = i;
        } else {
            i++;
        }
    }
    buf_put(out, s + from, n - from);
    return 0;
}

/* ---- the methods, by file ---- */

/* walk_tree.c: the walks over lexbor's tree */
PyObject *Walker_roles(Walker *self, PyObject *address);
PyObject *Walker_text(Walker *self, PyObject *args);

/* walk_text.c: the walks over marked text */
PyObject *Walker_without_structure_marks(Walker *self, PyObject *args);
PyObject *Walker_block_texts(Walker *self, PyObject *args);
PyObject *Walker_split_blocks(Walker *self, PyObject *args);
PyObject *Walker_doomed_slots(Walker *self, PyObject *args);

/* walk_content.c: content mode's features and scores */
int content_names_init(void);
PyObject *Walker_feature_columns(Walker *self, PyObject *args);
PyObject *Walker_weighted_sum(Walker *self, PyObject *args);
PyObject *Walker_context_columns(Walker *self, PyObject *args);

#endif
