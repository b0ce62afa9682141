/*
 * warcdeboil.corpus._words: the word codes of a page's text, in C.
 *
 * The quality filters read a page as one 64-bit code a word (warcdeboil/corpus/words.py:
 * word_code): the text is cut at white space, each piece is split again where marks stand at
 * its edges or inside it (split_chunk), and each word is hashed. In Python that is a few numpy
 * passes for the plainest pieces and a regular-expression split, cached, for the others; the
 * splits of pieces seen for the first time were most of the four filters' CPU. This module
 * splits every piece by the same rules, written out as the regular expressions of words.py
 * match (leftmost start, alternatives in order), and hashes the words as word_hash does. It
 * also reads the codes as the filters do: their counts (PageText.counts), the stop words found
 * (PageText.present) and Gopher's n-gram rules (gopher._ngram_reasons), with the same bounds.
 *
 * A piece holding a character of a script written without spaces, or one of the four letters
 * that Python's case-insensitive matching pairs with an ASCII letter (U+0130, U+0131, U+017F,
 * U+212A), is not split here: its codes are looked up in the cache the caller passes, which
 * splits it in Python when it is new. Character classes follow Python's re in Unicode mode:
 * \w is Py_UNICODE_ISALNUM or "_", \d is Py_UNICODE_ISDECIMAL, str.isalpha Py_UNICODE_ISALPHA.
 *
 * The tables (abbreviations, English words split in two, the marks split off the edges, ...)
 * come from words.py at construction: one source for both paths. The Python path stays as the
 * fallback and the oracle (WordCache.piece_codes); warcdeboil.corpus.codes checks this module
 * against it before using it, and the tests compare both on every page of the evaluation sets
 * and on every code point.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* words.py's code layout: the id's ID_BITS above LENGTH_BITS of length above FLAG_BITS. */
#define FLAG_BITS 3
#define LENGTH_BITS 16
#define ID_BITS (64 - LENGTH_BITS - FLAG_BITS)
#define MAX_LENGTH ((1u << LENGTH_BITS) - 1)
#define ALPHABETIC 1u
#define PROPER 2u
#define SPACED 4u
#define HASH_BASE 0x100000001B3ull

/* The n-gram rules count places in 32 bits: a page of more words goes the Python way. */
#define MAX_WORDS (1 << 29)

/* A short ASCII word of a table, and what goes with it (a cut, or a whole piece's cuts). */
#define WORD_CHARS 16
#define MAX_CUTS 4
typedef struct {
    Py_ssize_t length;
    char chars[WORD_CHARS];
    int cuts[MAX_CUTS]; /* where its words end (the last is length) */
    int n_cuts;
} TableWord;

typedef struct {
    TableWord *words;
    Py_ssize_t size;
    /* per first character (in lower case too), the lengths of the words that start with it, a
     * bit each: most pieces are no word of a table, and this says so at once */
    uint32_t lengths[128];
} Table;

typedef struct {
    Py_UCS4 first, last;
} Range;

typedef struct {
    Range *ranges;
    Py_ssize_t size;
} Ranges;

typedef struct {
    PyObject_HEAD
    Table abbreviations, informal, whole;
    unsigned char last_marks[128];  /* ASCII marks of words.py's _LAST_MARKS */
    Ranges prefix, suffix, deferred; /* sorted, disjoint */
} Coder;

/* ---- growing arrays ---- */

/* Room for ``needed`` items of ``item`` bytes in *items (capacity *capacity), doubled as it
 * grows; -1 with MemoryError set when there is none. */
static int reserve(void **items, Py_ssize_t *capacity, Py_ssize_t needed, size_t item) {
    if (needed <= *capacity) return 0;
    Py_ssize_t grown = *capacity ? *capacity : 64;
    while (grown < needed) grown *= 2;
    void *moved = PyMem_Realloc(*items, (size_t)grown * item);
    if (moved == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *items = moved;
    *capacity = grown;
    return 0;
}

typedef struct {
    Py_ssize_t *items;
    Py_ssize_t size, capacity;
} Spans; /* word boundaries as pairs (start, end) */

static int spans_add(Spans *spans, Py_ssize_t start, Py_ssize_t end) {
    if (reserve((void **)&spans->items, &spans->capacity, spans->size + 2, sizeof(Py_ssize_t)) < 0)
        return -1;
    spans->items[spans->size++] = start;
    spans->items[spans->size++] = end;
    return 0;
}

typedef struct {
    uint64_t *items;
    Py_ssize_t size, capacity;
} Codes;

static int codes_reserve(Codes *codes, Py_ssize_t more) {
    return reserve((void **)&codes->items, &codes->capacity, codes->size + more, sizeof(uint64_t));
}

/* ---- characters ---- */

static inline int is_alnum(Py_UCS4 c) {
    return c < 128 ? Py_ISALNUM(c) != 0 : Py_UNICODE_ISALNUM(c) != 0;
}
static inline int is_alpha(Py_UCS4 c) {
    return c < 128 ? Py_ISALPHA(c) != 0 : Py_UNICODE_ISALPHA(c) != 0;
}
static inline int is_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; } /* [0-9] */
static inline int is_word_char(Py_UCS4 c) { return c == '_' || is_alnum(c); } /* \w */
/* [^\W\d_]: a word character that is neither a decimal digit nor "_". */
static inline int is_letter(Py_UCS4 c) {
    return c < 128 ? Py_ISALPHA(c) != 0 : (Py_UNICODE_ISALNUM(c) && !Py_UNICODE_ISDECIMAL(c));
}
static inline int is_ascii_letter(Py_UCS4 c) { return c < 128 && Py_ISALPHA(c) != 0; }
static inline Py_UCS4 ascii_lower(Py_UCS4 c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static int in_ranges(const Ranges *set, Py_UCS4 c) {
    Py_ssize_t lo = 0, hi = set->size;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (c < set->ranges[mid].first)
            hi = mid;
        else if (c > set->ranges[mid].last)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

/* The table's entry spelled s[start:end] (with fold, ASCII letters compared in lower case). */
static const TableWord *find(const Table *table, const Py_UCS4 *s, Py_ssize_t start,
                             Py_ssize_t end, int fold) {
    Py_ssize_t length = end - start;
    if (length > WORD_CHARS || length < 1) return NULL;
    Py_UCS4 first = fold ? ascii_lower(s[start]) : s[start];
    if (first >= 128 || !(table->lengths[first] >> length & 1)) return NULL;
    for (Py_ssize_t i = 0; i < table->size; i++) {
        const TableWord *word = &table->words[i];
        if (word->length != length) continue;
        Py_ssize_t k = 0;
        for (; k < length; k++) {
            Py_UCS4 c = fold ? ascii_lower(s[start + k]) : s[start + k];
            if (c != (Py_UCS4)(unsigned char)word->chars[k]) break;
        }
        if (k == length) return word;
    }
    return NULL;
}

static int all_of(const Py_UCS4 *s, Py_ssize_t start, Py_ssize_t end, int (*test)(Py_UCS4)) {
    for (Py_ssize_t i = start; i < end; i++)
        if (!test(s[i])) return 0;
    return end > start;
}

/* ---- the rules of words.py, over the piece s[lo:hi] ---- */

/* _keeps_period: s[lo:hi] (ending in ".") is an abbreviation or initials
 * ([A-Za-z]\.|(?:[A-Za-z]{1,2}\.){2,}). */
static int keeps_period(const Coder *coder, const Py_UCS4 *s, Py_ssize_t lo, Py_ssize_t hi) {
    if (find(&coder->abbreviations, s, lo, hi - 1, 0) != NULL) return 1;
    Py_ssize_t groups = 0, letters = 0;
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (is_ascii_letter(s[i])) {
            if (++letters > 2) return 0;
        } else if (s[i] == '.' && letters > 0) {
            groups++;
            letters = 0;
        } else {
            return 0;
        }
    }
    if (letters) return 0;
    return groups >= 2 || (groups == 1 && hi - lo == 2);
}

/* _ADDRESS.match (its three forms), with _address's test for ".", "@" or ":" first. */
static int is_address(const Py_UCS4 *s, Py_ssize_t lo, Py_ssize_t hi) {
    Py_ssize_t at = -1, slash = -1;
    int marked = 0;
    for (Py_ssize_t i = lo; i < hi; i++) {
        Py_UCS4 c = s[i];
        if (c == '.' || c == ':') marked = 1;
        if (c == '@' && at < 0) at = i, marked = 1;
        if (c == '/' && slash < 0) slash = i;
    }
    if (!marked) return 0;
    /* (?:https?://|www\.)\S+$, in any case */
    static const char *const schemes[] = {"http://", "https://", "www."};
    for (int k = 0; k < 3; k++) {
        Py_ssize_t length = (Py_ssize_t)strlen(schemes[k]), i = 0;
        while (i < length && lo + i < hi && ascii_lower(s[lo + i]) == (Py_UCS4)schemes[k][i]) i++;
        if (i == length && hi - lo > length) return 1;
    }
    /* [^\W_][\w.+-]*@[\w-]+(?:\.[\w-]+)+$ */
    if (at > lo && is_alnum(s[lo])) {
        int ok = 1;
        for (Py_ssize_t i = lo + 1; i < at && ok; i++)
            ok = is_word_char(s[i]) || s[i] == '.' || s[i] == '+' || s[i] == '-';
        Py_ssize_t part = 0, parts = 0;
        for (Py_ssize_t i = at + 1; i < hi && ok; i++) {
            if (s[i] == '.') {
                ok = part > 0;
                parts++;
                part = 0;
            } else {
                ok = is_word_char(s[i]) || s[i] == '-';
                part++;
            }
        }
        if (ok && part > 0 && parts >= 1) return 1;
    }
    /* (?:[^\W_][\w-]*\.)+[a-z]{2,}/\S*$, in any case: labels up to the first "/" */
    if (slash > lo) {
        Py_ssize_t last_dot = -1;
        for (Py_ssize_t i = lo; i < slash; i++)
            if (s[i] == '.') last_dot = i;
        if (last_dot < 0 || slash - last_dot - 1 < 2 ||
            !all_of(s, last_dot + 1, slash, is_ascii_letter))
            return 0;
        Py_ssize_t start = lo;
        for (Py_ssize_t i = lo; i <= last_dot; i++) {
            if (s[i] != '.') continue;
            if (i == start || !is_alnum(s[start])) return 0;
            for (Py_ssize_t k = start + 1; k < i; k++)
                if (!is_word_char(s[k]) && s[k] != '-') return 0;
            start = i + 1;
        }
        return 1;
    }
    return 0;
}

/* _PREFIX.match at lo: the end of the mark split off the start, or -1. */
static Py_ssize_t prefix_end(const Coder *coder, const Py_UCS4 *s, Py_ssize_t lo, Py_ssize_t hi) {
    Py_UCS4 c = s[lo];
    Py_UCS4 next = lo + 1 < hi ? s[lo + 1] : 0;
    int has_next = lo + 1 < hi;
    if ((c == '.' || c == '-') && has_next && next == c) { /* \.\.+ and --+ */
        Py_ssize_t end = lo + 1;
        while (end < hi && s[end] == c) end++;
        return end;
    }
    if (c == 0x2026 || in_ranges(&coder->prefix, c)) return lo + 1;
    if (c == '-' && !(has_next && is_alnum(next))) return lo + 1;
    if (c == '.' && !(has_next && is_digit(next))) return lo + 1;
    return -1;
}

/* _suffix: the start of _SUFFIX's leftmost match that ends the piece, or -1. The search starts
 * at hi - 4 (or lo) unless the piece ends in "." or "-", as _suffix's does. */
static Py_ssize_t suffix_start(const Coder *coder, const Py_UCS4 *s, Py_ssize_t lo, Py_ssize_t hi) {
    Py_UCS4 last = s[hi - 1];
    Py_ssize_t from = (last == '.' || last == '-' || hi - lo <= 4) ? lo : hi - 4;
    Py_ssize_t best = -1;
    if (last == '.' || last == '-') { /* \.\.+$ and --+$: the last run, two long at least */
        Py_ssize_t run = hi - 1;
        while (run > lo && s[run - 1] == last) run--;
        if (run < from) run = from;
        if (hi - run >= 2) best = run;
    }
    /* (?<=[^\W_])(?:n['’]t|['’](?:s|m|d|ll|ve|re))$, in any case */
    for (Py_ssize_t length = 3; length >= 2; length--) {
        Py_ssize_t p = hi - length;
        if (p < from || p - 1 < lo || !is_alnum(s[p - 1]) || (best >= 0 && best <= p)) continue;
        Py_UCS4 a = ascii_lower(s[p]), b = ascii_lower(s[p + 1]);
        int quote_a = a == '\'' || a == 0x2019, quote_b = b == '\'' || b == 0x2019;
        int ok;
        if (length == 3) {
            Py_UCS4 z = ascii_lower(s[p + 2]);
            ok = (a == 'n' && quote_b && z == 't') ||
                 (quote_a && ((b == 'l' && z == 'l') || (b == 'v' && z == 'e') ||
                              (b == 'r' && z == 'e')));
        } else {
            ok = quote_a && (b == 's' || b == 'm' || b == 'd');
        }
        if (ok) best = p;
    }
    if (best < 0 && hi - 1 >= from &&
        (last == 0x2026 || last == '.' || in_ranges(&coder->suffix, last)))
        best = hi - 1;
    return best;
}

/* _UNIT.fullmatch of s[lo:hi] (s[lo] a digit): where the unit starts, or -1. */
static Py_ssize_t unit_start(const Py_UCS4 *s, Py_ssize_t lo, Py_ssize_t hi) {
    static const char *const units[] = {"km", "cm", "mm", "m", "kg", "mg", "g", "oz", "ft", "mph",
                                        "kb", "mb", "gb", "am", "pm", "GB", "MB", "TB", "KB", "G",
                                        "K"};
    Py_ssize_t k = lo + 1;
    while (k < hi && (is_digit(s[k]) || s[k] == '.' || s[k] == ',')) k++;
    Py_ssize_t length = hi - k;
    if (length < 1 || length > 3) return -1;
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
        if ((Py_ssize_t)strlen(units[u]) != length) continue;
        Py_ssize_t i = 0;
        while (i < length && s[k + i] == (Py_UCS4)units[u][i]) i++;
        if (i == length) return k;
    }
    return -1;
}

/* The words of a table entry (a _WHOLE piece, or an _INFORMAL word cut in two) at lo. */
static int add_entry(Spans *out, const TableWord *word, Py_ssize_t lo) {
    Py_ssize_t start = lo;
    for (int k = 0; k < word->n_cuts; k++) {
        if (spans_add(out, start, lo + word->cuts[k]) < 0) return -1;
        start = lo + word->cuts[k];
    }
    return 0;
}

/* _inner: the words of a piece with nothing left to split at its edges. */
static int inner(const Coder *coder, const Py_UCS4 *s, Py_ssize_t lo, Py_ssize_t hi, Spans *out) {
    if (all_of(s, lo, hi, is_alnum)) {
        const TableWord *informal = NULL;
        if (all_of(s, lo, hi, is_alpha)) informal = find(&coder->informal, s, lo, hi, 1);
        return informal ? add_entry(out, informal, lo) : spans_add(out, lo, hi);
    }
    if (is_address(s, lo, hi)) return spans_add(out, lo, hi);
    /* _INFIX.split, the separators kept and empty parts left out */
    Py_ssize_t part = lo, i = lo;
    while (i < hi) {
        Py_UCS4 c = s[i];
        int has_prev = i > lo, has_next = i + 1 < hi;
        Py_UCS4 prev = has_prev ? s[i - 1] : 0, next = has_next ? s[i + 1] : 0;
        Py_ssize_t end = -1;
        if (c == '.' && has_next && next == '.') { /* \.\.+ */
            end = i + 1;
            while (end < hi && s[end] == '.') end++;
        } else if (c == 0x2026) {
            end = i + 1;
        } else if (has_prev && is_alnum(prev) && c == '-' && has_next && next == '-') {
            Py_ssize_t run = i + 1; /* --+ before a letter */
            while (run < hi && s[run] == '-') run++;
            if (run < hi && is_letter(s[run])) end = run;
        } else if (has_prev && is_alnum(prev) &&
                   (c == '-' || c == 0x2013 || c == 0x2014 || c == '~') && has_next &&
                   is_letter(next)) {
            end = i + 1;
        }
        if (end < 0 && has_prev && has_next) {
            if (is_digit(prev) && (c == '-' || c == '+' || c == '*' || c == '^') &&
                (is_digit(next) || next == '-'))
                end = i + 1;
            else if (is_alnum(prev) && (c == ':' || c == '<' || c == '>' || c == '=' || c == '/') &&
                     is_letter(next))
                end = i + 1;
            else if (c == ',' && is_letter(prev) && is_letter(next))
                end = i + 1;
            else if (c == '.' && prev >= 'a' && prev <= 'z' && next >= 'A' && next <= 'Z')
                end = i + 1;
        }
        if (end < 0) {
            i++;
            continue;
        }
        if (i > part && spans_add(out, part, i) < 0) return -1;
        if (spans_add(out, i, end) < 0) return -1;
        part = i = end;
    }
    return part < hi ? spans_add(out, part, hi) : 0;
}

/* _split_marks: marks split off the edges one at a time, then inside. */
static int split_marks(const Coder *coder, const Py_UCS4 *s, Py_ssize_t lo, Py_ssize_t hi,
                       Spans *out, Spans *tail) {
    tail->size = 0;
    while (lo < hi) {
        const TableWord *whole = find(&coder->whole, s, lo, hi, 0);
        if (whole != NULL) {
            if (add_entry(out, whole, lo) < 0) return -1;
            lo = hi;
            break;
        }
        Py_ssize_t suffix = suffix_start(coder, s, lo, hi);
        if (suffix < 0 && is_address(s, lo, hi)) break;
        Py_ssize_t prefix = is_alnum(s[lo]) ? -1 : prefix_end(coder, s, lo, hi);
        if (prefix >= 0 && prefix < hi) {
            if (spans_add(out, lo, prefix) < 0) return -1;
            lo = prefix;
            continue;
        }
        if (suffix > lo) {
            if (suffix == hi - 1 && s[suffix] == '.' && keeps_period(coder, s, lo, hi)) break;
            if (spans_add(tail, suffix, hi) < 0) return -1;
            hi = suffix;
            continue;
        }
        Py_ssize_t unit;
        if (is_digit(s[lo]) && (unit = unit_start(s, lo, hi)) >= 0) {
            if (spans_add(tail, unit, hi) < 0) return -1;
            hi = unit;
            continue;
        }
        break;
    }
    if (lo < hi && inner(coder, s, lo, hi, out) < 0) return -1;
    for (Py_ssize_t k = tail->size - 2; k >= 0; k -= 2)
        if (spans_add(out, tail->items[k], tail->items[k + 1]) < 0) return -1;
    return 0;
}

/* _framed: an ASCII word (or words joined by single hyphens) with at most one opening mark and
 * closing marks after it, a period only first among them; 0 when the piece is not of that form
 * or the loop must split it (1: its words added). */
static int framed(const Coder *coder, const Py_UCS4 *s, Py_ssize_t n, Spans *out) {
    Py_ssize_t i = (s[0] == '"' || s[0] == '\'' || s[0] == '(') ? 1 : 0;
    Py_ssize_t core = i, hyphens = 0;
    if (i >= n || !is_ascii_letter(s[i])) return 0;
    while (i < n && is_ascii_letter(s[i])) i++;
    while (i + 1 < n && s[i] == '-' && is_ascii_letter(s[i + 1])) {
        hyphens++;
        i++;
        while (i < n && is_ascii_letter(s[i])) i++;
    }
    Py_ssize_t core_end = i;
    if (i < n && s[i] == '.') i++;
    for (Py_ssize_t k = i; k < n; k++)
        if (!strchr(",;:!?)\"'", (int)s[k]) || s[k] == 0) return 0;
    if (!hyphens && (find(&coder->informal, s, core, core_end, 1) != NULL ||
                     find(&coder->whole, s, core, core_end, 0) != NULL))
        return 0;
    if (core_end < n && s[core_end] == '.' && keeps_period(coder, s, core, core_end + 1)) return 0;
    if (core > 0 && spans_add(out, 0, 1) < 0) return -1;
    Py_ssize_t start = core;
    for (Py_ssize_t k = core; k < core_end; k++) {
        if (s[k] != '-') continue;
        if (spans_add(out, start, k) < 0 || spans_add(out, k, k + 1) < 0) return -1;
        start = k + 1;
    }
    if (spans_add(out, start, core_end) < 0) return -1;
    for (Py_ssize_t k = core_end; k < n; k++)
        if (spans_add(out, k, k + 1) < 0) return -1;
    return 1;
}

/* split_chunk for a piece with no character that defers it (see the top of the file). */
static int split_chunk(const Coder *coder, const Py_UCS4 *s, Py_ssize_t n, int ascii, Spans *out,
                       Spans *tail) {
    if (ascii) {
        if (all_of(s, 0, n, is_ascii_letter)) {
            const TableWord *word = find(&coder->informal, s, 0, n, 1);
            if (word == NULL) word = find(&coder->whole, s, 0, n, 0);
            return word ? add_entry(out, word, 0) : spans_add(out, 0, n);
        }
        Py_UCS4 mark = s[n - 1];
        if (n > 1 && coder->last_marks[mark] && all_of(s, 0, n - 1, is_ascii_letter) &&
            find(&coder->informal, s, 0, n - 1, 1) == NULL &&
            find(&coder->whole, s, 0, n - 1, 0) == NULL &&
            (mark != '.' || !keeps_period(coder, s, 0, n))) {
            if (spans_add(out, 0, n - 1) < 0) return -1;
            return spans_add(out, n - 1, n);
        }
        int done = framed(coder, s, n, out);
        if (done != 0) return done < 0 ? -1 : 0;
    } else if (all_of(s, 0, n, is_alpha)) {
        return spans_add(out, 0, n);
    }
    /* the whole-piece test of _split_marks is its loop's first */
    return split_marks(coder, s, 0, n, out, tail);
}

/* A word's code from the polynomial of its code points (word_hash before its mixing), its
 * length and its flags. */
static inline uint64_t code_of(uint64_t h, Py_ssize_t length, unsigned flags) {
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    uint64_t clipped = (uint64_t)length < MAX_LENGTH ? (uint64_t)length : MAX_LENGTH;
    return (((h >> (64 - ID_BITS)) << LENGTH_BITS | clipped) << FLAG_BITS) | flags;
}

/* word_code of s[start:end], a word of a script written with spaces. */
static uint64_t word_code(const Py_UCS4 *s, Py_ssize_t start, Py_ssize_t end) {
    uint64_t h = 0;
    int alpha = 1, any_alpha = 0, any_alnum = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = s[i];
        h = h * HASH_BASE + c;
        if (is_alpha(c))
            any_alpha = any_alnum = 1;
        else {
            alpha = 0;
            if (!any_alnum && is_alnum(c)) any_alnum = 1;
        }
    }
    unsigned flags = SPACED | (alpha ? ALPHABETIC | PROPER
                                     : (any_alpha ? ALPHABETIC : 0) | (any_alnum ? PROPER : 0));
    return code_of(h, end - start, flags);
}

/* The codes of a deferred piece, from the cache (a mapping of piece -> its codes as bytes). */
static int cached_codes(PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *cache,
                        Codes *codes) {
    PyObject *piece = PyUnicode_Substring(text, start, end);
    if (piece == NULL) return -1;
    PyObject *entry = PyObject_GetItem(cache, piece);
    Py_DECREF(piece);
    if (entry == NULL) return -1;
    if (!PyBytes_Check(entry) || PyBytes_GET_SIZE(entry) % 8) {
        Py_DECREF(entry);
        PyErr_SetString(PyExc_TypeError, "the cache's codes must be bytes of 8 a word");
        return -1;
    }
    Py_ssize_t words = PyBytes_GET_SIZE(entry) / 8;
    int ok = codes_reserve(codes, words);
    if (ok == 0) {
        memcpy(codes->items + codes->size, PyBytes_AS_STRING(entry), (size_t)words * 8);
        codes->size += words;
    }
    Py_DECREF(entry);
    return ok;
}

/* Whether a table may hold a word of this first character and length (no: it holds none). */
static inline int may_hold(const Table *table, Py_UCS4 first, Py_ssize_t length) {
    return first < 128 && length <= WORD_CHARS && (table->lengths[first] >> length & 1);
}

/* One piece's codes, from its characters copied to piece[0:n]: a deferred piece's from the
 * cache, any other's split by split_chunk. */
static int piece_codes(Coder *self, const Py_UCS4 *piece, Py_ssize_t n, int ascii, int deferred,
                       PyObject *text, Py_ssize_t start, PyObject *cache, Codes *codes,
                       Spans *words, Spans *tail) {
    if (deferred) return cached_codes(text, start, start + n, cache, codes);
    words->size = 0;
    if (split_chunk(self, piece, n, ascii, words, tail) < 0 ||
        codes_reserve(codes, words->size / 2) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < words->size; k += 2)
        codes->items[codes->size++] = word_code(piece, words->items[k], words->items[k + 1]);
    return 0;
}

/* The loop over a text's pieces, for one width of its characters (CHAR: Py_UCS1, 2 or 4). A
 * piece of ASCII letters that no table may hold is one word, coded from the hash made while
 * reading it (most pieces); any other is copied out and split. */
#define CODE_PIECES(CHAR)                                                                        \
    do {                                                                                         \
        const CHAR *s = (const CHAR *)data;                                                      \
        Py_ssize_t i = 0;                                                                        \
        while (i < n) {                                                                          \
            while (i < n && Py_UNICODE_ISSPACE(s[i])) i++;                                       \
            if (i == n) break;                                                                   \
            Py_ssize_t start = i;                                                                \
            int ascii = 1, deferred = 0, letters = 1;                                            \
            uint64_t h = 0;                                                                      \
            for (; i < n && !Py_UNICODE_ISSPACE(s[i]); i++) {                                    \
                Py_UCS4 c = s[i];                                                                \
                if (c < 128) {                                                                   \
                    h = h * HASH_BASE + c;                                                       \
                    letters &= Py_ISALPHA(c) != 0;                                               \
                    continue;                                                                    \
                }                                                                                \
                ascii = letters = 0;                                                             \
                if (!deferred && in_ranges(&self->deferred, c)) deferred = 1;                    \
            }                                                                                    \
            Py_ssize_t length = i - start;                                                       \
            if (letters && !may_hold(&self->informal, ascii_lower(s[start]), length) &&          \
                !may_hold(&self->whole, s[start], length)) {                                     \
                if (codes_reserve(&codes, 1) < 0) goto done;                                     \
                codes.items[codes.size++] = code_of(h, length, ALPHABETIC | PROPER | SPACED);    \
                continue;                                                                        \
            }                                                                                    \
            if (length > capacity) {                                                             \
                PyMem_Free(piece);                                                               \
                capacity = length * 2;                                                           \
                piece = PyMem_Malloc((size_t)capacity * sizeof(Py_UCS4));                       \
                if (piece == NULL) {                                                             \
                    PyErr_NoMemory();                                                            \
                    goto done;                                                                   \
                }                                                                                \
            }                                                                                    \
            for (Py_ssize_t k = 0; k < length; k++) piece[k] = s[start + k];                     \
            if (piece_codes(self, piece, length, ascii, deferred, text, start, cache, &codes,    \
                            &words, &tail) < 0)                                                  \
                goto done;                                                                       \
        }                                                                                        \
    } while (0)

static PyObject *coder_codes(Coder *self, PyObject *args) {
    PyObject *text, *cache;
    if (!PyArg_ParseTuple(args, "UO:codes", &text, &cache)) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), capacity = 64;
    const void *data = PyUnicode_DATA(text);
    Py_UCS4 *piece = PyMem_Malloc((size_t)capacity * sizeof(Py_UCS4));
    if (piece == NULL) return PyErr_NoMemory();
    Codes codes = {NULL, 0, 0};
    Spans words = {NULL, 0, 0}, tail = {NULL, 0, 0};
    PyObject *result = NULL;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        CODE_PIECES(Py_UCS1);
        break;
    case PyUnicode_2BYTE_KIND:
        CODE_PIECES(Py_UCS2);
        break;
    default:
        CODE_PIECES(Py_UCS4);
    }
    result = PyBytes_FromStringAndSize((const char *)codes.items, codes.size * 8);
done:
    PyMem_Free(piece);
    PyMem_Free(codes.items);
    PyMem_Free(words.items);
    PyMem_Free(tail.items);
    return result;
}

/* The words split_chunk gives a piece; where the piece is deferred, fallback(piece), or None
 * without a fallback. */
static PyObject *coder_split(Coder *self, PyObject *args) {
    PyObject *piece, *fallback = Py_None;
    if (!PyArg_ParseTuple(args, "U|O:split", &piece, &fallback)) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(piece);
    if (n == 0) return PyTuple_New(0);
    Py_UCS4 *s = PyUnicode_AsUCS4Copy(piece);
    if (s == NULL) return NULL;
    int ascii = 1, deferred = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_UNICODE_ISSPACE(s[i])) {
            PyMem_Free(s);
            PyErr_SetString(PyExc_ValueError, "a piece holds no white space");
            return NULL;
        }
        if (s[i] >= 128) ascii = 0;
        if (s[i] >= 128 && in_ranges(&self->deferred, s[i])) deferred = 1;
    }
    PyObject *result = NULL;
    Spans words = {NULL, 0, 0}, tail = {NULL, 0, 0};
    if (deferred) {
        result = fallback == Py_None ? Py_NewRef(Py_None) : PyObject_CallOneArg(fallback, piece);
    } else if (split_chunk(self, s, n, ascii, &words, &tail) == 0) {
        result = PyTuple_New(words.size / 2);
        for (Py_ssize_t k = 0; result != NULL && k < words.size; k += 2) {
            PyObject *word = PyUnicode_Substring(piece, words.items[k], words.items[k + 1]);
            if (word == NULL) Py_CLEAR(result);
            else PyTuple_SET_ITEM(result, k / 2, word);
        }
    }
    PyMem_Free(s);
    PyMem_Free(words.items);
    PyMem_Free(tail.items);
    return result;
}

/* ---- what the filters count in the codes ---- */

/* The codes of a page (any buffer of uint64, as PageText holds them). */
static int read_codes(PyObject *object, Py_buffer *view, const uint64_t **codes, Py_ssize_t *size) {
    if (PyObject_GetBuffer(object, view, PyBUF_SIMPLE) < 0) return -1;
    if (view->len % 8) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "codes are 8 bytes each");
        return -1;
    }
    *codes = (const uint64_t *)view->buf;
    *size = view->len / 8;
    return 0;
}

/* PageText.counts: words with a letter; words proper; of those, words of scripts written with
 * spaces, and their characters. */
static PyObject *coder_counts(Coder *self, PyObject *object) {
    Py_buffer view;
    const uint64_t *codes;
    Py_ssize_t size;
    if (read_codes(object, &view, &codes, &size) < 0) return NULL;
    long long alphabetic = 0, proper = 0, spaced = 0, spaced_chars = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        unsigned flags = (unsigned)(codes[i] & ((1u << FLAG_BITS) - 1));
        alphabetic += (flags & ALPHABETIC) != 0;
        proper += (flags & PROPER) != 0;
        if ((flags & (PROPER | SPACED)) == (PROPER | SPACED)) {
            spaced++;
            spaced_chars += (long long)((codes[i] >> FLAG_BITS) & MAX_LENGTH);
        }
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("LLLL", alphabetic, proper, spaced, spaced_chars);
}

static int compare_ids(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* PageText.present: for each wanted id (uint64 each), whether a word of the page has it; one
 * byte each. */
static PyObject *coder_present(Coder *self, PyObject *args) {
    PyObject *codes_object, *wanted_object;
    if (!PyArg_ParseTuple(args, "OO:present", &codes_object, &wanted_object)) return NULL;
    Py_buffer codes_view, wanted_view;
    const uint64_t *codes, *wanted;
    Py_ssize_t size, count;
    if (read_codes(codes_object, &codes_view, &codes, &size) < 0) return NULL;
    if (read_codes(wanted_object, &wanted_view, &wanted, &count) < 0) {
        PyBuffer_Release(&codes_view);
        return NULL;
    }
    uint64_t *sorted = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(uint64_t));
    PyObject *result = PyBytes_FromStringAndSize(NULL, count);
    if (sorted == NULL || result == NULL) {
        PyMem_Free(sorted);
        Py_XDECREF(result);
        PyBuffer_Release(&codes_view);
        PyBuffer_Release(&wanted_view);
        return sorted == NULL ? PyErr_NoMemory() : NULL;
    }
    memcpy(sorted, wanted, (size_t)count * sizeof(uint64_t));
    qsort(sorted, (size_t)count, sizeof(uint64_t), compare_ids);
    char *found = PyBytes_AS_STRING(result);
    memset(found, 0, (size_t)count);
    unsigned char *seen = PyMem_Calloc((size_t)(count ? count : 1), 1);
    /* A word whose id's low bits no wanted id has is passed over at once: most words. */
    uint64_t filter[16] = {0};
    for (Py_ssize_t k = 0; k < count; k++)
        filter[(sorted[k] >> 6) & 15] |= 1ull << (sorted[k] & 63);
    Py_ssize_t missing = count;
    for (Py_ssize_t i = 0; seen != NULL && missing && i < size; i++) {
        uint64_t id = codes[i] >> (LENGTH_BITS + FLAG_BITS);
        if (!(filter[(id >> 6) & 15] >> (id & 63) & 1)) continue;
        Py_ssize_t lo = 0, hi = count;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (sorted[mid] < id) lo = mid + 1;
            else hi = mid;
        }
        if (lo < count && sorted[lo] == id && !seen[lo]) {
            seen[lo] = 1;
            missing--;
        }
    }
    for (Py_ssize_t k = 0; seen != NULL && k < count; k++) {
        Py_ssize_t lo = 0, hi = count;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (sorted[mid] < wanted[k]) lo = mid + 1;
            else hi = mid;
        }
        found[k] = (char)seen[lo];
    }
    PyBuffer_Release(&codes_view);
    PyBuffer_Release(&wanted_view);
    PyMem_Free(sorted);
    if (seen == NULL) {
        Py_DECREF(result);
        return PyErr_NoMemory();
    }
    PyMem_Free(seen);
    return result;
}

/* A table of n-gram keys: each distinct key, how often it occurs and where first (count 0: a
 * free slot). The slots a count took are listed, to be freed for the next count. */
typedef struct {
    uint64_t key;
    int32_t count, first;
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;
    int32_t *taken;
    Py_ssize_t n_taken;
    int32_t best, best_first; /* the most frequent key's count, the first place of such keys */
} KeyTable;

/* Counts every key of keys[0:size]; returns how many distinct keys there are. With repeats,
 * marks each position whose key occurred before (1) or not (0). */
static Py_ssize_t count_keys(KeyTable *table, const uint64_t *keys, Py_ssize_t size,
                             unsigned char *repeats) {
    for (Py_ssize_t k = 0; k < table->n_taken; k++) table->slots[table->taken[k]].count = 0;
    table->n_taken = 0;
    int32_t best = 0, best_first = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        uint64_t key = keys[i];
        size_t at = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & table->mask;
        Slot *slot = &table->slots[at];
        while (slot->count && slot->key != key) {
            at = (at + 1) & table->mask;
            slot = &table->slots[at];
        }
        if (!slot->count) {
            slot->key = key;
            slot->first = (int32_t)i;
            table->taken[table->n_taken++] = (int32_t)at;
        }
        if (repeats) repeats[i] = slot->count > 0;
        int32_t count = ++slot->count;
        if (count > best || (count == best && slot->first < best_first)) {
            best = count;
            best_first = slot->first;
        }
    }
    table->best = best;
    table->best_first = best_first;
    return table->n_taken;
}

/* gopher._ngram_reasons in C, the same bounds in the same order (so the same answers): the
 * n-gram lengths m whose rule flags the page, in increasing order. top: (m, n, limit) of the
 * most-frequent-n-gram rules, dup: (m, limit) of the repeated-n-gram rules. */
static PyObject *coder_ngram_flags(Coder *self, PyObject *args) {
    PyObject *codes_object, *top_object, *dup_object;
    long long chars;
    int union_;
    if (!PyArg_ParseTuple(args, "OLOOp:ngram_flags", &codes_object, &chars, &top_object,
                          &dup_object, &union_))
        return NULL;
#define MAX_M 256
    long top_n[MAX_M] = {0}, is_dup[MAX_M] = {0};
    double top_limit[MAX_M], dup_limit[MAX_M];
    Py_ssize_t max_top = 0, max_m = 0;
    for (int pass = 0; pass < 2; pass++) {
        PyObject *rules = PySequence_Fast(pass ? dup_object : top_object, "rules are a sequence");
        if (rules == NULL) return NULL;
        for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(rules); k++) {
            long m, n = 0;
            double limit;
            PyObject *rule = PySequence_Fast_GET_ITEM(rules, k);
            int ok = pass ? PyArg_ParseTuple(rule, "ld", &m, &limit)
                          : PyArg_ParseTuple(rule, "lld", &m, &n, &limit);
            if (ok && (m < 2 || m >= MAX_M)) {
                PyErr_SetString(PyExc_ValueError, "n-grams of 2 to 255 words");
                ok = 0;
            }
            if (!ok) {
                Py_DECREF(rules);
                return NULL;
            }
            if (pass) {
                is_dup[m] = 1;
                dup_limit[m] = limit;
            } else {
                top_n[m] = n;
                top_limit[m] = limit;
                if (m > max_top) max_top = m;
            }
            if (m > max_m) max_m = m;
        }
        Py_DECREF(rules);
    }
    Py_buffer view;
    const uint64_t *codes;
    Py_ssize_t size;
    if (read_codes(codes_object, &view, &codes, &size) < 0) return NULL;
    PyObject *flagged = PyList_New(0);
    if (flagged == NULL || size < 2 || chars == 0) goto done;
    if (size > MAX_WORDS) {
        PyErr_SetString(PyExc_OverflowError, "too many words for the compiled n-gram rules");
        Py_CLEAR(flagged);
        goto done;
    }
    size_t capacity = 2;
    while (capacity < (size_t)size * 2) capacity *= 2;
    uint64_t *keys = PyMem_Malloc((size_t)size * sizeof(uint64_t));
    long long *ends = PyMem_Malloc((size_t)(size + 1) * sizeof(long long));
    unsigned char *repeats = PyMem_Malloc((size_t)size);
    long long *edges = PyMem_Malloc((size_t)(size + 1) * sizeof(long long));
    KeyTable table = {PyMem_Calloc(capacity, sizeof(Slot)), capacity - 1,
                      PyMem_Malloc((size_t)size * sizeof(int32_t)), 0, 0, 0};
    if (!keys || !ends || !repeats || !edges || !table.slots || !table.taken) {
        PyErr_NoMemory();
        Py_CLEAR(flagged);
        goto free;
    }
    ends[0] = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        keys[i] = codes[i] >> (LENGTH_BITS + FLAG_BITS);
        ends[i + 1] = ends[i] + (long long)((codes[i] >> FLAG_BITS) & MAX_LENGTH);
    }
    long long most = size; /* how often the most frequent n-gram occurs, at most */
    int dup_left = 0;
    for (long m = 0; m < MAX_M; m++) dup_left += (int)is_dup[m];
    Py_ssize_t last_m = max_m < size ? max_m : size;
    for (Py_ssize_t m = 2; m <= last_m; m++) {
        Py_ssize_t count = size - m + 1; /* n-grams of m words */
        long long longest = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            uint64_t id = codes[i + m - 1] >> (LENGTH_BITS + FLAG_BITS);
            keys[i] = keys[i] * 0x9E3779B97F4A7C15ull + id;
            long long span = ends[i + m] - ends[i];
            if (span > longest) longest = span;
        }
        int flag = 0;
        if (top_n[m]) {
            long n = top_n[m];
            double limit = top_limit[m];
            if ((double)(most * (longest + n - 1)) / (double)chars > limit) {
                /* _top_chars */
                double enough = limit * (double)chars;
                count_keys(&table, keys, count, NULL);
                long long best = table.best;
                long long covered;
                long long widest = longest + n - 1;
                if ((double)(best * widest) <= enough) {
                    covered = best * widest;
                } else if (best == 1) {
                    covered = ends[m] - ends[0] + n - 1;
                } else {
                    Py_ssize_t first = table.best_first;
                    covered = best * (ends[first + m] - ends[first] + n - 1);
                }
                most = best;
                if ((double)covered / (double)chars > limit) flag = 1;
            }
        }
        if (is_dup[m] == 1) {
            double lowest = HUGE_VAL;
            for (long k = 0; k < MAX_M; k++)
                if (is_dup[k] == 1 && dup_limit[k] < lowest) lowest = dup_limit[k];
            Py_ssize_t distinct = count_keys(&table, keys, count, repeats);
            long long bound = (long long)(count - distinct) * longest;
            if ((double)bound / (double)chars > lowest) {
                /* the characters of the words covered by a repeat (_covered) */
                memset(edges, 0, (size_t)(size + 1) * sizeof(long long));
                for (Py_ssize_t i = 0; i < count; i++)
                    if (repeats[i]) {
                        edges[i]++;
                        edges[i + m]--;
                    }
                long long depth = 0;
                bound = 0;
                for (Py_ssize_t i = 0; i < size; i++) {
                    depth += edges[i];
                    if (depth > 0) bound += ends[i + 1] - ends[i];
                }
            }
            if ((double)bound / (double)chars <= lowest) {
                for (long k = 0; k < MAX_M; k++) is_dup[k] = is_dup[k] ? 2 : 0;
                dup_left = 0;
            } else {
                long long counted = bound;
                if (!union_) { /* _left_to_right */
                    counted = 0;
                    Py_ssize_t free_at = 0;
                    for (Py_ssize_t i = 0; i < count; i++)
                        if (repeats[i] && i >= free_at) {
                            counted += ends[i + m] - ends[i];
                            free_at = i + m;
                        }
                }
                if ((double)counted / (double)chars > dup_limit[m]) flag = 1;
                is_dup[m] = 2;
                dup_left--;
            }
        }
        if (flag) {
            PyObject *item = PyLong_FromSsize_t(m);
            if (item == NULL || PyList_Append(flagged, item) < 0) {
                Py_XDECREF(item);
                Py_CLEAR(flagged);
                goto free;
            }
            Py_DECREF(item);
        }
        if (!dup_left && m >= max_top) break;
    }
free:
    PyMem_Free(keys);
    PyMem_Free(ends);
    PyMem_Free(repeats);
    PyMem_Free(edges);
    PyMem_Free(table.slots);
    PyMem_Free(table.taken);
done:
    PyBuffer_Release(&view);
    return flagged;
}

/* ---- construction ---- */

/* One table word from an ASCII str of at most WORD_CHARS characters. */
static int table_word(PyObject *text, TableWord *word) {
    if (!PyUnicode_Check(text) || !PyUnicode_IS_ASCII(text) ||
        PyUnicode_GET_LENGTH(text) > WORD_CHARS || PyUnicode_GET_LENGTH(text) == 0) {
        PyErr_Format(PyExc_ValueError, "not a short ASCII word: %R", text);
        return -1;
    }
    word->length = PyUnicode_GET_LENGTH(text);
    memcpy(word->chars, PyUnicode_DATA(text), (size_t)word->length);
    word->cuts[0] = (int)word->length;
    word->n_cuts = 1;
    return 0;
}

/* The items of a Python sequence as a list, and a zeroed C array of as many entries of ``item``
 * bytes in *array (*size of them); NULL with the error set when either cannot be made. */
static PyObject *listed(PyObject *source, void **array, Py_ssize_t *size, size_t item) {
    PyObject *items = PySequence_List(source);
    if (items == NULL) return NULL;
    *size = PyList_GET_SIZE(items);
    *array = PyMem_Calloc((size_t)(*size ? *size : 1), item);
    if (*array == NULL) {
        Py_DECREF(items);
        return PyErr_NoMemory();
    }
    return items;
}

/* A table from an iterable of words (abbreviations), or a dict of word -> cut (informal), or a
 * dict of piece -> its words (whole: the words must spell the piece). */
static int make_table(PyObject *source, Table *table, int kind) {
    PyObject *keys = listed(source, (void **)&table->words, &table->size, sizeof(TableWord));
    if (keys == NULL) return -1;
    for (Py_ssize_t i = 0; i < table->size; i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        TableWord *word = &table->words[i];
        if (table_word(key, word) < 0) goto fail;
        unsigned char first = (unsigned char)word->chars[0];
        table->lengths[first] |= 1u << word->length;
        table->lengths[ascii_lower(first)] |= 1u << word->length;
        if (kind == 0) continue;
        PyObject *value = PyObject_GetItem(source, key);
        if (value == NULL) goto fail;
        if (kind == 1) {
            long cut = PyLong_AsLong(value);
            Py_DECREF(value);
            if (cut <= 0 || cut >= word->length) {
                if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "bad cut of %R", key);
                goto fail;
            }
            word->cuts[0] = (int)cut;
            word->cuts[1] = (int)word->length;
            word->n_cuts = 2;
            continue;
        }
        PyObject *parts = PySequence_Tuple(value);
        Py_DECREF(value);
        if (parts == NULL) goto fail;
        Py_ssize_t end = 0, count = PyTuple_GET_SIZE(parts);
        int ok = count >= 1 && count <= MAX_CUTS;
        for (Py_ssize_t k = 0; ok && k < count; k++) {
            PyObject *part = PyTuple_GET_ITEM(parts, k);
            Py_ssize_t length = PyUnicode_Check(part) ? PyUnicode_GET_LENGTH(part) : -1;
            ok = length > 0 && end + length <= word->length &&
                 PyUnicode_Tailmatch(key, part, end, end + length, -1) == 1;
            end += length;
            word->cuts[k] = (int)end;
        }
        word->n_cuts = (int)count;
        Py_DECREF(parts);
        if (!ok || end != word->length) {
            PyErr_Format(PyExc_ValueError, "the words of %R do not spell it", key);
            goto fail;
        }
    }
    Py_DECREF(keys);
    return 0;
fail:
    Py_DECREF(keys);
    return -1;
}

static int compare_ranges(const void *a, const void *b) {
    Py_UCS4 x = ((const Range *)a)->first, y = ((const Range *)b)->first;
    return x < y ? -1 : x > y;
}

/* Ranges from a sequence of (first, last) pairs, sorted; overlapping ones are refused. */
static int make_ranges(PyObject *source, Ranges *set) {
    PyObject *items = listed(source, (void **)&set->ranges, &set->size, sizeof(Range));
    if (items == NULL) return -1;
    for (Py_ssize_t i = 0; i < set->size; i++) {
        unsigned int first, last;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(items, i), "II", &first, &last) || first > last ||
            last > 0x10FFFF) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad character range");
            Py_DECREF(items);
            return -1;
        }
        set->ranges[i].first = first;
        set->ranges[i].last = last;
    }
    Py_DECREF(items);
    qsort(set->ranges, (size_t)set->size, sizeof(Range), compare_ranges);
    for (Py_ssize_t i = 1; i < set->size; i++)
        if (set->ranges[i].first <= set->ranges[i - 1].last) {
            PyErr_SetString(PyExc_ValueError, "overlapping character ranges");
            return -1;
        }
    return 0;
}

static void coder_dealloc(Coder *self) {
    PyMem_Free(self->abbreviations.words);
    PyMem_Free(self->informal.words);
    PyMem_Free(self->whole.words);
    PyMem_Free(self->prefix.ranges);
    PyMem_Free(self->suffix.ranges);
    PyMem_Free(self->deferred.ranges);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int coder_init(Coder *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"abbreviations", "informal", "whole", "last_marks", "prefix",
                               "suffix", "deferred", NULL};
    PyObject *abbreviations, *informal, *whole, *last_marks, *prefix, *suffix, *deferred;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOUOOO:Coder", keywords, &abbreviations,
                                     &informal, &whole, &last_marks, &prefix, &suffix, &deferred))
        return -1;
    if (self->abbreviations.words != NULL) {
        PyErr_SetString(PyExc_TypeError, "a Coder is made once");
        return -1;
    }
    if (make_table(abbreviations, &self->abbreviations, 0) < 0 ||
        make_table(informal, &self->informal, 1) < 0 || make_table(whole, &self->whole, 2) < 0 ||
        make_ranges(prefix, &self->prefix) < 0 || make_ranges(suffix, &self->suffix) < 0 ||
        make_ranges(deferred, &self->deferred) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < PyUnicode_GET_LENGTH(last_marks); i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(last_marks, i);
        if (c >= 128) {
            PyErr_SetString(PyExc_ValueError, "the last marks are ASCII");
            return -1;
        }
        self->last_marks[c] = 1;
    }
    return 0;
}

static PyMethodDef coder_methods[] = {
    {"codes", (PyCFunction)coder_codes, METH_VARARGS,
     "codes(text, cache) -> bytes: each word's code, 8 bytes a word; a deferred piece's from "
     "cache[piece]."},
    {"counts", (PyCFunction)coder_counts, METH_O,
     "counts(codes) -> (words with a letter, words proper, words proper of spaced scripts, "
     "their characters)."},
    {"present", (PyCFunction)coder_present, METH_VARARGS,
     "present(codes, ids) -> bytes: 1 for each wanted id (uint64 each) a word has, else 0."},
    {"ngram_flags", (PyCFunction)coder_ngram_flags, METH_VARARGS,
     "ngram_flags(codes, chars, top, dup, union) -> the n-gram lengths whose rule flags the "
     "page (gopher._ngram_reasons)."},
    {"split", (PyCFunction)coder_split, METH_VARARGS,
     "split(piece, fallback=None) -> the words split_chunk gives it; where the piece is "
     "deferred, fallback(piece), or None."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CoderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "warcdeboil.corpus._words.Coder",
    .tp_basicsize = sizeof(Coder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The rules of warcdeboil.corpus.words, with its tables, in C.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)coder_init,
    .tp_dealloc = (destructor)coder_dealloc,
    .tp_methods = coder_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_words", "The quality filters' word codes and counts, in C.", -1,
    NULL,
};

PyMODINIT_FUNC PyInit__words(void) {
    if (PyType_Ready(&CoderType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Coder", (PyObject *)&CoderType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
