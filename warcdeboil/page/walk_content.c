/*
 * warcdeboil.page._walk: content mode's features and scores, the doubles Python's to the last
 * bit (see content.feature_columns, context_columns, _weighted_sum).
 */
#include "_walk.h"

/* ---- content mode's first-stage features (content.feature_columns) ---- */

#define FEATURES 30

/* The Block attributes read, interned once (PyInit__walk). */
static PyObject *field_chars, *field_link_chars, *field_kind, *field_roles, *field_link_first,
    *field_ancestors, *field_text;
static PyObject *builtin_sum; /* Python's sum, for the total a page kept */

/* What a node kept (its blocks' kept values summed from 0.0 in document order) and holds. */
typedef struct {
    double kept;
    long long chars;
} NodeSums;

/* Interns the attribute names read and finds Python's sum (at the module's import). */
int content_names_init(void) {
    field_chars = PyUnicode_InternFromString("chars");
    field_link_chars = PyUnicode_InternFromString("link_chars");
    field_kind = PyUnicode_InternFromString("kind");
    field_roles = PyUnicode_InternFromString("roles");
    field_link_first = PyUnicode_InternFromString("link_first");
    field_ancestors = PyUnicode_InternFromString("ancestors");
    field_text = PyUnicode_InternFromString("text");
    PyObject *builtins = PyImport_ImportModule("builtins");
    if (builtins == NULL) return -1;
    builtin_sum = PyObject_GetAttrString(builtins, "sum");
    Py_DECREF(builtins);
    if (!builtin_sum || !field_chars || !field_link_chars || !field_kind || !field_roles ||
        !field_link_first || !field_ancestors || !field_text)
        return -1;
    return 0;
}

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
PyObject *Walker_feature_columns(Walker *self, PyObject *args) {
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
PyObject *Walker_weighted_sum(Walker *self, PyObject *args) {
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

PyObject *Walker_context_columns(Walker *self, PyObject *args) {
    PyObject *blocks, *scores;
    Py_ssize_t window;
    double core_share, clip;
    if (!PyArg_ParseTuple(args, "O!O!ndd", &PyList_Type, &blocks, &PyList_Type, &scores, &window,
                          &core_share, &clip))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(blocks);
    if (PyList_GET_SIZE(scores) != n || n == 0) Py_RETURN_NONE;
    PyObject *result = NULL, *nodes_index = NULL, *kept_list = NULL, *total_obj = NULL;
    double *clipped = NULL, *probs = NULL, *kept = NULL, *prefix_kept = NULL, *out = NULL;
    long long *chars = NULL, *prefix_chars = NULL;
    Buf sums = {0}; /* per node, in the order the blocks first name it: a NodeSums */
    PyObject **ancestors = NULL;
    Py_ssize_t *parent_at = NULL, nodes = 0;
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
                NodeSums zero = {0.0, 0};
                if (buf_put(&sums, &zero, sizeof zero) < 0) goto fail;
                index = nodes++;
                PyObject *number = PyLong_FromSsize_t(index);
                if (number == NULL || PyDict_SetItem(nodes_index, node, number) < 0) {
                    Py_XDECREF(number);
                    goto fail;
                }
                Py_DECREF(number);
            } else {
                index = PyLong_AsSsize_t(at);
            }
            NodeSums *sum = (NodeSums *)sums.data + index;
            sum->kept = sum->kept + kept[i];
            sum->chars += chars[i];
            if (d == depth - 1) parent_at[i] = index;
        }
    }
    /* the core: of the nodes that kept core_share of the total, the one with the fewest
     * characters (the first such, in the nodes' order); the root (0) when none did */
    Py_ssize_t core = -1;
    const NodeSums *node = (const NodeSums *)sums.data;
    for (Py_ssize_t k = 0; k < nodes; k++)
        if (node[k].kept >= core_share * total_kept &&
            (core < 0 || node[k].chars < node[core].chars))
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
            case 4: x = node[parent_at[i]].kept / (double)node[parent_at[i]].chars; break;
            case 5: x = node[parent_at[i]].kept / total_kept; break;
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
    PyMem_Free(sums.data);
    return result;
}

