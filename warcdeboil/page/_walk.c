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
 *
 * The files: _walk.h (lexbor's structs, the Walker, buffers, UTF-8), walk_tree.c (the walks over
 * the tree), walk_text.c (the walks over marked text), walk_content.c (content mode's features
 * and scores), and this one: the layout probe, the Walker's tables, the module.
 */
#include "_walk.h"

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
    if (content_names_init() < 0) return NULL;
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

