/*
 * warcdeboil.page._walk: the walks over lexbor's tree (dom.analyse's): the roles of a body's
 * elements and their slots, the marked text made without touching the tree, the candidates'
 * spans and the texts their hashes read.
 */
#include "_walk.h"

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
    Buf opened = {0}; /* the Open of each element the walk is inside, outermost first */
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
                    Open open = {f, (unsigned char)bits, after};
                    if (buf_put(&opened, &open, sizeof open) < 0) goto done;
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
            opened.size -= sizeof(Open);
            const Open *open = (const Open *)(opened.data + opened.size);
            if (close_element(t, open->flags, open->bits, open->after) < 0)
                goto done;
        }
        if (node == NULL) break;
        node = node->next;
    }
    status = 0;
done:
    PyMem_Free(opened.data);
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

/* ``marked`` without every structure and role mark that follows a space, with that space
 * (dom._SPACED_UNHASHED_MARK_BYTES): what a candidate's hash reads. */
static int unhashed_removed(const Buf *marked, Buf *hashed) {
    return spaced_marks_removed((const unsigned char *)marked->data, marked->size, 0xAA, hashed);
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

PyObject *Walker_text(Walker *self, PyObject *args) {
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
PyObject *Walker_roles(Walker *self, PyObject *address) {
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

