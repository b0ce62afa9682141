/*
 * warcdeboil.page._walk: the walks over marked text: the structure marks taken out, the text
 * blocks of a signature, content mode's blocks, the template slots a site removes.
 */
#include "_walk.h"

/* dom.without_structure_marks: the marked text without its structure marks (U+FDD3..U+FDE0),
 * those that open it each with the space after it, the others each with the space before it. */
PyObject *Walker_without_structure_marks(Walker *self, PyObject *args) {
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

/* ---- a page's text blocks (dom._BLOCK_RUN, str.split) ---- */

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
PyObject *Walker_block_texts(Walker *self, PyObject *args) {
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

/* One character into a buffer of UCS-4 code points. */
static inline int chars_put(Buf *chars, Py_UCS4 ch) {
    return buf_put(chars, &ch, sizeof ch);
}

/* content.split_blocks in one pass over the marked text: per text between runs of block marks
 * that holds a word, ``block_type(text, kind, chars, link_chars, ancestors, marked, roles,
 * link_first)``, with the state the marks of the runs set (see there). A run is a block mark and
 * any spaces and block marks up to the last mark of them (content.BLOCK_RUN_SPLIT). */
PyObject *Walker_split_blocks(Walker *self, PyObject *args) {
    PyObject *marked, *block_type;
    Py_ssize_t max_ancestors;
    if (!PyArg_ParseTuple(args, "UOn", &marked, &block_type, &max_ancestors)) return NULL;
    int kind = PyUnicode_KIND(marked);
    const void *data = PyUnicode_DATA(marked);
    Py_ssize_t n = PyUnicode_GET_LENGTH(marked);
    PyObject *blocks = PyList_New(0), *ancestors = NULL, *link_open = NULL;
    Ints stack = {0};
    Buf plain = {0}; /* UCS-4 */
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
            PyObject *text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, plain.data,
                                                       (Py_ssize_t)(plain.size / sizeof(Py_UCS4)));
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
PyObject *Walker_doomed_slots(Walker *self, PyObject *args) {
    Py_buffer view, found_slots;
    PyObject *slots;
    double limit;
    if (!PyArg_ParseTuple(args, "y*y*Od", &view, &found_slots, &slots, &limit)) return NULL;
    const unsigned char *s = view.buf;
    size_t n = (size_t)view.len;
    const uint64_t *page_slots = found_slots.buf;
    Py_ssize_t count = found_slots.len / (Py_ssize_t)sizeof(uint64_t);
    Buf stacks[ROLES] = {{0}}; /* per role, the RoleOpen of its elements still open */
    Py_ssize_t ordinal = 0, mains = 0, longest = -2; /* -2: not found yet */
    PyObject *found = PyList_New(0);
    if (found == NULL) goto done;
    for (size_t i = 0; i + 2 < n; i++) {
        if (s[i] != 0xEF || s[i + 1] != 0xB7 || s[i + 2] < 0xA1 || s[i + 2] > 0xAA) continue;
        int role = (s[i + 2] - 0xA1) / 2, closing = (s[i + 2] - 0xA1) % 2;
        if (!closing) {
            RoleOpen opened = {(Py_ssize_t)i, ordinal, mains};
            if (buf_put(&stacks[role], &opened, sizeof opened) < 0) goto fail;
            ordinal++;
            mains += role == ROLE_MAIN;
        } else if (stacks[role].size) {
            stacks[role].size -= sizeof(RoleOpen);
            RoleOpen open = *(const RoleOpen *)(stacks[role].data + stacks[role].size);
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
    for (int role = 0; role < ROLES; role++) PyMem_Free(stacks[role].data);
    PyBuffer_Release(&view);
    PyBuffer_Release(&found_slots);
    return found;
}

