/*
 * warcdeboil.page._walk: pass 1's walks over a parsed page, in C.
 *
 * analyse() (warcdeboil/page/dom.py) parses a page with selectolax and then, in Python, lists
 * the body's elements, reads the attributes of those that may have a role, inserts its marks as
 * text nodes and reads the body's text: about 1.2 ms a page where the parse costs 0.35. This
 * module does the same walks over lexbor's tree directly, from the node addresses selectolax
 * gives (``node.mem_id``), and makes the same marked text without touching the tree.
 *
 * Only the leading fields of lexbor's public DOM structs are declared here (node, element,
 * attribute, character data): no lexbor header, no link against lexbor, no cimport of
 * selectolax's objects. Tag and attribute numbers are read from selectolax at start-up, never
 * compiled in. The Python path stays as the fallback and the oracle: warcdeboil.page.walk checks
 * this module against it at import (and uses it only if the layout and the answers agree), and
 * the tests compare both on every page of the evaluation sets.
 *
 * Nothing here keeps a pointer between calls: each call walks a tree that its caller owns and
 * does not change during the call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <math.h>
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

static int buf_reserve(Buf *b, size_t more) {
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

static int buf_put(Buf *b, const void *data, size_t n) {
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

static int ints_put(Ints *a, Py_ssize_t v) {
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
static int utf8_valid(const unsigned char *s, size_t n) {
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

/* ---- the text of a walk ---- */

typedef struct {
    const Walker *w;
    Buf out;
    Py_ssize_t fragments; /* fragments written: a separator goes before every one but the first */
    Ints candidate_tags;  /* per candidate (as analyse() lists them): its tag number */
    Py_ssize_t element;   /* elements counted so far (the index analyse() gives the next) */
    const unsigned char *plan; /* per element: its role bits */
    Py_ssize_t plan_size;
    int structure;
    int invalid; /* a text that is not UTF-8: the caller takes the Python path */
} TextWalk;

static int put_mark(TextWalk *t, unsigned int mark) {
    unsigned char bytes[1 + MARK_BYTES] = {
        ' ', 0xE0 | (mark >> 12), 0x80 | ((mark >> 6) & 0x3F), 0x80 | (mark & 0x3F)};
    int first = t->fragments++ == 0;
    return buf_put(&t->out, bytes + first, MARK_BYTES + !first);
}

/* One text node's fragment: stripped as str.strip() strips it, written even when that leaves
 * nothing (body.text(separator=" ", strip=True, skip_empty=True) joins such a fragment too). */
static int put_text(TextWalk *t, const lb_chardata *text) {
    const unsigned char *s = text->data.data;
    size_t n = text->data.length;
    if (s == NULL) return 0;
    size_t i = 0;
    while (i < n && ascii_space(s[i])) i++;
    if (i == n) return 0; /* whitespace only: skipped */
    if (!utf8_valid(s, n)) {
        t->invalid = 1;
        return 0;
    }
    size_t start = 0, end = n;
    while (start < end) {
        int len = 1;
        long cp = utf8_at(s + start, end - start, &len);
        if (!Py_UNICODE_ISSPACE((Py_UCS4)cp)) break;
        start += (size_t)len;
    }
    while (end > start) {
        size_t at = end - 1;
        while (at > start && (s[at] & 0xC0) == 0x80) at--;
        int len = 1;
        long cp = utf8_at(s + at, end - at, &len);
        if (!Py_UNICODE_ISSPACE((Py_UCS4)cp)) break;
        end = at;
    }
    if (t->fragments++ > 0 && buf_put(&t->out, " ", 1) < 0) return -1;
    return buf_put(&t->out, s + start, end - start);
}

/* The key selectolax's ``attributes`` gives an attribute (its qualified name, which lexbor
 * keeps only where it differs from the local name), as a name number. */
static inline uintptr_t attr_key(const lb_attr *attr) {
    return attr->qualified_name ? attr->qualified_name : attr->node.local_name;
}

/* The characters of a name numbered per document (NULL for a known name). */
static const unsigned char *name_chars(uintptr_t key, size_t *length) {
    if (key < KNOWN_NAMES) return NULL;
    const lb_name *entry = (const lb_name *)key;
    *length = entry->length;
    return entry->length <= SHORT_NAME ? entry->u.short_str : entry->u.long_str;
}

/* Whether an attribute's key is the name ``name`` (``known``: its number, 0 if lexbor numbers
 * it per document). */
static int is_named(uintptr_t key, uintptr_t known, const char *name, size_t n) {
    if (key < KNOWN_NAMES) return known != 0 && key == known;
    size_t length;
    const unsigned char *chars = name_chars(key, &length);
    return known == 0 && length == n && memcmp(chars, name, n) == 0;
}

static const lb_attr *find_attr(const lb_element *element, uintptr_t known, const char *name,
                                size_t n) {
    for (const lb_attr *attr = element->first_attr; attr != NULL; attr = attr->next)
        if (is_named(attr_key(attr), known, name, n)) return attr;
    return NULL;
}

/* A link to a place on the page itself, a child of a heading: no structure marks (see
 * dom._without_heading_anchors). */
static int heading_anchor(const Walker *w, const lb_node *node) {
    const lb_node *parent = node->parent;
    if (parent == NULL || parent->type != NODE_ELEMENT) return 0;
    if (!(tag_flags(w, parent->local_name) & F_HEADING)) return 0;
    const lb_attr *href = find_attr((const lb_element *)node, w->attr_href, "href", 4);
    return href != NULL && href->value != NULL && href->value->data != NULL &&
           href->value->length > 0 && href->value->data[0] == '#';
}

/* Counts the elements of a subtree that is not read (an invisible element's), and its
 * candidates, as analyse() lists them before it takes the subtree out. */
static int count_unread(TextWalk *t, const lb_node *root) {
    const lb_node *node = root->first_child;
    while (node != NULL) {
        if (node->type == NODE_ELEMENT) {
            uint16_t f = tag_flags(t->w, node->local_name);
            if (!(f & F_FORM_LIST)) {
                t->element++;
                if ((f & F_CANDIDATE) && ints_put(&t->candidate_tags, (Py_ssize_t)node->local_name) < 0)
                    return -1;
                if (node->first_child != NULL) {
                    node = node->first_child;
                    continue;
                }
            }
        }
        while (node != root && node->next == NULL) node = node->parent;
        if (node == root) break;
        node = node->next;
    }
    return 0;
}

/* The marks an element gets before its content (in the order analyse() inserted them, each
 * right before the element) ... */
static int open_element(TextWalk *t, uint16_t f, unsigned bits, unsigned structure_mark) {
    if ((f & F_CANDIDATE) && put_mark(t, MARK_OPEN) < 0) return -1;
    if ((f & F_LINE_START) && put_mark(t, MARK_LINE) < 0) return -1;
    for (unsigned role = 0; role < ROLES; role++)
        if ((bits >> role & 1) && put_mark(t, MARK_ROLE_OPEN + 2 * role) < 0) return -1;
    if (structure_mark && put_mark(t, structure_mark) < 0) return -1;
    return 0;
}

/* ... and after it (each inserted right after the element: the last inserted comes first). */
static int close_element(TextWalk *t, uint16_t f, unsigned bits, unsigned structure_mark) {
    if (structure_mark && put_mark(t, structure_mark) < 0) return -1;
    for (int role = ROLES - 1; role >= 0; role--)
        if ((bits >> role & 1) && put_mark(t, MARK_ROLE_OPEN + 2 * role + 1) < 0) return -1;
    if ((f & F_LINE_END) && put_mark(t, MARK_LINE) < 0) return -1;
    if ((f & F_CANDIDATE) && put_mark(t, MARK_CLOSE) < 0) return -1;
    return 0;
}

/* Per open element of the walk: what its closing marks need. */
typedef struct {
    uint16_t flags;
    unsigned char bits;
    uint16_t after;
} Open;

/* The body's marked text: the root counts as element 0 (a selector on a node matches the node
 * itself) and gets no marks. Iterative: a page can nest elements thousands deep. */
static int walk_text(TextWalk *t, const lb_node *root) {
    const Walker *w = t->w;
    Open *stack = NULL;
    Py_ssize_t depth = 0, cap = 0;
    int status = -1;
    t->element = 1;
    const lb_node *node = root->first_child;
    while (node != NULL) {
        int descend = 0;
        if (node->local_name == w->text_tag) {
            if (put_text(t, (const lb_chardata *)node) < 0) goto done;
        } else if (node->type == NODE_ELEMENT) {
            uint16_t f = tag_flags(w, node->local_name);
            if (f & F_FORM_LIST) {
                /* neither counted nor read */
            } else if (f & F_INVISIBLE) {
                t->element++;
                if (count_unread(t, node) < 0) goto done;
            } else {
                Py_ssize_t index = t->element++;
                unsigned bits = index < t->plan_size ? t->plan[index] : 0;
                uint16_t before = 0, after = 0;
                if (t->structure && node->local_name < (uintptr_t)w->ntags) {
                    before = w->before[node->local_name];
                    after = w->after[node->local_name];
                    if ((before || after) && (f & F_LINK) && heading_anchor(w, node))
                        before = after = 0;
                }
                if ((f & F_CANDIDATE) &&
                    ints_put(&t->candidate_tags, (Py_ssize_t)node->local_name) < 0)
                    goto done;
                if (open_element(t, f, bits, before) < 0) goto done;
                if (node->first_child != NULL) {
                    if (depth == cap) {
                        Py_ssize_t more = cap ? 2 * cap : 64;
                        Open *grown = PyMem_Realloc(stack, (size_t)more * sizeof(Open));
                        if (grown == NULL) {
                            PyErr_NoMemory();
                            goto done;
                        }
                        stack = grown;
                        cap = more;
                    }
                    stack[depth].flags = f;
                    stack[depth].bits = (unsigned char)bits;
                    stack[depth].after = after;
                    depth++;
                    descend = 1;
                } else if (close_element(t, f, bits, after) < 0) {
                    goto done;
                }
            }
        }
        if (descend) {
            node = node->first_child;
            continue;
        }
        /* Up to the next sibling, closing the elements left behind. */
        while (node->next == NULL) {
            node = node->parent;
            if (node == root || node == NULL) {
                node = NULL;
                break;
            }
            depth--;
            if (close_element(t, stack[depth].flags, stack[depth].bits, stack[depth].after) < 0)
                goto done;
        }
        if (node == NULL) break;
        node = node->next;
    }
    status = 0;
done:
    PyMem_Free(stack);
    return status;
}

/* ---- the candidates' spans and the text each hash reads (dom._measure_spans) ---- */

/* Bytes that are no text of a candidate: spaces and the bytes of marks (dom._NOT_TEXT_BYTES). */
static inline int not_text(unsigned char c) {
    return c == ' ' || c == 0xEF || c == 0xB7 || (c >= 0x90 && c <= 0xAF);
}

static inline int is_candidate_mark(const char *s, size_t i, size_t n) {
    return i + 2 < n && (unsigned char)s[i] == 0xEF && (unsigned char)s[i + 1] == 0xB7 &&
           ((unsigned char)s[i + 2] == 0x90 || (unsigned char)s[i + 2] == 0x91);
}

/* The n bytes at s into ``out`` without every mark U+FDD3..(U+FD00 + last) that follows a
 * space, with that space: what re.sub of b" \xef\xb7[\x93-last]" with b"" gives. */
static int spaced_marks_removed(const unsigned char *s, size_t n, unsigned char last, Buf *out) {
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

/* ``marked`` without every structure and role mark that follows a space, with that space
 * (dom._SPACED_UNHASHED_MARK_BYTES): what a candidate's hash reads. */
static int unhashed_removed(const Buf *marked, Buf *hashed) {
    return spaced_marks_removed((const unsigned char *)marked->data, marked->size, 0xAA, hashed);
}

/* dom.without_structure_marks: the marked text without its structure marks (U+FDD3..U+FDE0),
 * those that open it each with the space after it, the others each with the space before it. */
static PyObject *Walker_without_structure_marks(Walker *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    const unsigned char *s = view.buf;
    size_t n = (size_t)view.len, i = 0;
    while (i + 2 < n && s[i] == 0xEF && s[i + 1] == 0xB7 && s[i + 2] >= 0x93 && s[i + 2] <= 0xA0) {
        i += 3;
        if (i < n && s[i] == ' ') i++;
    }
    Buf out = {0};
    PyObject *result = NULL;
    if (spaced_marks_removed(s + i, n - i, 0xA0, &out) == 0)
        result = PyBytes_FromStringAndSize(out.data ? out.data : "", (Py_ssize_t)out.size);
    PyMem_Free(out.data);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *measure(const Buf *marked, Py_ssize_t n) {
    Buf hashed = {0};
    Ints positions = {0}, at = {0}, stack = {0};
    PyObject *spans = NULL, *starts = NULL, *ends = NULL, *result = NULL;
    Py_ssize_t *texts_before = NULL;
    if (unhashed_removed(marked, &hashed) < 0) goto done;
    for (size_t i = 0; i + 2 < marked->size; i++)
        if (is_candidate_mark(marked->data, i, marked->size)) {
            if (ints_put(&positions, (Py_ssize_t)i) < 0) goto done;
            i += 2;
        }
    for (size_t i = 0; i + 2 < hashed.size; i++)
        if (is_candidate_mark(hashed.data, i, hashed.size)) {
            if (ints_put(&at, (Py_ssize_t)i) < 0) goto done;
            i += 2;
        }
    if (at.size != positions.size) {
        PyErr_SetString(PyExc_AssertionError, "candidate marks differ in the hashed text");
        goto done;
    }
    /* Per mark k: how many stretches before it hold text (a stretch: after one mark up to the
     * next); a subtree holds text iff one of the stretches between its marks does. */
    Py_ssize_t m = at.size;
    texts_before = PyMem_Malloc((size_t)(m + 1) * sizeof(Py_ssize_t));
    if (texts_before == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    texts_before[0] = 0;
    {
        size_t from = 0;
        for (Py_ssize_t k = 0; k < m; k++) {
            size_t to = (size_t)at.data[k];
            int text = 0;
            for (size_t j = from; j < to; j++)
                if (!not_text((unsigned char)hashed.data[j])) {
                    text = 1;
                    break;
                }
            texts_before[k + 1] = texts_before[k] + text;
            from = to + MARK_BYTES;
        }
    }
    spans = PyBytes_FromStringAndSize(NULL, 8 * n);
    if (spans == NULL) goto done;
    uint32_t *span = (uint32_t *)PyBytes_AS_STRING(spans);
    memset(span, 0, (size_t)(8 * n));
    starts = PyList_New(0);
    ends = PyList_New(0);
    PyObject *which = PyList_New(0);
    if (starts == NULL || ends == NULL || which == NULL) {
        Py_XDECREF(which);
        goto done;
    }
    Py_ssize_t ordinal = 0;
    for (Py_ssize_t k = 0; k < m; k++) {
        Py_ssize_t pos = positions.data[k];
        if ((unsigned char)marked->data[pos + 2] == 0x90) {
            if (ints_put(&stack, ordinal) < 0 || ints_put(&stack, k) < 0) {
                Py_DECREF(which);
                goto done;
            }
            ordinal++;
            continue;
        }
        if (stack.size == 0) continue;
        Py_ssize_t open_k = stack.data[--stack.size];
        Py_ssize_t i = stack.data[--stack.size];
        if (i >= n) continue;
        span[2 * i] = (uint32_t)positions.data[open_k];
        span[2 * i + 1] = (uint32_t)(pos + MARK_BYTES);
        if (texts_before[k + 1] > texts_before[open_k + 1]) {
            PyObject *a = PyLong_FromSsize_t(at.data[open_k] + MARK_BYTES);
            PyObject *b = PyLong_FromSsize_t(at.data[k]);
            PyObject *c = PyLong_FromSsize_t(i);
            int failed = a == NULL || b == NULL || c == NULL || PyList_Append(starts, a) < 0 ||
                         PyList_Append(ends, b) < 0 || PyList_Append(which, c) < 0;
            Py_XDECREF(a);
            Py_XDECREF(b);
            Py_XDECREF(c);
            if (failed) {
                Py_DECREF(which);
                goto done;
            }
        }
    }
    PyObject *hashed_bytes = PyBytes_FromStringAndSize(hashed.data ? hashed.data : "", (Py_ssize_t)hashed.size);
    if (hashed_bytes == NULL) {
        Py_DECREF(which);
        goto done;
    }
    result = Py_BuildValue("(NNNNN)", hashed_bytes, spans, which, starts, ends);
    spans = starts = ends = NULL;
done:
    Py_XDECREF(spans);
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    PyMem_Free(hashed.data);
    PyMem_Free(positions.data);
    PyMem_Free(at.data);
    PyMem_Free(stack.data);
    PyMem_Free(texts_before);
    return result;
}

/* ---- a page's text blocks (dom._BLOCK_RUN, str.split) ---- */

/* The marks that end a text block (dom._BLOCK_MARKS) and those that lie inside one. */
static inline int block_mark(long cp) {
    return (cp >= 0xFDD0 && cp <= 0xFDD2) || (cp >= 0xFDD5 && cp <= 0xFDDB) || cp == 0xFDDD ||
           cp == 0xFDDE || (cp >= 0xFDE1 && cp <= 0xFDEA);
}

static inline int inline_mark(long cp) {
    return cp == 0xFDD3 || cp == 0xFDD4 || cp == 0xFDDC || cp == 0xFDDF || cp == 0xFDE0;
}

static int put_piece(PyObject *list, const Buf *piece) {
    PyObject *bytes = PyBytes_FromStringAndSize(piece->data ? piece->data : "",
                                                (Py_ssize_t)piece->size);
    if (bytes == NULL) return -1;
    int status = PyList_Append(list, bytes);
    Py_DECREF(bytes);
    return status;
}

/* The texts between the runs of block marks of UTF-8 marked text (a run: a block mark, then
 * any spaces and block marks), each with its whitespace runs as one space and stripped (inline
 * marks as whitespace too with ``inline_spaces``), UTF-8: what
 * ``[" ".join(t.split()).encode() for t in _BLOCK_RUN.split(marked.decode())]`` gives. None where
 * the bytes are not strict UTF-8. */
static PyObject *Walker_block_texts(Walker *self, PyObject *args) {
    Py_buffer view;
    int inline_spaces;
    if (!PyArg_ParseTuple(args, "y*p", &view, &inline_spaces)) return NULL;
    const unsigned char *s = view.buf;
    size_t n = (size_t)view.len;
    PyObject *texts = NULL;
    Buf piece = {0};
    if (!utf8_valid(s, n)) {
        texts = Py_NewRef(Py_None);
        goto done;
    }
    texts = PyList_New(0);
    if (texts == NULL) goto done;
    int space = 0; /* a space is owed before the next character that is not one */
    size_t i = 0;
    while (i < n) {
        int len = 1;
        long cp = s[i] < 0x80 ? s[i] : utf8_at(s + i, n - i, &len);
        if (block_mark(cp)) {
            if (put_piece(texts, &piece) < 0) goto fail;
            piece.size = 0;
            space = 0;
            i += (size_t)len;
            while (i < n) {
                if (s[i] == ' ') {
                    i++;
                    continue;
                }
                int more = 1;
                long next = s[i] < 0x80 ? s[i] : utf8_at(s + i, n - i, &more);
                /* an inline mark is a space here too: the run goes on over it */
                if (!block_mark(next) && !(inline_spaces && inline_mark(next))) break;
                i += (size_t)more;
            }
            continue;
        }
        if (Py_UNICODE_ISSPACE((Py_UCS4)cp) || (inline_spaces && inline_mark(cp))) {
            space = piece.size > 0;
        } else {
            if (space && buf_put(&piece, " ", 1) < 0) goto fail;
            space = 0;
            if (buf_put(&piece, s + i, (size_t)len) < 0) goto fail;
        }
        i += (size_t)len;
    }
    if (put_piece(texts, &piece) < 0) goto fail;
    goto done;
fail:
    Py_CLEAR(texts);
done:
    PyMem_Free(piece.data);
    PyBuffer_Release(&view);
    return texts;
}

/* ---- a page's blocks for content mode (content.split_blocks) ---- */

#define LINK_OPEN 0xFDD3
#define LINK_CLOSE 0xFDD4

/* The kind of block a block mark starts (content._KINDS: headings 1-6, item 7, quote 8, code 9;
 * 0 for the others). */
static inline int block_kind(Py_UCS4 mark) {
    if (mark >= 0xFDD5 && mark <= 0xFDDA) return (int)(mark - 0xFDD5) + 1;
    if (mark == 0xFDDB) return 7;
    if (mark == 0xFDDD) return 8;
    if (mark == 0xFDDE) return 9;
    return 0;
}

typedef struct {
    Py_UCS4 *data;
    Py_ssize_t size, cap;
} Chars;

static int chars_put(Chars *c, Py_UCS4 ch) {
    if (c->size == c->cap) {
        Py_ssize_t cap = c->cap ? 2 * c->cap : 256;
        Py_UCS4 *data = PyMem_Realloc(c->data, (size_t)cap * sizeof(Py_UCS4));
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        c->data = data;
        c->cap = cap;
    }
    c->data[c->size++] = ch;
    return 0;
}

/* content.split_blocks in one pass over the marked text: per text between runs of block marks
 * that holds a word, ``block_type(text, kind, chars, link_chars, ancestors, marked, roles,
 * link_first)``, with the state the marks of the runs set (see there). A run is a block mark and
 * any spaces and block marks up to the last mark of them (content.BLOCK_RUN_SPLIT). */
static PyObject *Walker_split_blocks(Walker *self, PyObject *args) {
    PyObject *marked, *block_type;
    Py_ssize_t max_ancestors;
    if (!PyArg_ParseTuple(args, "UOn", &marked, &block_type, &max_ancestors)) return NULL;
    int kind = PyUnicode_KIND(marked);
    const void *data = PyUnicode_DATA(marked);
    Py_ssize_t n = PyUnicode_GET_LENGTH(marked);
    PyObject *blocks = PyList_New(0), *ancestors = NULL, *link_open = NULL;
    Ints stack = {0};
    Chars plain = {0};
    Py_ssize_t depths[ROLES] = {0};
    Py_ssize_t next_id = 1, pos = 0;
    int current = 0, roles = 0, in_link = 0;
    if (blocks == NULL || ints_put(&stack, 0) < 0) goto fail;
    ancestors = Py_BuildValue("(i)", 0);
    link_open = PyUnicode_FromOrdinal(LINK_OPEN);
    if (ancestors == NULL || link_open == NULL) goto fail;
    for (;;) {
        /* the text, up to the next block mark */
        Py_ssize_t start = pos;
        while (pos < n && !block_mark((long)PyUnicode_READ(kind, data, pos))) pos++;
        Py_ssize_t end = pos;
        int prefixed = in_link; /* what follows an open link is linked from its start */
        Py_ssize_t last_open = prefixed ? start - 1 : -1, last_close = -1, chars = 0;
        int has_link = prefixed, space = 0;
        plain.size = 0;
        for (Py_ssize_t i = start; i < end; i++) {
            Py_UCS4 ch = PyUnicode_READ(kind, data, i);
            if (ch == LINK_OPEN) {
                has_link = 1;
                last_open = i;
            } else if (ch == LINK_CLOSE) {
                last_close = i;
            }
            if (Py_UNICODE_ISSPACE(ch) || inline_mark((long)ch)) {
                space = plain.size > 0;
            } else {
                if (space && chars_put(&plain, ' ') < 0) goto fail;
                space = 0;
                if (chars_put(&plain, ch) < 0) goto fail;
                chars++;
            }
        }
        if (plain.size) {
            Py_ssize_t linked = 0;
            int first = 0;
            if (has_link) {
                /* per link mark: the characters up to the next link mark, spaces aside */
                int counting = prefixed;
                for (Py_ssize_t i = start; i < end; i++) {
                    Py_UCS4 ch = PyUnicode_READ(kind, data, i);
                    if (ch == LINK_OPEN) counting = 1;
                    else if (ch == LINK_CLOSE) counting = 0;
                    else if (counting && ch != ' ') linked++;
                }
                if (linked > chars) linked = chars;
                first = prefixed || (start < end && PyUnicode_READ(kind, data, start) == LINK_OPEN) ||
                        (end - start > 1 && PyUnicode_READ(kind, data, start) == ' ' &&
                         PyUnicode_READ(kind, data, start + 1) == LINK_OPEN);
            }
            if (ancestors == NULL) {
                Py_ssize_t from = stack.size > max_ancestors ? stack.size - max_ancestors : 0;
                ancestors = PyTuple_New(stack.size - from);
                if (ancestors == NULL) goto fail;
                for (Py_ssize_t k = from; k < stack.size; k++) {
                    PyObject *id = PyLong_FromSsize_t(stack.data[k]);
                    if (id == NULL) goto fail;
                    PyTuple_SET_ITEM(ancestors, k - from, id);
                }
            }
            PyObject *text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, plain.data, plain.size);
            PyObject *piece = PyUnicode_Substring(marked, start, end);
            if (piece != NULL && prefixed) {
                PyObject *joined = PyUnicode_Concat(link_open, piece);
                Py_SETREF(piece, joined);
            }
            PyObject *block = NULL;
            if (text != NULL && piece != NULL)
                block = PyObject_CallFunction(block_type, "OinnOOiO", text, current, chars,
                                              linked, ancestors, piece, roles,
                                              first ? Py_True : Py_False);
            Py_XDECREF(text);
            Py_XDECREF(piece);
            if (block == NULL || PyList_Append(blocks, block) < 0) {
                Py_XDECREF(block);
                goto fail;
            }
            Py_DECREF(block);
        }
        /* A link can hold block elements: it stays open across block marks to its close. */
        if (has_link) in_link = last_open > last_close;
        if (pos >= n) break;
        /* the run: its marks in order (its spaces are no marks) */
        Py_ssize_t last = pos;
        for (Py_ssize_t j = pos + 1; j < n; j++) {
            Py_UCS4 ch = PyUnicode_READ(kind, data, j);
            if (block_mark((long)ch)) last = j;
            else if (ch != ' ') break;
        }
        for (Py_ssize_t j = pos; j <= last; j++) {
            Py_UCS4 mark = PyUnicode_READ(kind, data, j);
            if (mark == ' ') continue;
            if (mark == MARK_LINE) {
                current = 0;
            } else if (mark == MARK_OPEN) {
                if (ints_put(&stack, next_id++) < 0) goto fail;
                Py_CLEAR(ancestors);
                current = 0;
            } else if (mark == MARK_CLOSE) {
                if (stack.size > 1) {
                    stack.size--;
                    Py_CLEAR(ancestors);
                }
                current = 0;
            } else if (mark >= MARK_ROLE_OPEN && mark < MARK_ROLE_OPEN + 2 * ROLES) {
                int role = (int)(mark - MARK_ROLE_OPEN) / 2;
                if ((mark - MARK_ROLE_OPEN) % 2 == 0) {
                    depths[role]++;
                    roles |= 1 << role;
                } else if (depths[role] && --depths[role] == 0) {
                    roles &= ~(1 << role);
                }
            } else {
                current = block_kind(mark);
            }
        }
        pos = last + 1;
    }
    goto done;
fail:
    Py_CLEAR(blocks);
done:
    Py_XDECREF(ancestors);
    Py_XDECREF(link_open);
    PyMem_Free(stack.data);
    PyMem_Free(plain.data);
    return blocks;
}

/* ---- content mode's first-stage features (content.feature_columns) ---- */

#define FEATURES 30

/* The Block attributes read, interned once (PyInit__walk). */
static PyObject *field_chars, *field_link_chars, *field_kind, *field_roles, *field_link_first,
    *field_ancestors, *field_text;

typedef struct {
    long long chars, links, weight, subtree_weight, parent_chars, parent_links;
    int kind, roles, first, ends_sentence;
    PyObject *ancestors; /* borrowed from the block, which the caller holds */
    PyObject *text;
} BlockRow;

/* Adds ``value`` to the int that ``key`` maps to in ``dict`` (0 if absent), keeping the order in
 * which keys first came. */
static int dict_add(PyObject *dict, PyObject *key, long long value) {
    PyObject *old = PyDict_GetItemWithError(dict, key);
    if (old == NULL && PyErr_Occurred()) return -1;
    long long sum = value + (old ? PyLong_AsLongLong(old) : 0);
    PyObject *new = PyLong_FromLongLong(sum);
    if (new == NULL) return -1;
    int status = PyDict_SetItem(dict, key, new);
    Py_DECREF(new);
    return status;
}

static long long dict_int(PyObject *dict, PyObject *key) {
    PyObject *value = PyDict_GetItemWithError(dict, key);
    return value ? PyLong_AsLongLong(value) : 0;
}

static PyObject *float_list(const double *values, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    if (list == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyFloat_FromDouble(values[i]);
        if (v == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* content.feature_columns: the same 30 columns, to the last bit (the same operations on
 * doubles in the same order: int / int and log1p as Python does them, ints summed exactly).
 * None for blocks it does not take (a block without characters: the Python path raises). */
static PyObject *Walker_feature_columns(Walker *self, PyObject *args) {
    PyObject *blocks, *sentence_end;
    long long short_block;
    if (!PyArg_ParseTuple(args, "O!UL", &PyList_Type, &blocks, &sentence_end, &short_block))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(blocks);
    PyObject *columns = PyList_New(FEATURES), *parent_chars = NULL, *parent_links = NULL,
             *subtree = NULL, *children = NULL, *counts = NULL;
    BlockRow *rows = NULL;
    double *col = NULL;
    if (columns == NULL) return NULL;
    if (n == 0) {
        for (int f = 0; f < FEATURES; f++) {
            PyObject *empty = PyList_New(0);
            if (empty == NULL) goto fail;
            PyList_SET_ITEM(columns, f, empty);
        }
        return columns;
    }
    rows = PyMem_Calloc((size_t)n, sizeof(BlockRow));
    col = PyMem_Malloc((size_t)n * sizeof(double));
    if (rows == NULL || col == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    long long total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *block = PyList_GET_ITEM(blocks, i);
        PyObject *v;
        BlockRow *r = &rows[i];
#define READ_INT(field, name)                                  \
    v = PyObject_GetAttr(block, name);                         \
    if (v == NULL) goto fail;                                  \
    r->field = PyLong_AsLongLong(v);                           \
    Py_DECREF(v);                                              \
    if (r->field == -1 && PyErr_Occurred()) goto fail;
        READ_INT(chars, field_chars)
        READ_INT(links, field_link_chars)
        long long kind, roles, first;
        v = PyObject_GetAttr(block, field_kind);
        if (v == NULL) goto fail;
        kind = PyLong_AsLongLong(v);
        Py_DECREF(v);
        v = PyObject_GetAttr(block, field_roles);
        if (v == NULL) goto fail;
        roles = PyLong_AsLongLong(v);
        Py_DECREF(v);
        v = PyObject_GetAttr(block, field_link_first);
        if (v == NULL) goto fail;
        first = PyObject_IsTrue(v);
        Py_DECREF(v);
        if (PyErr_Occurred()) goto fail;
#undef READ_INT
        r->kind = (int)kind;
        r->roles = (int)roles;
        r->first = (int)first;
        v = PyObject_GetAttr(block, field_ancestors);
        if (v == NULL) goto fail;
        Py_DECREF(v); /* the block holds it */
        if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) == 0 || r->chars <= 0) {
            Py_CLEAR(columns);
            columns = Py_NewRef(Py_None);
            goto done;
        }
        r->ancestors = v;
        v = PyObject_GetAttr(block, field_text);
        if (v == NULL) goto fail;
        Py_DECREF(v);
        if (!PyUnicode_Check(v) || PyUnicode_GET_LENGTH(v) == 0) {
            Py_CLEAR(columns);
            columns = Py_NewRef(Py_None);
            goto done;
        }
        r->text = v;
        Py_UCS4 last = PyUnicode_READ_CHAR(v, PyUnicode_GET_LENGTH(v) - 1);
        Py_ssize_t found = PyUnicode_FindChar(sentence_end, last, 0,
                                              PyUnicode_GET_LENGTH(sentence_end), 1);
        if (found == -2) goto fail;
        r->ends_sentence = found >= 0;
        r->weight = r->chars - 3 * r->links;
        r->subtree_weight = r->chars < short_block ? r->weight - short_block : r->weight;
        total += r->chars;
    }
    if (total == 0) total = 1;
    Py_ssize_t largest = 0;
    for (Py_ssize_t i = 1; i < n; i++)
        if (rows[i].weight > rows[largest].weight) largest = i;

    /* per run of blocks with equal ancestors: its parent's characters and links, and every
     * ancestor's weight; dicts in the order the blocks first name their nodes */
    parent_chars = PyDict_New();
    parent_links = PyDict_New();
    subtree = PyDict_New();
    children = PyDict_New();
    counts = PyDict_New();
    if (!parent_chars || !parent_links || !subtree || !children || !counts) goto fail;
    for (Py_ssize_t start = 0; start < n;) {
        Py_ssize_t end = start + 1;
        while (end < n) {
            int same = PyObject_RichCompareBool(rows[end].ancestors, rows[start].ancestors, Py_EQ);
            if (same < 0) goto fail;
            if (!same) break;
            end++;
        }
        long long run_chars = 0, run_links = 0, run_weight = 0;
        for (Py_ssize_t i = start; i < end; i++) {
            run_chars += rows[i].chars;
            run_links += rows[i].links;
            run_weight += rows[i].subtree_weight;
        }
        PyObject *nodes = rows[start].ancestors;
        Py_ssize_t depth = PyTuple_GET_SIZE(nodes);
        PyObject *parent = PyTuple_GET_ITEM(nodes, depth - 1);
        if (dict_add(parent_chars, parent, run_chars) < 0 ||
            dict_add(parent_links, parent, run_links) < 0)
            goto fail;
        for (Py_ssize_t k = 0; k < depth; k++)
            if (dict_add(subtree, PyTuple_GET_ITEM(nodes, k), run_weight) < 0) goto fail;
        if (depth > 1) {
            PyObject *grand = PyTuple_GET_ITEM(nodes, depth - 2);
            PyObject *set = PyDict_GetItemWithError(children, grand);
            if (set == NULL) {
                if (PyErr_Occurred()) goto fail;
                set = PySet_New(NULL);
                if (set == NULL || PyDict_SetItem(children, grand, set) < 0) {
                    Py_XDECREF(set);
                    goto fail;
                }
                Py_DECREF(set);
            }
            if (PySet_Add(set, parent) < 0) goto fail;
        }
        start = end;
    }
    PyObject *best_parent = NULL, *best_subtree = NULL, *key, *value;
    long long best = 0;
    Py_ssize_t at = 0;
    while (PyDict_Next(parent_chars, &at, &key, &value)) {
        long long score = PyLong_AsLongLong(value) - 2 * dict_int(parent_links, key);
        if (best_parent == NULL || score > best) {
            best_parent = key;
            best = score;
        }
    }
    at = 0;
    while (PyDict_Next(subtree, &at, &key, &value)) {
        long long weight = PyLong_AsLongLong(value);
        if (best_subtree == NULL || weight > best) {
            best_subtree = key;
            best = weight;
        }
    }
    if (PyErr_Occurred()) goto fail;
    long long best_weight = dict_int(subtree, best_subtree);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *nodes = rows[i].ancestors;
        PyObject *parent = PyTuple_GET_ITEM(nodes, PyTuple_GET_SIZE(nodes) - 1);
        rows[i].parent_chars = dict_int(parent_chars, parent);
        rows[i].parent_links = dict_int(parent_links, parent);
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (dict_add(counts, rows[i].text, 1) < 0) goto fail;

    double dtotal = (double)total, dn = (double)n;
    for (int f = 0; f < FEATURES; f++) {
        long long before = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            const BlockRow *r = &rows[i];
            PyObject *nodes = r->ancestors;
            Py_ssize_t depth = PyTuple_GET_SIZE(nodes);
            PyObject *parent = PyTuple_GET_ITEM(nodes, depth - 1);
            double x = 0.0;
            switch (f) {
            case 0: x = log1p((double)r->chars); break;
            case 1: x = (double)r->links / (double)r->chars; break;
            case 2: x = r->ends_sentence ? 1.0 : 0.0; break;
            case 3: x = (r->kind == 1 || r->kind == 2) ? 1.0 : 0.0; break;
            case 4: x = (r->kind >= 3 && r->kind <= 6) ? 1.0 : 0.0; break;
            case 5: x = r->kind == 7 ? 1.0 : 0.0; break;
            case 6: x = r->kind >= 8 ? 1.0 : 0.0; break;
            case 7: x = (double)before / dtotal; before += r->chars; break;
            case 8: x = (double)i / dn; break;
            case 9: x = i ? log1p((double)rows[i - 1].chars) : 0.0; break;
            case 10: x = i ? (double)rows[i - 1].links / (double)rows[i - 1].chars : 0.0; break;
            case 11: x = i + 1 < n ? log1p((double)rows[i + 1].chars) : 0.0; break;
            case 12:
                x = i + 1 < n ? (double)rows[i + 1].links / (double)rows[i + 1].chars : 0.0;
                break;
            case 13: x = (double)r->parent_chars / dtotal; break;
            case 14: x = (double)r->parent_links / (double)r->parent_chars; break;
            case 15: x = PyObject_RichCompareBool(parent, best_parent, Py_EQ) == 1 ? 1.0 : 0.0;
                break;
            case 16: x = (double)(i - largest) / dn; break;
            case 17: x = log1p(dtotal); break;
            case 18: x = (double)r->chars / dtotal; break;
            case 19: x = PySequence_Contains(nodes, best_subtree) == 1 ? 1.0 : 0.0; break;
            case 20: x = (double)best_weight / dtotal; break;
            case 21: x = (double)depth; break;
            case 22: case 23: case 24: case 25: case 26:
                x = (r->roles >> (f - 22) & 1) ? 1.0 : 0.0;
                break;
            case 27: x = r->first ? 1.0 : 0.0; break;
            case 28:
                if (depth > 1) {
                    PyObject *set = PyDict_GetItemWithError(children,
                                                            PyTuple_GET_ITEM(nodes, depth - 2));
                    x = set ? log1p((double)PySet_GET_SIZE(set)) : 0.0;
                }
                break;
            case 29: x = dict_int(counts, r->text) > 1 ? 1.0 : 0.0; break;
            }
            col[i] = x;
        }
        if (PyErr_Occurred()) goto fail;
        PyObject *list = float_list(col, n);
        if (list == NULL) goto fail;
        PyList_SET_ITEM(columns, f, list);
    }
    goto done;
fail:
    Py_CLEAR(columns);
done:
    Py_XDECREF(parent_chars);
    Py_XDECREF(parent_links);
    Py_XDECREF(subtree);
    Py_XDECREF(children);
    Py_XDECREF(counts);
    PyMem_Free(rows);
    PyMem_Free(col);
    return columns;
}

/* content._weighted_sum: per block, ``bias`` plus each used column times its weight, added
 * one column after another (a product rounded, then the sum rounded: no fused multiply-add,
 * see setup.py), which is what numpy's column-wise loop there gives. A column is used when its
 * weight is not 0 and it holds a value that is not 0, or its weight is not finite. */
static PyObject *Walker_weighted_sum(Walker *self, PyObject *args) {
    PyObject *columns, *weights;
    double bias;
    if (!PyArg_ParseTuple(args, "O!O!d", &PyList_Type, &columns, &PyTuple_Type, &weights, &bias))
        return NULL;
    Py_ssize_t m = PyList_GET_SIZE(columns);
    if (m != PyTuple_GET_SIZE(weights) || m == 0) {
        PyErr_SetString(PyExc_ValueError, "a weight per column, and a column at least");
        return NULL;
    }
    PyObject *first = PyList_GET_ITEM(columns, 0);
    if (!PyList_Check(first)) Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(first);
    double *scores = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(double));
    if (scores == NULL) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) scores[i] = bias;
    PyObject *result = NULL;
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *column = PyList_GET_ITEM(columns, j);
        double weight = PyFloat_AsDouble(PyTuple_GET_ITEM(weights, j));
        if (weight == -1.0 && PyErr_Occurred()) goto done;
        if (!PyList_Check(column) || PyList_GET_SIZE(column) != n) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            if (!PyFloat_CheckExact(PyList_GET_ITEM(column, i))) { /* the caller's way */
                result = Py_NewRef(Py_None);
                goto done;
            }
        if (weight == 0.0) continue;
        int any = 0;
        for (Py_ssize_t i = 0; i < n && !any; i++)
            any = PyFloat_AS_DOUBLE(PyList_GET_ITEM(column, i)) != 0.0;
        if (!any && isfinite(weight)) continue;
        for (Py_ssize_t i = 0; i < n; i++) {
            double term = PyFloat_AS_DOUBLE(PyList_GET_ITEM(column, i)) * weight;
            scores[i] = scores[i] + term;
        }
    }
    result = float_list(scores, n);
done:
    PyMem_Free(scores);
    return result;
}

/* content.context_columns: the second stage's 9 columns from the first stage's ``scores``, to
 * the last bit: the same operations on doubles in the same order (sums of floats from left to
 * right, as accumulate and reduce make them; the total kept by Python's own sum, which from
 * Python 3.12 compensates its rounding). None for blocks it does not take. */
static PyObject *builtin_sum;

static PyObject *Walker_context_columns(Walker *self, PyObject *args) {
    PyObject *blocks, *scores;
    Py_ssize_t window;
    double core_share, clip;
    if (!PyArg_ParseTuple(args, "O!O!ndd", &PyList_Type, &blocks, &PyList_Type, &scores, &window,
                          &core_share, &clip))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(blocks);
    if (PyList_GET_SIZE(scores) != n || n == 0) Py_RETURN_NONE;
    PyObject *result = NULL, *nodes_index = NULL, *kept_list = NULL, *total_obj = NULL;
    double *clipped = NULL, *probs = NULL, *kept = NULL, *prefix_kept = NULL, *out = NULL,
           *node_kept = NULL;
    long long *chars = NULL, *prefix_chars = NULL, *node_chars = NULL;
    PyObject **ancestors = NULL;
    Py_ssize_t *parent_at = NULL, nodes = 0, cap = 0;
    clipped = PyMem_Malloc((size_t)n * sizeof(double));
    probs = PyMem_Malloc((size_t)n * sizeof(double));
    kept = PyMem_Malloc((size_t)n * sizeof(double));
    prefix_kept = PyMem_Malloc((size_t)(n + 1) * sizeof(double));
    out = PyMem_Malloc((size_t)n * sizeof(double));
    chars = PyMem_Malloc((size_t)n * sizeof(long long));
    prefix_chars = PyMem_Malloc((size_t)(n + 1) * sizeof(long long));
    ancestors = PyMem_Malloc((size_t)n * sizeof(PyObject *));
    parent_at = PyMem_Malloc((size_t)n * sizeof(Py_ssize_t));
    nodes_index = PyDict_New();
    kept_list = PyList_New(n);
    if (!clipped || !probs || !kept || !prefix_kept || !out || !chars || !prefix_chars ||
        !ancestors || !parent_at || !nodes_index || !kept_list) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto fail;
    }
    prefix_kept[0] = 0.0;
    prefix_chars[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *score = PyList_GET_ITEM(scores, i);
        PyObject *block = PyList_GET_ITEM(blocks, i);
        if (!PyFloat_CheckExact(score)) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        double x = PyFloat_AS_DOUBLE(score);
        clipped[i] = x > -clip ? (x < clip ? x : clip) : -clip;
        probs[i] = 1.0 / (1.0 + exp(-clipped[i]));
        PyObject *v = PyObject_GetAttr(block, field_chars);
        if (v == NULL) goto fail;
        chars[i] = PyLong_AsLongLong(v);
        Py_DECREF(v);
        if (chars[i] == -1 && PyErr_Occurred()) goto fail;
        v = PyObject_GetAttr(block, field_ancestors);
        if (v == NULL) goto fail;
        Py_DECREF(v); /* the block holds it */
        if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) == 0) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        ancestors[i] = v;
        kept[i] = probs[i] * (double)chars[i];
        PyObject *k = PyFloat_FromDouble(kept[i]);
        if (k == NULL) goto fail;
        PyList_SET_ITEM(kept_list, i, k);
        prefix_kept[i + 1] = prefix_kept[i] + kept[i];
        prefix_chars[i + 1] = prefix_chars[i] + chars[i];
    }
    total_obj = PyObject_CallOneArg(builtin_sum, kept_list);
    if (total_obj == NULL) goto fail;
    double total_kept = PyObject_IsTrue(total_obj) ? PyFloat_AsDouble(total_obj) : 1.0;
    if (PyErr_Occurred()) goto fail;

    /* per node, in the order the blocks first name it: what it kept (its blocks' kept values
     * summed from 0.0 in document order) and its characters */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *path = ancestors[i];
        Py_ssize_t depth = PyTuple_GET_SIZE(path);
        for (Py_ssize_t d = 0; d < depth; d++) {
            PyObject *node = PyTuple_GET_ITEM(path, d);
            PyObject *at = PyDict_GetItemWithError(nodes_index, node);
            Py_ssize_t index;
            if (at == NULL) {
                if (PyErr_Occurred()) goto fail;
                if (nodes == cap) {
                    Py_ssize_t more = cap ? 2 * cap : 64;
                    double *grown_kept = PyMem_Realloc(node_kept, (size_t)more * sizeof(double));
                    if (grown_kept == NULL) {
                        PyErr_NoMemory();
                        goto fail;
                    }
                    node_kept = grown_kept;
                    long long *grown_chars =
                        PyMem_Realloc(node_chars, (size_t)more * sizeof(long long));
                    if (grown_chars == NULL) {
                        PyErr_NoMemory();
                        goto fail;
                    }
                    node_chars = grown_chars;
                    cap = more;
                }
                index = nodes++;
                node_kept[index] = 0.0;
                node_chars[index] = 0;
                PyObject *number = PyLong_FromSsize_t(index);
                if (number == NULL || PyDict_SetItem(nodes_index, node, number) < 0) {
                    Py_XDECREF(number);
                    goto fail;
                }
                Py_DECREF(number);
            } else {
                index = PyLong_AsSsize_t(at);
            }
            node_kept[index] = node_kept[index] + kept[i];
            node_chars[index] += chars[i];
            if (d == depth - 1) parent_at[i] = index;
        }
    }
    /* the core: of the nodes that kept core_share of the total, the one with the fewest
     * characters (the first such, in the nodes' order); the root (0) when none did */
    Py_ssize_t core = -1;
    for (Py_ssize_t k = 0; k < nodes; k++)
        if (node_kept[k] >= core_share * total_kept &&
            (core < 0 || node_chars[k] < node_chars[core]))
            core = k;
    PyObject *core_node = NULL;
    if (core >= 0) {
        PyObject *key, *value;
        Py_ssize_t at = 0;
        while (PyDict_Next(nodes_index, &at, &key, &value))
            if (PyLong_AsSsize_t(value) == core) {
                core_node = key;
                break;
            }
    }
    PyObject *root = NULL;
    if (core_node == NULL) {
        root = PyLong_FromLong(0);
        if (root == NULL) goto fail;
        core_node = root;
    }
    result = PyList_New(9);
    if (result == NULL) {
        Py_XDECREF(root);
        goto fail;
    }
    for (int f = 0; f < 9; f++) {
        for (Py_ssize_t i = 0; i < n; i++) {
            double x = 0.0;
            switch (f) {
            case 0: x = clipped[i]; break;
            case 1: x = i ? probs[i - 1] : 0.0; break;
            case 2: x = i + 1 < n ? probs[i + 1] : 0.0; break;
            case 3: {
                Py_ssize_t hi = i + window + 1 < n ? i + window + 1 : n;
                Py_ssize_t lo = i - window > 0 ? i - window : 0;
                long long window_chars = (prefix_chars[hi] - prefix_chars[lo]) - chars[i];
                double window_kept = (prefix_kept[hi] - prefix_kept[lo]) - kept[i];
                x = window_chars ? window_kept / (double)window_chars : 0.0;
                break;
            }
            case 4: x = node_kept[parent_at[i]] / (double)node_chars[parent_at[i]]; break;
            case 5: x = node_kept[parent_at[i]] / total_kept; break;
            case 6: x = prefix_kept[i] / total_kept; break;
            case 7: x = 1.0 - (prefix_kept[i] + kept[i]) / total_kept; break;
            case 8: {
                int inside = PySequence_Contains(ancestors[i], core_node);
                if (inside < 0) {
                    Py_XDECREF(root);
                    goto fail;
                }
                x = inside ? 1.0 : 0.0;
                break;
            }
            }
            out[i] = x;
        }
        PyObject *list = float_list(out, n);
        if (list == NULL) {
            Py_XDECREF(root);
            goto fail;
        }
        PyList_SET_ITEM(result, f, list);
    }
    Py_XDECREF(root);
    goto done;
fail:
    Py_CLEAR(result);
done:
    Py_XDECREF(nodes_index);
    Py_XDECREF(kept_list);
    Py_XDECREF(total_obj);
    PyMem_Free(clipped);
    PyMem_Free(probs);
    PyMem_Free(kept);
    PyMem_Free(prefix_kept);
    PyMem_Free(out);
    PyMem_Free(chars);
    PyMem_Free(prefix_chars);
    PyMem_Free(ancestors);
    PyMem_Free(parent_at);
    PyMem_Free(node_kept);
    PyMem_Free(node_chars);
    return result;
}

/* ---- the role elements whose slot a site repeats (dom._doomed_slots) ---- */

/* Whether the three bytes at s[i] are a mark that ends a text block (dom._BLOCK_MARK_BYTES). */
static inline int block_mark_bytes(const unsigned char *s, size_t i, size_t n) {
    if (i + 2 >= n || s[i] != 0xEF || s[i + 1] != 0xB7) return 0;
    unsigned char c = s[i + 2];
    return (c >= 0x90 && c <= 0x92) || (c >= 0x95 && c <= 0x9B) || c == 0x9D || c == 0x9E ||
           (c >= 0xA1 && c <= 0xAA);
}

/* Where the first of the longest texts between block marks starts (-1: none has a byte). */
static Py_ssize_t longest_block(const unsigned char *s, size_t n) {
    size_t from = 0, best = 0, best_from = 0;
    for (size_t i = 0; i < n;) {
        if (block_mark_bytes(s, i, n)) {
            if (i - from > best) {
                best = i - from;
                best_from = from;
            }
            i += MARK_BYTES;
            from = i;
        } else {
            i++;
        }
    }
    if (n - from > best) {
        best = n - from;
        best_from = from;
    }
    return best ? (Py_ssize_t)best_from : -1;
}

typedef struct {
    Py_ssize_t start, ordinal, mains;
} RoleOpen;

/* Per role mark that closes an element whose slot is in ``slots``: (start, end, ordinal), under
 * the tests of dom._doomed_slots (``limit``: the most bytes such an element may span). */
static PyObject *Walker_doomed_slots(Walker *self, PyObject *args) {
    Py_buffer view, found_slots;
    PyObject *slots;
    double limit;
    if (!PyArg_ParseTuple(args, "y*y*Od", &view, &found_slots, &slots, &limit)) return NULL;
    const unsigned char *s = view.buf;
    size_t n = (size_t)view.len;
    const uint64_t *page_slots = found_slots.buf;
    Py_ssize_t count = found_slots.len / (Py_ssize_t)sizeof(uint64_t);
    RoleOpen *stacks[ROLES] = {NULL};
    Py_ssize_t depth[ROLES] = {0}, cap[ROLES] = {0};
    Py_ssize_t ordinal = 0, mains = 0, longest = -2; /* -2: not found yet */
    PyObject *found = PyList_New(0);
    if (found == NULL) goto done;
    for (size_t i = 0; i + 2 < n; i++) {
        if (s[i] != 0xEF || s[i + 1] != 0xB7 || s[i + 2] < 0xA1 || s[i + 2] > 0xAA) continue;
        int role = (s[i + 2] - 0xA1) / 2, closing = (s[i + 2] - 0xA1) % 2;
        if (!closing) {
            if (depth[role] == cap[role]) {
                Py_ssize_t more = cap[role] ? 2 * cap[role] : 16;
                RoleOpen *grown = PyMem_Realloc(stacks[role], (size_t)more * sizeof(RoleOpen));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto fail;
                }
                stacks[role] = grown;
                cap[role] = more;
            }
            stacks[role][depth[role]++] = (RoleOpen){(Py_ssize_t)i, ordinal, mains};
            ordinal++;
            mains += role == ROLE_MAIN;
        } else if (depth[role]) {
            RoleOpen open = stacks[role][--depth[role]];
            Py_ssize_t end = (Py_ssize_t)i + MARK_BYTES;
            if (open.ordinal >= count || (double)(end - open.start) > limit || mains > open.mains)
                goto next;
            PyObject *slot = PyLong_FromUnsignedLongLong(page_slots[open.ordinal]);
            if (slot == NULL) goto fail;
            int doomed = PySequence_Contains(slots, slot);
            Py_DECREF(slot);
            if (doomed < 0) goto fail;
            if (!doomed) goto next;
            if (longest == -2) longest = longest_block(s, n);
            if (!(open.start < longest && longest < end)) {
                PyObject *item = Py_BuildValue("(nnn)", open.start, end, open.ordinal);
                if (item == NULL || PyList_Append(found, item) < 0) {
                    Py_XDECREF(item);
                    goto fail;
                }
                Py_DECREF(item);
            }
        }
    next:
        i += 2;
    }
    goto done;
fail:
    Py_CLEAR(found);
done:
    for (int role = 0; role < ROLES; role++) PyMem_Free(stacks[role]);
    PyBuffer_Release(&view);
    PyBuffer_Release(&found_slots);
    return found;
}

/* ---- Walker ---- */

static int node_address(PyObject *arg, const lb_node **node) {
    size_t address = PyLong_AsSize_t(arg);
    if (address == (size_t)-1 && PyErr_Occurred()) return -1;
    if (address == 0) {
        PyErr_SetString(PyExc_ValueError, "no node at address 0");
        return -1;
    }
    *node = (const lb_node *)address;
    return 0;
}

static PyObject *Walker_text(Walker *self, PyObject *args) {
    PyObject *address;
    Py_buffer plan;
    int structure;
    if (!PyArg_ParseTuple(args, "Oy*p", &address, &plan, &structure)) return NULL;
    const lb_node *root;
    PyObject *result = NULL;
    TextWalk t = {0};
    if (node_address(address, &root) < 0) goto done;
    t.w = self;
    t.plan = plan.buf;
    t.plan_size = plan.len;
    t.structure = structure;
    if (walk_text(&t, root) < 0) goto done;
    if (t.invalid) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *measured = measure(&t.out, t.candidate_tags.size);
    if (measured == NULL) goto done;
    PyObject *marked = PyBytes_FromStringAndSize(t.out.data ? t.out.data : "", (Py_ssize_t)t.out.size);
    PyObject *tags = PyList_New(t.candidate_tags.size);
    if (marked == NULL || tags == NULL) {
        Py_XDECREF(marked);
        Py_XDECREF(tags);
        Py_DECREF(measured);
        goto done;
    }
    for (Py_ssize_t i = 0; i < t.candidate_tags.size; i++) {
        PyObject *tag = PyLong_FromSsize_t(t.candidate_tags.data[i]);
        if (tag == NULL) {
            Py_DECREF(marked);
            Py_DECREF(tags);
            Py_DECREF(measured);
            goto done;
        }
        PyList_SET_ITEM(tags, i, tag);
    }
    result = Py_BuildValue("(NNN)", marked, tags, measured);
done:
    PyBuffer_Release(&plan);
    PyMem_Free(t.out.data);
    PyMem_Free(t.candidate_tags.data);
    return result;
}

/* An attribute's value as selectolax gives it: None without one, else its UTF-8 decoded with
 * replacement. */
static PyObject *attr_value(const lb_attr *attr) {
    if (attr == NULL || attr->value == NULL || attr->value->data == NULL) return Py_NewRef(Py_None);
    return PyUnicode_DecodeUTF8((const char *)attr->value->data, (Py_ssize_t)attr->value->length,
                                "replace");
}

/* ---- the elements that have a role (dom._role_elements, dom._describe) ---- */

/* A class or id's characters (none for an absent or empty one). */
static void attr_chars(const lb_attr *attr, const unsigned char **s, size_t *n) {
    *s = (const unsigned char *)"";
    *n = 0;
    if (attr != NULL && attr->value != NULL && attr->value->data != NULL) {
        *s = attr->value->data;
        *n = attr->value->length;
    }
}

static int is_ascii(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 0x80) return 0;
    return 1;
}

/* The role bits of the words found in ASCII ``s`` as re.findall finds them: at each position
 * the first word (in the expression's order) that matches there, the search going on after it. */
static unsigned word_bits(const Walker *w, const unsigned char *s, size_t n) {
    unsigned bits = 0;
    Py_ssize_t nliterals = PyTuple_GET_SIZE(w->literals);
    size_t i = 0;
    while (i < n) {
        unsigned char c = (s[i] >= 'A' && s[i] <= 'Z') ? (unsigned char)(s[i] + 32) : s[i];
        size_t matched = 0;
        if (w->first[c >> 6] >> (c & 63) & 1) {
            for (Py_ssize_t k = 0; k < nliterals && !matched; k++) {
                PyObject *pair = PyTuple_GET_ITEM(w->literals, k);
                PyObject *word = PyTuple_GET_ITEM(pair, 0);
                size_t length = (size_t)PyBytes_GET_SIZE(word);
                const unsigned char *chars = (const unsigned char *)PyBytes_AS_STRING(word);
                if (chars[0] != c || length > n - i) continue;
                size_t j = 1;
                for (; j < length; j++) {
                    unsigned char d = s[i + j];
                    if (d >= 'A' && d <= 'Z') d = (unsigned char)(d + 32);
                    if (d != chars[j]) break;
                }
                if (j == length) {
                    bits |= (unsigned)PyLong_AsLong(PyTuple_GET_ITEM(pair, 1));
                    matched = length;
                }
            }
        }
        i += matched ? matched : 1;
    }
    return bits;
}

/* The slot of an element: its tag, then the words of its class and id without their ASCII
 * digits, one space apart (dom._describe, for ASCII names). */
static int put_slot_words(Buf *slot, const unsigned char *s, size_t n) {
    int in_word = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c >= '0' && c <= '9') continue;
        if (Py_UNICODE_ISSPACE(c)) {
            in_word = 0;
            continue;
        }
        if (!in_word && buf_put(slot, " ", 1) < 0) return -1;
        in_word = 1;
        if (buf_put(slot, &c, 1) < 0) return -1;
    }
    return 0;
}

/* The roles of one element of a role-bearing tag, and its slot (a new reference; NULL with an
 * error set): in C for ASCII names, else by dom._describe as the Python path calls it. */
static PyObject *describe(const Walker *w, const lb_element *element, uintptr_t tag,
                          unsigned *bits) {
    const unsigned char *cls, *id;
    size_t ncls, nid;
    attr_chars(element->attr_class, &cls, &ncls);
    attr_chars(element->attr_id, &id, &nid);
    PyObject *name = PyTuple_GET_ITEM(w->tag_names, (Py_ssize_t)tag);
    if (!is_ascii(cls, ncls) || !is_ascii(id, nid)) {
        PyObject *found = PyObject_CallFunction(
            w->describe, "NNN",
            PyUnicode_FromEncodedObject(name, "ascii", "strict"), attr_value(element->attr_class),
            attr_value(element->attr_id));
        if (found == NULL) return NULL;
        PyObject *slot = NULL;
        if (PyTuple_Check(found) && PyTuple_GET_SIZE(found) == 2) {
            *bits = (unsigned)PyLong_AsLong(PyTuple_GET_ITEM(found, 0));
            slot = Py_NewRef(PyTuple_GET_ITEM(found, 1));
        } else {
            PyErr_SetString(PyExc_TypeError, "describe gives (bits, slot)");
        }
        Py_DECREF(found);
        return slot;
    }
    *bits = w->tag_bits[tag] | word_bits(w, cls, ncls) | word_bits(w, id, nid);
    if (!*bits) return PyBytes_FromStringAndSize("", 0);
    Buf slot = {0};
    PyObject *made = NULL;
    if (buf_put(&slot, PyBytes_AS_STRING(name), (size_t)PyBytes_GET_SIZE(name)) == 0 &&
        put_slot_words(&slot, cls, ncls) == 0 && put_slot_words(&slot, id, nid) == 0)
        made = PyBytes_FromStringAndSize(slot.data, (Py_ssize_t)slot.size);
    PyMem_Free(slot.data);
    return made;
}

/* Whether an attribute's value is exactly these bytes. */
static int value_is(const lb_attr *attr, const char *chars, size_t n) {
    return attr != NULL && attr->value != NULL && attr->value->data != NULL &&
           attr->value->length == n && memcmp(attr->value->data, chars, n) == 0;
}

/* The roles of the body's elements, as dom._role_elements and dom._insert_role_marks give them:
 * (number of elements, per element its role bits, per opening role mark the digest of its
 * element's slot in that role (0 for a role that is never template), per opening role mark its
 * element's index). */
static PyObject *Walker_roles(Walker *self, PyObject *address) {
    const lb_node *root;
    if (node_address(address, &root) < 0) return NULL;
    Buf plan = {0}, slots = {0}, owners = {0};
    PyObject *result = NULL;
    Py_ssize_t index = 0;
    const lb_node *node = root;
    while (node != NULL) {
        int descend = 1;
        if (node->type == NODE_ELEMENT) {
            uint16_t f = tag_flags(self, node->local_name);
            if ((f & F_FORM_LIST) && node != root) {
                descend = 0;
            } else {
                unsigned char bits_byte = 0;
                if (f & F_ROLE_TAG) {
                    const lb_element *element = (const lb_element *)node;
                    const lb_attr *role = NULL, *itemprop = NULL;
                    for (const lb_attr *attr = element->first_attr; attr; attr = attr->next) {
                        uintptr_t key = attr_key(attr);
                        if (role == NULL && is_named(key, self->attr_role, "role", 4))
                            role = attr;
                        else if (itemprop == NULL &&
                                 is_named(key, self->attr_itemprop, "itemprop", 8))
                            itemprop = attr;
                    }
                    unsigned bits = 0;
                    PyObject *slot = describe(self, element, node->local_name, &bits);
                    if (slot == NULL) goto done;
                    if (role != NULL) {
                        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(self->aria); k++) {
                            PyObject *pair = PyTuple_GET_ITEM(self->aria, k);
                            PyObject *name = PyTuple_GET_ITEM(pair, 0);
                            if (value_is(role, PyBytes_AS_STRING(name),
                                         (size_t)PyBytes_GET_SIZE(name))) {
                                bits |= (unsigned)PyLong_AsLong(PyTuple_GET_ITEM(pair, 1));
                                break;
                            }
                        }
                    }
                    if (value_is(itemprop, "articleBody", 11)) bits |= self->main_bits;
                    for (int r = 0; r < ROLES; r++) {
                        if (!(bits >> r & 1)) continue;
                        uint64_t digest = 0;
                        if (self->slot_roles >> r & 1) {
                            PyObject *hashed = PyObject_CallFunction(self->hasher, "Oi", slot, r);
                            if (hashed == NULL) {
                                Py_DECREF(slot);
                                goto done;
                            }
                            digest = PyLong_AsUnsignedLongLong(hashed);
                            Py_DECREF(hashed);
                        }
                        uint32_t owner = (uint32_t)index;
                        if (buf_put(&slots, &digest, sizeof digest) < 0 ||
                            buf_put(&owners, &owner, sizeof owner) < 0) {
                            Py_DECREF(slot);
                            goto done;
                        }
                    }
                    Py_DECREF(slot);
                    if (PyErr_Occurred()) goto done;
                    bits_byte = (unsigned char)bits;
                }
                if (buf_put(&plan, &bits_byte, 1) < 0) goto done;
                index++;
            }
        } else {
            descend = 0;
        }
        if (descend && node->first_child != NULL) {
            node = node->first_child;
            continue;
        }
        if (node == root) break;
        while (node->next == NULL) {
            node = node->parent;
            if (node == root || node == NULL) {
                node = NULL;
                break;
            }
        }
        if (node == NULL) break;
        node = node->next;
    }
    result = Py_BuildValue("(ny#y#y#)", index, plan.data ? plan.data : "", (Py_ssize_t)plan.size,
                           slots.data ? slots.data : "", (Py_ssize_t)slots.size,
                           owners.data ? owners.data : "", (Py_ssize_t)owners.size);
done:
    PyMem_Free(plan.data);
    PyMem_Free(slots.data);
    PyMem_Free(owners.data);
    return result;
}

/* ---- layout probe: reads only fields every lexbor since 2020 has, and checks them against
 * what selectolax says, before any walk trusts the declarations above ---- */

static PyObject *probe(PyObject *module, PyObject *args) {
    PyObject *a_element, *a_parent, *a_child, *a_next, *a_text;
    unsigned long long tag, text_tag;
    Py_ssize_t text_length;
    const char *class_value;
    Py_ssize_t class_length;
    if (!PyArg_ParseTuple(args, "OOOOKOKns#", &a_element, &a_parent, &a_child, &a_next, &tag,
                          &a_text, &text_tag, &text_length, &class_value, &class_length))
        return NULL;
    const lb_node *element, *parent, *child, *next, *text;
    if (node_address(a_element, &element) < 0 || node_address(a_parent, &parent) < 0 ||
        node_address(a_child, &child) < 0 || node_address(a_next, &next) < 0 ||
        node_address(a_text, &text) < 0)
        return NULL;
    if (element->local_name != tag || element->type != NODE_ELEMENT || element->parent != parent ||
        element->first_child != child || element->next != next || child->parent != element ||
        text->local_name != text_tag || text->parent == NULL)
        Py_RETURN_FALSE;
    const lb_chardata *data = (const lb_chardata *)text;
    if ((Py_ssize_t)data->data.length != text_length || data->data.data == NULL) Py_RETURN_FALSE;
    const lb_attr *attr = ((const lb_element *)element)->attr_class;
    if (attr == NULL || attr->owner != (const lb_element *)element || attr->value == NULL ||
        (Py_ssize_t)attr->value->length != class_length ||
        memcmp(attr->value->data, class_value, (size_t)class_length) != 0)
        Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

/* Per attribute of an element, in order: its number where lexbor knows the name, else the
 * name's characters as read from its entry (to learn the numbers at start-up, and to check that
 * the entries are laid out as name_chars reads them). */
static PyObject *attribute_keys(PyObject *module, PyObject *address) {
    const lb_node *node;
    if (node_address(address, &node) < 0) return NULL;
    PyObject *keys = PyList_New(0);
    if (keys == NULL) return NULL;
    for (const lb_attr *attr = ((const lb_element *)node)->first_attr; attr; attr = attr->next) {
        size_t length;
        const unsigned char *chars = name_chars(attr_key(attr), &length);
        PyObject *key = chars ? PyBytes_FromStringAndSize((const char *)chars, (Py_ssize_t)length)
                              : PyLong_FromSize_t(attr_key(attr));
        if (key == NULL || PyList_Append(keys, key) < 0) {
            Py_XDECREF(key);
            Py_DECREF(keys);
            return NULL;
        }
        Py_DECREF(key);
    }
    return keys;
}

static int table_from(PyObject *seq, Py_ssize_t n, uint16_t **out) {
    PyObject *fast = PySequence_Fast(seq, "a table is a sequence of ints");
    if (fast == NULL) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "tables differ in length");
        return -1;
    }
    *out = PyMem_Calloc((size_t)(n ? n : 1), sizeof(uint16_t));
    if (*out == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (v < 0 || v > 0xFFFF) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "a table entry out of range");
            return -1;
        }
        (*out)[i] = (uint16_t)v;
    }
    Py_DECREF(fast);
    return 0;
}

/* A tuple of (bytes, int) pairs, each bytes non-empty. */
static int check_pairs(PyObject *pairs, const char *what) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(pairs); k++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !PyBytes_Check(PyTuple_GET_ITEM(pair, 0)) ||
            PyBytes_GET_SIZE(PyTuple_GET_ITEM(pair, 0)) == 0 ||
            !PyLong_Check(PyTuple_GET_ITEM(pair, 1))) {
            PyErr_Format(PyExc_ValueError, "%s: pairs of non-empty bytes and an int", what);
            return -1;
        }
    }
    return 0;
}

static int Walker_init(Walker *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"flags", "before", "after", "tag_bits", "tag_names", "text_tag",
                            "role", "itemprop", "href", "literals", "aria", "describe",
                            "hasher", "slot_roles", "main_bits", NULL};
    PyObject *flags, *before, *after, *tag_bits, *tag_names, *literals, *aria, *describe_fn,
        *hasher;
    unsigned long long text_tag, role, itemprop, href;
    unsigned int slot_roles, main_bits;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "OOOOO!KKKKO!O!OOII", names, &flags, &before, &after, &tag_bits,
            &PyTuple_Type, &tag_names, &text_tag, &role, &itemprop, &href, &PyTuple_Type,
            &literals, &PyTuple_Type, &aria, &describe_fn, &hasher, &slot_roles, &main_bits))
        return -1;
    if (check_pairs(literals, "literals") < 0 || check_pairs(aria, "aria") < 0) return -1;
    if (!PyCallable_Check(describe_fn) || !PyCallable_Check(hasher)) {
        PyErr_SetString(PyExc_TypeError, "describe and hasher are callables");
        return -1;
    }
    Py_ssize_t n = PySequence_Size(flags);
    if (n < 0) return -1;
    if (PyTuple_GET_SIZE(tag_names) != n) {
        PyErr_SetString(PyExc_ValueError, "tables differ in length");
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *name = PyTuple_GET_ITEM(tag_names, k);
        if (name != Py_None && !PyBytes_Check(name)) {
            PyErr_SetString(PyExc_ValueError, "tag names are bytes or None");
            return -1;
        }
    }
    PyMem_Free(self->flags);
    PyMem_Free(self->before);
    PyMem_Free(self->after);
    PyMem_Free(self->tag_bits);
    self->flags = self->before = self->after = self->tag_bits = NULL;
    if (table_from(flags, n, &self->flags) < 0 || table_from(before, n, &self->before) < 0 ||
        table_from(after, n, &self->after) < 0 || table_from(tag_bits, n, &self->tag_bits) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < n; k++)
        if ((self->flags[k] & F_ROLE_TAG) && PyTuple_GET_ITEM(tag_names, k) == Py_None) {
            PyErr_SetString(PyExc_ValueError, "a role-bearing tag without its name");
            return -1;
        }
    self->ntags = n;
    self->text_tag = (uintptr_t)text_tag;
    self->attr_role = (uintptr_t)role;
    self->attr_itemprop = (uintptr_t)itemprop;
    self->attr_href = (uintptr_t)href;
    self->slot_roles = slot_roles;
    self->main_bits = main_bits;
    memset(self->first, 0, sizeof self->first);
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(literals); k++) {
        PyObject *word = PyTuple_GET_ITEM(PyTuple_GET_ITEM(literals, k), 0);
        unsigned char c = (unsigned char)PyBytes_AS_STRING(word)[0];
        self->first[c >> 6] |= (uint64_t)1 << (c & 63);
    }
    Py_INCREF(literals);
    Py_XSETREF(self->literals, literals);
    Py_INCREF(aria);
    Py_XSETREF(self->aria, aria);
    Py_INCREF(tag_names);
    Py_XSETREF(self->tag_names, tag_names);
    Py_INCREF(describe_fn);
    Py_XSETREF(self->describe, describe_fn);
    Py_INCREF(hasher);
    Py_XSETREF(self->hasher, hasher);
    return 0;
}

static void Walker_dealloc(Walker *self) {
    Py_XDECREF(self->literals);
    Py_XDECREF(self->aria);
    Py_XDECREF(self->tag_names);
    Py_XDECREF(self->describe);
    Py_XDECREF(self->hasher);
    PyMem_Free(self->tag_bits);
    PyMem_Free(self->flags);
    PyMem_Free(self->before);
    PyMem_Free(self->after);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Walker_methods[] = {
    {"roles", (PyCFunction)Walker_roles, METH_O,
     "roles(address) -> (elements, plan, slots, owners): per element its role bits, per "
     "opening role mark its slot's digest (array Q) and its element's index (array I)"},
    {"text", (PyCFunction)Walker_text, METH_VARARGS,
     "text(address, plan, structure) -> (marked, candidate_tags, (hashed, spans, which, "
     "starts, ends)), or None if a text is not UTF-8"},
    {"block_texts", (PyCFunction)Walker_block_texts, METH_VARARGS,
     "block_texts(marked, inline_spaces) -> [normalised UTF-8 text of each block], or None if "
     "marked is not UTF-8"},
    {"split_blocks", (PyCFunction)Walker_split_blocks, METH_VARARGS,
     "split_blocks(marked, block_type, max_ancestors) -> [block_type(...), ...]"},
    {"feature_columns", (PyCFunction)Walker_feature_columns, METH_VARARGS,
     "feature_columns(blocks, sentence_end, short_block) -> 30 columns of floats, or None"},
    {"weighted_sum", (PyCFunction)Walker_weighted_sum, METH_VARARGS,
     "weighted_sum(columns, weights, bias) -> per block, bias + the weighted columns; None "
     "for columns that are not lists of floats of one length"},
    {"context_columns", (PyCFunction)Walker_context_columns, METH_VARARGS,
     "context_columns(blocks, scores, window, core_share, clip) -> 9 columns, or None"},
    {"without_structure_marks", (PyCFunction)Walker_without_structure_marks, METH_VARARGS,
     "without_structure_marks(marked) -> marked without its structure marks"},
    {"doomed_slots", (PyCFunction)Walker_doomed_slots, METH_VARARGS,
     "doomed_slots(marked, page_slots, slots, limit) -> [(start, end, ordinal), ...]"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "warcdeboil.page._walk.Walker",
    .tp_basicsize = sizeof(Walker),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "analyse()'s walks over a body, with the tag tables they read",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Walker_init,
    .tp_dealloc = (destructor)Walker_dealloc,
    .tp_methods = Walker_methods,
};

static PyMethodDef module_methods[] = {
    {"probe", probe, METH_VARARGS,
     "probe(element, parent, first_child, next, tag, text, text_tag, text_length, class) -> "
     "whether lexbor's structs are laid out as this module reads them"},
    {"attribute_keys", attribute_keys, METH_O, "attribute_keys(address) -> [name number or characters, ...]"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_walk", "Pass 1's walks over lexbor's tree, in C.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__walk(void) {
    if (PyType_Ready(&WalkerType) < 0) return NULL;
    field_chars = PyUnicode_InternFromString("chars");
    field_link_chars = PyUnicode_InternFromString("link_chars");
    field_kind = PyUnicode_InternFromString("kind");
    field_roles = PyUnicode_InternFromString("roles");
    field_link_first = PyUnicode_InternFromString("link_first");
    field_ancestors = PyUnicode_InternFromString("ancestors");
    field_text = PyUnicode_InternFromString("text");
    PyObject *builtins = PyImport_ImportModule("builtins");
    if (builtins == NULL) return NULL;
    builtin_sum = PyObject_GetAttrString(builtins, "sum");
    Py_DECREF(builtins);
    if (builtin_sum == NULL) return NULL;
    if (!field_chars || !field_link_chars || !field_kind || !field_roles || !field_link_first ||
        !field_ancestors || !field_text)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&WalkerType);
    if (PyModule_AddObject(m, "Walker", (PyObject *)&WalkerType) < 0) {
        Py_DECREF(&WalkerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
