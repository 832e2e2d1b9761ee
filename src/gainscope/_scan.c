/*
 * gainscope._scan: one pass over a TREC run file that emits, per query, only what the metrics need.
 *
 * For every line "query_id Q0 doc_id rank score tag [ignored...]" the scanner tokenizes, looks the
 * (query, doc) pair up in a hash index of the judgments built once (JudgmentIndex), and collects the
 * query's documents. When the query id changes, the query's documents are put in final order
 * (trec_eval: score descending, doc id descending by bytes; or rank ascending, then line order), cut at a
 * depth, reduced to judged documents when asked, and only the positions of judged documents are kept:
 * (rank, judgment row, score). Unjudged documents only count.
 *
 * The scanner is an accelerator, never a second set of rules: whenever a line is anything but plain
 * (not exactly 6 columns, a rank that is not an integer, a score that is not a finite decimal number,
 * a byte outside ASCII, a control character, a CR followed by more data, a line beyond the length limit,
 * a duplicate document, differing run tags, a query id that comes back after another one), it stops and
 * says why; the caller then reads the file with the Python readers, which give the exact error (with file
 * and line) or the exact warning. Tests assert that both give the same judged run.
 *
 * The file is read with read() into a buffer that keeps only the current query's lines (the documents of a
 * query point into it), so resident memory stays bounded by the largest query, not the file, and a file
 * that shrinks while it is read is noticed (never a SIGBUS, as with a memory map). The GIL is released
 * while scanning.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_BLOCK (4u << 20) /* bytes asked of each read() */
#define MAX_LINE (1u << 20)  /* the longest line taken: gainscope.io.text.MAX_LINE_BYTES */

/* ------------------------------------------------------------------ hashing */
static inline uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* Words of 8 bytes, the last one ending at the id's end (it overlaps the one before unless the length is a multiple
 * of 8): an id of 8 bytes or more is read in whole words, with no copy of a variable length (a call to memcpy, which
 * cost W200k's 7.9 million judged ids 0.15 s). */
static inline uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n, w = 0;
    if (n < 8) {
        memcpy(&w, p, n);
        return mix64((h ^ mix64(w ^ ((uint64_t)n << 56))) * 0x100000001b3ULL);
    }
    const char *last = p + n - 8;
    for (; p < last; p += 8) {
        memcpy(&w, p, 8);
        h = (h ^ mix64(w)) * 0x100000001b3ULL;
    }
    memcpy(&w, last, 8);
    return mix64((h ^ mix64(w ^ ((uint64_t)(last - p + 8) << 56))) * 0x100000001b3ULL);
}

/* Whether n bytes at a and b are the same: ids are short, and a call to memcmp for each (through the PLT) costs
 * more than the comparison; up to 16 bytes are compared as two overlapping words. */
static inline int same_bytes(const char *a, const char *b, size_t n) {
    uint64_t x, y, u, v;
    if (n >= 8 && n <= 16) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        memcpy(&u, a + n - 8, 8);
        memcpy(&v, b + n - 8, 8);
        return ((x ^ y) | (u ^ v)) == 0;
    }
    if (n < 8) {
        x = y = 0;
        memcpy(&x, a, n);
        memcpy(&y, b, n);
        return x == y;
    }
    return memcmp(a, b, n) == 0;
}

static size_t table_size_for(size_t n) {
    size_t size = 16;
    while (size < 2 * n) size <<= 1;
    return size;
}

/* ------------------------------------------------------------------ JudgmentIndex */
typedef struct {
    PyObject_HEAD
    Py_buffer keep[6];       /* the buffers used below (bytes, numpy arrays, read_qrels' blocks), held */
    int held;                /* how many of keep[] are held */
    int64_t nq, nj;
    const char *qblob;
    const int64_t *qoff;     /* nq + 1 */
    const char *dblob;
    const int64_t *doff;     /* nj + 1 */
    const int32_t *dquery;   /* nj: query index of each judgment */
    const double *grade;     /* nj, or NULL (see judged_at) */
    const void *igrade;      /* nj: the grades as integers instead (int_grades=True), or NULL */
    int igrade_bytes;        /* ... of 1 (int8) or 8 (int64) bytes */
    size_t qmask;
    int64_t *qslot;          /* query table: index + 1, 0 = empty */
    uint64_t *qslot_hash;
    int64_t *qstart;         /* nq + 1: each query's judgments in qrows */
    int64_t *qrows;          /* nj: judgment rows grouped by query; NULL when the rows are so already (row k) */
    uint64_t *dhash;         /* nj: hash of each judgment's doc id, or NULL (see index_hash) */
    int ready;               /* __init__ completed */
} JudgmentIndex;

/* One query's judgments as a small open-addressing table (stays in cache while its lines are read). */
typedef struct {
    uint64_t *hash;
    int64_t *row;  /* judgment row, -1 = empty */
    size_t mask, cap;
} LocalTable;

/* Whether judgment ``j`` counts as judged for judged_only (grade >= 0); every judgment does when no grades were
 * given (negative_grades="nonrelevant" makes every grade >= 0). */
static inline int judged_at(const JudgmentIndex *ix, int64_t j) {
    if (ix->grade) return ix->grade[j] >= 0;
    if (!ix->igrade) return 1;
    return ix->igrade_bytes == 1 ? ((const int8_t *)ix->igrade)[j] >= 0 : ((const int64_t *)ix->igrade)[j] >= 0;
}

static inline int64_t index_row(const JudgmentIndex *ix, int64_t k) { return ix->qrows ? ix->qrows[k] : k; }
static inline uint64_t index_hash(const JudgmentIndex *ix, int64_t j) {
    if (ix->dhash) return ix->dhash[j];
    /* none kept (a unique index, as read_qrels' judgments make: only the ranked queries' judgments are hashed, as
     * the scan fills their tables; W200k: 63 MB less) */
    return hash_bytes(ix->dblob + ix->doff[j], (size_t)(ix->doff[j + 1] - ix->doff[j]));
}

static int local_fill(LocalTable *t, const JudgmentIndex *ix, int64_t q) {
    int64_t count = q >= 0 ? ix->qstart[q + 1] - ix->qstart[q] : 0;
    size_t size = 16;
    while (size < 4 * (size_t)count) size <<= 1;
    if (size > t->cap) {
        free(t->hash);
        free(t->row);
        t->hash = malloc(size * sizeof(uint64_t));
        t->row = malloc(size * sizeof(int64_t));
        t->cap = size;
        if (!t->hash || !t->row) {
            t->cap = 0;
            return -1;
        }
    }
    t->mask = size - 1;
    memset(t->row, 0xff, size * sizeof(int64_t));
    for (int64_t k = 0; k < count; k++) {
        int64_t j = index_row(ix, ix->qstart[q] + k);
        uint64_t h = index_hash(ix, j);
        size_t s = h & t->mask;
        while (t->row[s] >= 0) s = (s + 1) & t->mask;
        t->hash[s] = h;
        t->row[s] = j;
    }
    return 0;
}

/* The judgment row of a doc in the table's query, or -1; 2 if the table holds the doc twice. */
static inline int64_t local_find(const LocalTable *t, const JudgmentIndex *ix, const char *doc, size_t n,
                                 uint64_t h) {
    for (size_t s = h & t->mask;; s = (s + 1) & t->mask) {
        int64_t j = t->row[s];
        if (j < 0) return -1;
        if (t->hash[s] == h && (size_t)(ix->doff[j + 1] - ix->doff[j]) == n &&
            same_bytes(ix->dblob + ix->doff[j], doc, n))
            return j;
    }
}

static int64_t index_query(const JudgmentIndex *ix, const char *id, size_t n) {
    uint64_t h = hash_bytes(id, n);
    for (size_t s = h & ix->qmask;; s = (s + 1) & ix->qmask) {
        int64_t v = ix->qslot[s];
        if (!v) return -1;
        if (ix->qslot_hash[s] == h) {
            int64_t q = v - 1;
            size_t len = (size_t)(ix->qoff[q + 1] - ix->qoff[q]);
            if (len == n && memcmp(ix->qblob + ix->qoff[q], id, n) == 0) return q;
        }
    }
}

static void index_clear(JudgmentIndex *self) {
    self->ready = 0;
    for (int i = 0; i < self->held; i++) PyBuffer_Release(&self->keep[i]);
    self->held = 0;
    free(self->qslot);
    free(self->qslot_hash);
    free(self->qstart);
    free(self->qrows);
    free(self->dhash);
    self->qslot = NULL;
    self->qslot_hash = NULL;
    self->qstart = self->qrows = NULL;
    self->dhash = NULL;
}

static void JudgmentIndex_dealloc(JudgmentIndex *self) {
    index_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int offsets_valid(const int64_t *off, int64_t n, Py_ssize_t blob_size) {
    if (off[0] != 0) return 0;
    for (int64_t i = 0; i < n; i++)
        if (off[i + 1] < off[i]) return 0;
    return off[n] <= blob_size;
}

/* Holds the buffer of ``b`` (any C-contiguous buffer: bytes, a numpy array, a read_qrels block) in ``view``, and
 * checks that it holds ``count`` items of ``itemsize`` bytes (count -1: any whole number of them). */
static int hold_buffer(PyObject *b, Py_buffer *view, Py_ssize_t itemsize, Py_ssize_t count, const char *what) {
    if (PyObject_GetBuffer(b, view, PyBUF_C_CONTIGUOUS)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a contiguous buffer (bytes or an array)", what);
        return -1;
    }
    if (count >= 0 ? view->len != itemsize * count : view->len % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s has %zd bytes, expected %zd", what, view->len,
                     itemsize * (count >= 0 ? count : view->len / itemsize));
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* JudgmentIndex(query_blob, query_offsets, doc_blob, doc_offsets, doc_query, grades, unique=False, int_grades=False): offsets are int64, doc_query int32, grades float64 (with ``int_grades``, an int64 or int8
 * array, its item size says which; None: every
 * judgment counts as judged for judged_only, as under negative_grades="nonrelevant"), all native-endian buffers
 * (bytes or arrays), held (not copied); only the grades' signs are read. Query ids must be distinct; (query, doc)
 * pairs too, which is checked unless ``unique`` says the caller did (read_qrels): the doc ids are then hashed only
 * when the scan of a run reads their query (see index_hash). */
/* ValueError "<what> <id> given twice" (PyErr_Format has no "%.*s": the id, of n bytes, as text). */
static void id_given_twice(const char *what, const char *id, size_t n) {
    PyObject *text = PyUnicode_DecodeUTF8(id, (Py_ssize_t)n, "replace");
    if (text) PyErr_Format(PyExc_ValueError, "%s %U given twice", what, text);
    Py_XDECREF(text);
}

static int JudgmentIndex_init(JudgmentIndex *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"query_blob", "query_offsets", "doc_blob", "doc_offsets", "doc_query", "grades",
                             "unique", "int_grades", NULL};
    PyObject *objs[6];
    int unique = 0, int_grades = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOO|pp", kwlist, &objs[0], &objs[1], &objs[2], &objs[3],
                                     &objs[4], &objs[5], &unique, &int_grades))
        return -1;
    index_clear(self);
    self->grade = NULL;
    self->igrade = NULL;
    static const char *names[6] = {"query_blob", "query_offsets", "doc_blob", "doc_offsets", "doc_query", "grades"};
    static const Py_ssize_t sizes[6] = {1, 8, 1, 8, 4, 8};
    for (int i = 0; i < 6; i++) { /* keep[i] for each, the grades' only when given */
        Py_ssize_t count = -1;
        if (i >= 4) count = self->keep[3].len / 8 - 1; /* one per judgment */
        if (i == 5 && objs[5] == Py_None) break;
        if (hold_buffer(objs[i], &self->keep[i], i == 5 && int_grades ? 1 : sizes[i], i == 5 && int_grades ? -1 : count,
                        names[i]))
            return -1;
        self->held++;
        if (i == 5 && int_grades) { /* integers of the array's item size, one per judgment */
            Py_ssize_t size = self->keep[5].itemsize;
            if ((size != 1 && size != 8) || self->keep[5].len != size * count) {
                PyErr_Format(PyExc_ValueError, "grades must be int8 or int64, one per judgment (%zd items)", count);
                return -1;
            }
            self->igrade_bytes = (int)size;
        }
    }
    Py_ssize_t nq = self->keep[1].len / 8 - 1, nj = self->keep[3].len / 8 - 1;
    if (nq < 0 || nj < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets need at least one entry");
        return -1;
    }
    int offsets_ok;
    Py_BEGIN_ALLOW_THREADS /* here and below: only this object's memory and the held buffers are read */
    offsets_ok = offsets_valid((const int64_t *)self->keep[1].buf, nq, self->keep[0].len) &&
                 offsets_valid((const int64_t *)self->keep[3].buf, nj, self->keep[2].len);
    Py_END_ALLOW_THREADS
    if (!offsets_ok) {
        PyErr_SetString(PyExc_ValueError, "offsets must start at 0, never decrease and stay within the blob");
        return -1;
    }
    self->nq = nq;
    self->nj = nj;
    self->qblob = self->keep[0].buf;
    self->qoff = self->keep[1].buf;
    self->dblob = self->keep[2].buf;
    self->doff = self->keep[3].buf;
    self->dquery = self->keep[4].buf;
    if (objs[5] != Py_None) {
        if (int_grades)
            self->igrade = self->keep[5].buf;
        else
            self->grade = self->keep[5].buf;
    }
    size_t qsize = table_size_for((size_t)nq);
    self->qmask = qsize - 1;
    self->qslot = calloc(qsize, sizeof(int64_t));
    self->qslot_hash = malloc(qsize * sizeof(uint64_t));
    self->qstart = calloc((size_t)nq + 1, sizeof(int64_t));
    int hashed = !unique; /* the check of pairs below reads every hash */
    if (hashed) self->dhash = malloc(((size_t)nj + 1) * sizeof(uint64_t));
    if (!self->qslot || !self->qslot_hash || !self->qstart || (hashed && !self->dhash)) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t twice = -1, out_of_range = -1; /* a query id given twice, a judgment's query index out of range */
    int no_memory = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t q = 0; q < nq; q++) {
        const char *id = self->qblob + self->qoff[q];
        size_t n = (size_t)(self->qoff[q + 1] - self->qoff[q]);
        if (index_query(self, id, n) >= 0) {
            twice = q;
            break;
        }
        uint64_t h = hash_bytes(id, n);
        size_t s = h & self->qmask;
        while (self->qslot[s]) s = (s + 1) & self->qmask;
        self->qslot[s] = q + 1;
        self->qslot_hash[s] = h;
    }
    int grouped = 1; /* rows already grouped by query, in query order: no qrows */
    for (int64_t j = 0; twice < 0 && j < nj; j++) {
        int64_t q = self->dquery[j];
        if (q < 0 || q >= nq) {
            out_of_range = j;
            break;
        }
        grouped &= j == 0 || q >= self->dquery[j - 1];
        self->qstart[q + 1]++;
        if (hashed)
            self->dhash[j] = hash_bytes(self->dblob + self->doff[j], (size_t)(self->doff[j + 1] - self->doff[j]));
    }
    if (twice < 0 && out_of_range < 0) {
        for (int64_t q = 0; q < nq; q++) self->qstart[q + 1] += self->qstart[q];
        if (!grouped) { /* group the rows by query (counting sort) */
            self->qrows = malloc(((size_t)nj + 1) * sizeof(int64_t));
            int64_t *fill = malloc(((size_t)nq + 1) * sizeof(int64_t));
            if (!self->qrows || !fill) {
                no_memory = 1;
            } else {
                memcpy(fill, self->qstart, ((size_t)nq + 1) * sizeof(int64_t));
                for (int64_t j = 0; j < nj; j++) self->qrows[fill[self->dquery[j]]++] = j;
            }
            free(fill);
        }
    }
    Py_END_ALLOW_THREADS
    if (twice >= 0) {
        id_given_twice("query id", self->qblob + self->qoff[twice], (size_t)(self->qoff[twice + 1] - self->qoff[twice]));
        return -1;
    }
    if (out_of_range >= 0) {
        PyErr_Format(PyExc_ValueError, "judgment %lld has query index %lld out of range", (long long)out_of_range,
                     (long long)self->dquery[out_of_range]);
        return -1;
    }
    if (no_memory) {
        PyErr_NoMemory();
        return -1;
    }
    if (unique) {
        self->ready = 1;
        return 0;
    }
    LocalTable t = {0};
    for (int64_t q = 0; q < nq; q++) { /* refuse a (query, doc) pair given twice */
        if (local_fill(&t, self, q)) {
            PyErr_NoMemory();
            break;
        }
        for (int64_t k = self->qstart[q]; k < self->qstart[q + 1]; k++) {
            int64_t j = index_row(self, k);
            size_t n = (size_t)(self->doff[j + 1] - self->doff[j]);
            const char *doc = self->dblob + self->doff[j];
            int same = 0;
            uint64_t h = index_hash(self, j);
            for (size_t s = h & t.mask; t.row[s] >= 0; s = (s + 1) & t.mask)
                same += t.hash[s] == h && (size_t)(self->doff[t.row[s] + 1] - self->doff[t.row[s]]) == n &&
                        memcmp(self->dblob + self->doff[t.row[s]], doc, n) == 0;
            if (same > 1) {
                id_given_twice("judgment of doc", doc, n);
                break;
            }
        }
        if (PyErr_Occurred()) break;
    }
    free(t.hash);
    free(t.row);
    if (PyErr_Occurred()) return -1;
    self->ready = 1;
    return 0;
}

static PyTypeObject JudgmentIndexType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gainscope._scan.JudgmentIndex",
    .tp_doc = "Hash index of judgments: (query id, doc id) -> judgment row.",
    .tp_basicsize = sizeof(JudgmentIndex),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)JudgmentIndex_init,
    .tp_dealloc = (destructor)JudgmentIndex_dealloc,
};

/* ------------------------------------------------------------------ growable arrays */
typedef struct {
    char *data;
    size_t len, cap; /* in bytes */
} Buf;

/* Frees a block that may be large. glibc serves large blocks by mmap, and freeing one raises the size from which it
 * does so to that block's (up to 32 MB): arrays below it then come from heaps that keep their memory once freed and
 * grow by copying (W200k: 50 MB more held to the end). Shrinking the block to a page first frees it as a small one. */
static void free_large(void *p) {
    void *small = p ? realloc(p, 1) : NULL;
    free(small ? small : p);
}

static int buf_grow(Buf *b, size_t n) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

static inline int buf_put(Buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap && buf_grow(b, n)) return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static inline int buf_i64(Buf *b, int64_t v) { return buf_put(b, &v, 8); }
static inline int buf_i32(Buf *b, int32_t v) { return buf_put(b, &v, 4); }
static inline int buf_f64(Buf *b, double v) { return buf_put(b, &v, 8); }

/* A read-only buffer over memory this module allocated (a Buf's, handed over): the large outputs reach Python
 * (numpy.frombuffer, memoryview) without a copy. */
typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t len;
    Py_ssize_t exports; /* views held */
} Block;

static int Block_getbuffer(Block *self, Py_buffer *view, int flags) {
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->data, self->len, 1, flags)) return -1;
    self->exports++;
    return 0;
}

static void Block_releasebuffer(Block *self, Py_buffer *view) {
    (void)view;
    self->exports--;
}

static void Block_dealloc(Block *self) {
    free_large(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyBufferProcs Block_as_buffer = {(getbufferproc)Block_getbuffer, (releasebufferproc)Block_releasebuffer};

static PyTypeObject BlockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gainscope._scan.Block",
    .tp_doc = "Read-only bytes the scanner made (a buffer: numpy.frombuffer, memoryview).",
    .tp_basicsize = sizeof(Block),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)Block_dealloc,
    .tp_as_buffer = &Block_as_buffer,
};

/* The bytes of ``b`` as a Block, which takes them over (``b`` is left empty); NULL with an exception set. */
static PyObject *block_of(Buf *b) {
    Block *out = PyObject_New(Block, &BlockType);
    if (!out) return NULL;
    out->data = NULL; /* freed by the dealloc if the shrinking below fails */
    out->exports = 0;
    if (!b->data || b->len < b->cap) { /* at least one byte; no room past the end */
        char *d = realloc(b->data, b->len ? b->len : 1);
        if (!d) {
            Py_DECREF(out);
            return PyErr_NoMemory();
        }
        b->data = d;
    }
    out->data = b->data;
    out->len = (Py_ssize_t)b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return (PyObject *)out;
}

/* ------------------------------------------------------------------ numbers */
static locale_t C_LOCALE; /* made once at import */

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A rank: [+-]?[0-9]+ with at most 18 digits (always fits int64). */
static int parse_rank(const char *p, size_t n, int64_t *out) {
    size_t i = 0;
    int neg = 0;
    if (n && (p[0] == '+' || p[0] == '-')) {
        neg = p[0] == '-';
        i = 1;
    }
    if (i == n || n - i > 18) return -1;
    int64_t v = 0;
    for (; i < n; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (d > 9) return -1;
        v = v * 10 + d;
    }
    *out = neg ? -v : v;
    return 0;
}

/* A score: [+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)? giving a finite double, correctly rounded
 * (exact fast path when the digits fit 2^53 and the power of ten is exact; strtod otherwise). */
static int parse_score(const char *p, size_t n, double *out) {
    size_t i = 0;
    int neg = 0;
    if (n && (p[0] == '+' || p[0] == '-')) {
        neg = p[0] == '-';
        i = 1;
    }
    uint64_t mant = 0;
    int sig = 0, int_digits = 0, frac_digits = 0, exp10 = 0, too_many = 0;
    for (; i < n && (unsigned)(p[i] - '0') <= 9; i++, int_digits++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (!mant && !d) continue; /* leading zero */
        if (sig < 19) {
            mant = mant * 10 + d;
            sig++;
        } else {
            too_many = 1;
            exp10++;
        }
    }
    if (i < n && p[i] == '.') {
        for (i++; i < n && (unsigned)(p[i] - '0') <= 9; i++, frac_digits++) {
            unsigned d = (unsigned)(p[i] - '0');
            if (!mant && !d) {
                exp10--;
            } else if (sig < 19) {
                mant = mant * 10 + d;
                sig++;
                exp10--;
            } else {
                too_many = 1;
            }
        }
    }
    if (!int_digits && !frac_digits) return -1;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        int eneg = 0, edigits = 0;
        long e = 0;
        if (i < n && (p[i] == '+' || p[i] == '-')) {
            eneg = p[i] == '-';
            i++;
        }
        while (i < n && (unsigned)(p[i] - '0') <= 9) {
            if (e < 100000) e = e * 10 + (p[i] - '0');
            edigits++;
            i++;
        }
        if (!edigits) return -1;
        exp10 += (int)(eneg ? -e : e);
    }
    if (i != n) return -1;
    double v;
    if (!too_many && mant < (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        v = (double)mant;
        v = exp10 < 0 ? v / POW10[-exp10] : v * POW10[exp10];
    } else {
        char tmp[128], *stop;
        if (n >= sizeof tmp || C_LOCALE == (locale_t)0) return -1;
        memcpy(tmp, p, n);
        tmp[n] = 0;
        v = strtod_l(tmp, &stop, C_LOCALE); /* never the user's LC_NUMERIC */
        if (stop != tmp + n) return -1;
        neg = 0; /* strtod read the sign */
    }
    if (!isfinite(v)) return -1;
    *out = neg ? -v : v;
    return 0;
}

/* ------------------------------------------------------------------ UTF-8 ids */
/* Ids may hold any UTF-8 text but control characters. Bytes outside ASCII are checked as Python's strict
 * decoder checks them (no overlong forms, no surrogates, nothing beyond U+10FFFF), a C1 control character
 * (U+0080..U+009F) stops the scan as a C0 one does, and an id holding a code point outside NFC_SAFE is
 * handed to Python, which checks its Unicode form (unicodedata.is_normalized) as the readers do. */

/* Code points whose every string is in NFC: assigned, canonical combining class 0, unchanged by NFC, and never
 * the second of a canonical composition pair (so nothing composes with what precedes them). Unicode's
 * normalization stability policy keeps this true in every later version. tests/property/test_scan_utf8.py
 * derives the property from unicodedata for every code point listed; ranges shorter than 32 are left out (their
 * ids are checked in Python). */
static const uint32_t NFC_SAFE[][2] = {
    {0xA0, 0x2FF}, {0x3A3, 0x482}, {0x488, 0x52F}, {0x531, 0x556}, {0x559, 0x58A}, {0x61B, 0x64A}, {0x671, 0x6D5},
    {0x6EE, 0x70D}, {0x74D, 0x7B1}, {0x7C0, 0x7EA}, {0x8A0, 0x8C9}, {0x900, 0x93B}, {0x960, 0x983}, {0xD12, 0xD3A},
    {0xE01, 0xE37}, {0x1000, 0x102D}, {0x103B, 0x108C}, {0x108E, 0x10C5}, {0x10D0, 0x10FF}, {0x1200, 0x1248},
    {0x1260, 0x1288}, {0x1290, 0x12B0}, {0x12D8, 0x1310}, {0x1318, 0x135A}, {0x13A0, 0x13F5}, {0x1400, 0x169C},
    {0x16A0, 0x16F8}, {0x1780, 0x17D1}, {0x1820, 0x1878}, {0x1880, 0x18A8}, {0x18B0, 0x18F5}, {0x1944, 0x196D},
    {0x1980, 0x19AB}, {0x19DE, 0x1A16}, {0x1A1E, 0x1A5E}, {0x1B00, 0x1B33}, {0x1B80, 0x1BA9}, {0x1BAC, 0x1BE5},
    {0x1BFC, 0x1C36}, {0x1C4D, 0x1C88}, {0x1C90, 0x1CBA}, {0x1D00, 0x1DBF}, {0x1E00, 0x1F15}, {0x1F20, 0x1F45},
    {0x1F80, 0x1FB4}, {0x2002, 0x2064}, {0x20A0, 0x20C0}, {0x2100, 0x2125}, {0x212C, 0x218B}, {0x2190, 0x2328},
    {0x232B, 0x2426}, {0x2460, 0x2ADB}, {0x2ADD, 0x2B73}, {0x2B76, 0x2B95}, {0x2B97, 0x2CEE}, {0x2CF9, 0x2D25},
    {0x2D30, 0x2D67}, {0x2E00, 0x2E5D}, {0x2E9B, 0x2EF3}, {0x2F00, 0x2FD5}, {0x3000, 0x3029}, {0x3041, 0x3096},
    {0x309B, 0x30FF}, {0x3105, 0x312F}, {0x3131, 0x318E}, {0x3190, 0x31E3}, {0x31F0, 0x321E}, {0x3220, 0xA48C},
    {0xA490, 0xA4C6}, {0xA4D0, 0xA62B}, {0xA640, 0xA66E}, {0xA67E, 0xA69D}, {0xA6A0, 0xA6EF}, {0xA700, 0xA7CA},
    {0xA807, 0xA82B}, {0xA840, 0xA877}, {0xA880, 0xA8C3}, {0xA8F2, 0xA92A}, {0xA92E, 0xA952}, {0xA980, 0xA9B2},
    {0xA9DE, 0xA9FE}, {0xAA00, 0xAA36}, {0xAA5C, 0xAAAF}, {0xAB30, 0xAB6B}, {0xAB70, 0xABEC}, {0xAC00, 0xD7A3},
    {0xFB4F, 0xFBC2}, {0xFBD3, 0xFD8F}, {0xFD92, 0xFDC7}, {0xFDF0, 0xFE19}, {0xFE30, 0xFE52}, {0xFE76, 0xFEFC},
    {0xFF01, 0xFFBE}, {0x10080, 0x100FA}, {0x10107, 0x10133}, {0x10137, 0x1018E}, {0x101D0, 0x101FC},
    {0x102A0, 0x102D0}, {0x10300, 0x10323}, {0x10350, 0x10375}, {0x1039F, 0x103C3}, {0x10400, 0x1049D},
    {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10500, 0x10527}, {0x10530, 0x10563}, {0x10600, 0x10736},
    {0x10787, 0x107B0}, {0x1080A, 0x10835}, {0x10857, 0x1089E}, {0x108FB, 0x1091B}, {0x10980, 0x109B7},
    {0x109D2, 0x10A03}, {0x10A60, 0x10A9F}, {0x10AC0, 0x10AE4}, {0x10B00, 0x10B35}, {0x10C00, 0x10C48},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x10CFA, 0x10D23}, {0x10E80, 0x10EA9}, {0x10F00, 0x10F27},
    {0x11000, 0x11045}, {0x11080, 0x110B8}, {0x11103, 0x11126}, {0x11150, 0x11172}, {0x11180, 0x111BF},
    {0x11213, 0x11234}, {0x112B0, 0x112E8}, {0x11400, 0x11441}, {0x11480, 0x114AF}, {0x11580, 0x115AE},
    {0x11600, 0x1163E}, {0x11680, 0x116B5}, {0x11800, 0x11838}, {0x118A0, 0x118F2}, {0x119AA, 0x119D7},
    {0x11A00, 0x11A33}, {0x11A50, 0x11A98}, {0x11AB0, 0x11AF8}, {0x11C0A, 0x11C36}, {0x11C70, 0x11C8F},
    {0x11D0B, 0x11D36}, {0x11D6A, 0x11D8E}, {0x11FC0, 0x11FF1}, {0x11FFF, 0x12399}, {0x12400, 0x1246E},
    {0x12480, 0x12543}, {0x12F90, 0x12FF2}, {0x13000, 0x1342E}, {0x14400, 0x14646}, {0x16800, 0x16A38},
    {0x16A6E, 0x16ABE}, {0x16B00, 0x16B2F}, {0x16E40, 0x16E9A}, {0x16F00, 0x16F4A}, {0x16F4F, 0x16F87},
    {0x17000, 0x187F7}, {0x18800, 0x18CD5}, {0x1B000, 0x1B122}, {0x1B170, 0x1B2FB}, {0x1BC00, 0x1BC6A},
    {0x1CF00, 0x1CF2D}, {0x1CF50, 0x1CFC3}, {0x1D000, 0x1D0F5}, {0x1D100, 0x1D126}, {0x1D129, 0x1D15D},
    {0x1D1C1, 0x1D1EA}, {0x1D200, 0x1D241}, {0x1D300, 0x1D356}, {0x1D400, 0x1D454}, {0x1D456, 0x1D49C},
    {0x1D4C5, 0x1D505}, {0x1D552, 0x1D6A5}, {0x1D6A8, 0x1D7CB}, {0x1D7CE, 0x1DA8B}, {0x1E100, 0x1E12C},
    {0x1E2C0, 0x1E2EB}, {0x1E800, 0x1E8C4}, {0x1E900, 0x1E943}, {0x1EC71, 0x1ECB4}, {0x1ED01, 0x1ED3D},
    {0x1F000, 0x1F02B}, {0x1F030, 0x1F093}, {0x1F0D1, 0x1F0F5}, {0x1F100, 0x1F1AD}, {0x1F210, 0x1F23B},
    {0x1F300, 0x1F6D7}, {0x1F700, 0x1F773}, {0x1F780, 0x1F7D8}, {0x1F810, 0x1F847}, {0x1F860, 0x1F887},
    {0x1F900, 0x1FA53}, {0x1FB00, 0x1FB92}, {0x1FB94, 0x1FBCA}, {0x20000, 0x2A6DF}, {0x2A700, 0x2B738},
    {0x2B740, 0x2B81D}, {0x2B820, 0x2CEA1}, {0x2CEB0, 0x2EBE0}, {0x30000, 0x3134A}, {0xE0020, 0xE007F},
    {0xE0100, 0xE01EF},
};

static inline int nfc_safe(uint32_t cp) {
    if (cp <= 0x2FF) return cp >= 0xA0;
    size_t lo = 1, hi = sizeof NFC_SAFE / sizeof *NFC_SAFE;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp > NFC_SAFE[mid][1]) lo = mid + 1;
        else hi = mid;
    }
    return lo < sizeof NFC_SAFE / sizeof *NFC_SAFE && cp >= NFC_SAFE[lo][0];
}

/* The UTF-8 sequence starting at p (p[0] >= 0x80): its length with its code point in *cp; 0 when it is not valid
 * UTF-8; -1 when it is cut by `end` (more bytes may come). */
static inline int utf8_char(const unsigned char *p, const unsigned char *end, uint32_t *cp) {
    unsigned char b = p[0];
    int n;
    uint32_t v, lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
        v = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        v = b & 0x0F;
        if (b == 0xE0) lo = 0xA0;      /* overlong */
        else if (b == 0xED) hi = 0x9F; /* surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        v = b & 0x07;
        if (b == 0xF0) lo = 0x90;      /* overlong */
        else if (b == 0xF4) hi = 0x8F; /* beyond U+10FFFF */
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if (p + i >= end) return -1;
        unsigned char c = p[i];
        if (i == 1 ? c < lo || c > hi : c < 0x80 || c > 0xBF) return 0;
        v = (v << 6) | (c & 0x3F);
    }
    *cp = v;
    return n;
}

enum { ID_WIDE = 1, ID_CHECK = 2 }; /* an id holds bytes outside ASCII; ... a code point outside NFC_SAFE */

/* Ids whose Unicode form Python checks: their bytes, and whether each is a query id (0) or a doc id (1). */
typedef struct {
    Buf blob, off, kind;
} IdList;

static int idlist_put(IdList *l, const char *id, size_t n, char kind) {
    return buf_put(&l->blob, id, n) || buf_i64(&l->off, (int64_t)l->blob.len) || buf_put(&l->kind, &kind, 1);
}

static void idlist_free(IdList *l) {
    free(l->blob.data);
    free(l->off.data);
    free(l->kind.data);
}

/* ------------------------------------------------------------------ a query's documents seen so far */
/* Rows (a document's place) by hash, for one query at a time: each slot is stamped with the query's number, so the
 * next query starts with an empty set at no cost. Callers probe from ``hash & mask`` while ``gen[slot] == stamp``,
 * compare their own way, and fill the first free slot with stamped_put. */
typedef struct {
    uint64_t *hash;
    int64_t *row;
    uint32_t *gen;
    size_t mask;
    uint32_t stamp;
} StampedSet;

/* Room for ``count`` rows (at most half full). 0: nothing changed; 1: a larger, empty set (the caller puts the
 * current query's rows back); -1: no memory. */
static int stamped_reserve(StampedSet *t, size_t count) {
    if (t->gen && 2 * count <= t->mask + 1) return 0;
    size_t size = table_size_for(count);
    free(t->hash);
    free(t->row);
    free(t->gen);
    t->hash = malloc(size * sizeof(uint64_t));
    t->row = malloc(size * sizeof(int64_t));
    t->gen = calloc(size, sizeof(uint32_t));
    t->mask = size - 1;
    t->stamp = 1;
    return t->hash && t->row && t->gen ? 1 : -1;
}

static inline void stamped_put(StampedSet *t, size_t slot, uint64_t h, int64_t row) {
    t->gen[slot] = t->stamp;
    t->hash[slot] = h;
    t->row[slot] = row;
}

/* The slot where ``h`` would go in an empty set, past the rows already there (no comparison). */
static inline size_t stamped_free_slot(const StampedSet *t, uint64_t h) {
    size_t slot = h & t->mask;
    while (t->gen[slot] == t->stamp) slot = (slot + 1) & t->mask;
    return slot;
}

/* The next query: an empty set. */
static void stamped_next(StampedSet *t) {
    if (++t->stamp == 0) { /* the stamps wrapped: clear them */
        memset(t->gen, 0, (t->mask + 1) * sizeof(uint32_t));
        t->stamp = 1;
    }
}

static void stamped_free(StampedSet *t) {
    free(t->hash);
    free(t->row);
    free(t->gen);
}

/* ------------------------------------------------------------------ one query's documents */
typedef struct {
    double score;
    const char *doc;
    int64_t rank;     /* the rank column */
    int64_t judgment; /* judgment row, -1 = not judged */
    uint32_t len;
    uint32_t row;     /* line order within the query */
} Entry;

static inline int doc_cmp(const Entry *a, const Entry *b) {
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->doc, b->doc, n);
    if (c) return c;
    return (a->len > b->len) - (a->len < b->len);
}

/* trec_eval's order: score descending, then doc id descending (bytes) */
static int cmp_trec(const void *x, const void *y) {
    const Entry *a = x, *b = y;
    if (a->score > b->score) return -1;
    if (a->score < b->score) return 1;
    return -doc_cmp(a, b);
}

/* the order given: rank ascending, then line order */
static int cmp_rank(const void *x, const void *y) {
    const Entry *a = x, *b = y;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

static void sort_entries(Entry *e, size_t n, int (*cmp)(const void *, const void *)) {
    if (n < 2) return;
    size_t i = 1;
    while (i < n && cmp(&e[i - 1], &e[i]) <= 0) i++;
    if (i == n) return;
    if (n <= 16) { /* insertion sort */
        for (; i < n; i++) {
            Entry t = e[i];
            size_t k = i;
            while (k > 0 && cmp(&e[k - 1], &t) > 0) {
                e[k] = e[k - 1];
                k--;
            }
            e[k] = t;
        }
        return;
    }
    qsort(e, n, sizeof(Entry), cmp);
}

/* Order by score descending; files are usually sorted by score already, leaving only the tie groups to
 * order by doc id: check that in O(n) and sort only what needs it. Returns the number of tie groups. */
static int64_t order_trec(Entry *e, size_t n) {
    size_t i = 1;
    while (i < n && e[i - 1].score >= e[i].score) i++;
    if (i < n) qsort(e, n, sizeof(Entry), cmp_trec);
    int64_t groups = 0;
    for (size_t start = 0; start < n;) {
        size_t end = start + 1;
        while (end < n && e[end].score == e[start].score) end++;
        if (end - start > 1) {
            groups++;
            sort_entries(e + start, end - start, cmp_trec);
        }
        start = end;
    }
    return groups;
}

/* ------------------------------------------------------------------ the scanner */
enum { ORDER_TREC = 0, ORDER_RANK = 1 };

typedef struct {
    const JudgmentIndex *ix;
    int order;
    int64_t depth;   /* -1: none */
    int judged_only;
    /* current query */
    Entry *entries;
    size_t n, cap;
    StampedSet dup;     /* the current query's documents: entry index by doc hash */
    const char *prev_q; /* the current query's id */
    size_t prev_qlen;
    int64_t query;      /* judged query index of the current query, -1 if not judged */
    int64_t last_query; /* the last judged query index found, -1 before any */
    LocalTable judged;  /* the current query's judgments */
    /* ranked queries seen */
    int64_t *seen;      /* ranked query number + 1 */
    uint64_t *seen_hash;
    size_t seen_mask;
    /* outputs */
    Buf qblob, qoff, num_ret, hit_off, hit_rank, hit_judgment, hit_score, ties, rank_down, rank_steps;
    int64_t nranked, nhits, lines;
    char *tag;          /* the first line's run tag (a copy) */
    size_t tag_len;
    int extra_ok;       /* columns after the run tag are ignored (extra_columns="ignore") */
    int f32;            /* scores rounded to float32 (trec_eval 9, pytrec_eval) */
    int64_t line;       /* lines read so far */
    PyObject *on_block; /* for tests (fault injection): called with the file offset reached after each read */
    IdList check;       /* ids whose Unicode form Python checks (a code point outside NFC_SAFE) */
    int table_checks;   /* Arrow: 1 checks ids as the readers do (table_id), 2 scores being finite too */
    /* why the scan stopped, if it did */
    const char *reason;
    int64_t reason_line;
    int nomem;
} Scan;

/* 1 if the doc is already in the current query, 0 if added, -1 out of memory */
static int dup_add(Scan *s, const char *doc, size_t n, uint64_t h) {
    int grown = stamped_reserve(&s->dup, s->n + 1);
    if (grown < 0) return -1;
    for (size_t k = 0; grown && k < s->n; k++) { /* a larger set: the entries already in the current query */
        uint64_t hk = hash_bytes(s->entries[k].doc, s->entries[k].len);
        stamped_put(&s->dup, stamped_free_slot(&s->dup, hk), hk, (int64_t)k);
    }
    StampedSet *t = &s->dup;
    size_t slot = h & t->mask;
    for (; t->gen[slot] == t->stamp; slot = (slot + 1) & t->mask) {
        if (t->hash[slot] == h) {
            const Entry *e = &s->entries[t->row[slot]];
            if (e->len == n && same_bytes(e->doc, doc, n)) return 1;
        }
    }
    stamped_put(t, slot, h, (int64_t)s->n);
    return 0;
}

/* Put the current query in order and emit its judged positions. */
static int finish_query(Scan *s) {
    Entry *e = s->entries;
    size_t n = s->n;
    int64_t ties = 0, down = 0, steps = 0;
    if (s->order == ORDER_TREC) {
        ties = order_trec(e, n);
        for (size_t i = 1; i < n; i++) down += e[i].rank < e[i - 1].rank;
        steps = n ? (int64_t)n - 1 : 0;
    } else {
        sort_entries(e, n, cmp_rank);
    }
    int64_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (s->depth >= 0 && (int64_t)i >= s->depth) break; /* depth counts before judged-only */
        int64_t j = e[i].judgment;
        if (s->judged_only && (j < 0 || !judged_at(s->ix, j))) continue;
        kept++;
        if (j >= 0) {
            /* int32: add_entry takes at most INT32_MAX documents a query, scan_init at most INT32_MAX judgments */
            if (buf_i32(&s->hit_rank, (int32_t)kept) || buf_i32(&s->hit_judgment, (int32_t)j) ||
                buf_f64(&s->hit_score, e[i].score))
                return -1;
            s->nhits++;
        }
    }
    if (buf_i64(&s->num_ret, kept) || buf_i64(&s->hit_off, s->nhits) || buf_i64(&s->ties, ties) ||
        buf_i64(&s->rank_down, down) || buf_i64(&s->rank_steps, steps))
        return -1;
    s->n = 0;
    stamped_next(&s->dup);
    return 0;
}

/* Start a query: refuse one seen before (the file is not grouped by query). 1 = seen, -1 = no memory. */
static int start_query(Scan *s, const char *id, size_t n) {
    if (2 * (size_t)(s->nranked + 1) > s->seen_mask + 1) {
        size_t size = table_size_for(2 * (size_t)(s->nranked + 1));
        int64_t *slots = calloc(size, sizeof(int64_t));
        uint64_t *hashes = malloc(size * sizeof(uint64_t));
        if (!slots || !hashes) {
            free(slots);
            free(hashes);
            return -1;
        }
        const int64_t *off = (const int64_t *)s->qoff.data;
        for (int64_t q = 0; q < s->nranked; q++) {
            uint64_t h = hash_bytes(s->qblob.data + off[q], (size_t)(off[q + 1] - off[q]));
            size_t slot = h & (size - 1);
            while (slots[slot]) slot = (slot + 1) & (size - 1);
            slots[slot] = q + 1;
            hashes[slot] = h;
        }
        free(s->seen);
        free(s->seen_hash);
        s->seen = slots;
        s->seen_hash = hashes;
        s->seen_mask = size - 1;
    }
    uint64_t h = hash_bytes(id, n);
    const int64_t *off = (const int64_t *)s->qoff.data;
    size_t slot = h & s->seen_mask;
    while (s->seen[slot]) {
        int64_t q = s->seen[slot] - 1;
        if (s->seen_hash[slot] == h && (size_t)(off[q + 1] - off[q]) == n &&
            memcmp(s->qblob.data + off[q], id, n) == 0)
            return 1;
        slot = (slot + 1) & s->seen_mask;
    }
    s->seen[slot] = s->nranked + 1;
    s->seen_hash[slot] = h;
    if (buf_put(&s->qblob, id, n) || buf_i64(&s->qoff, (int64_t)s->qblob.len)) return -1;
    s->nranked++;
    /* runs usually list their queries in the judgments' order: try the query after the last one found first
     * (read in sequence, where the hash table's slots are scattered over memory) */
    const JudgmentIndex *ix = s->ix;
    int64_t next = s->last_query + 1;
    if (next < ix->nq && (size_t)(ix->qoff[next + 1] - ix->qoff[next]) == n && same_bytes(ix->qblob + ix->qoff[next], id, n))
        s->query = next;
    else
        s->query = index_query(ix, id, n);
    if (s->query >= 0) s->last_query = s->query;
    return local_fill(&s->judged, ix, s->query);
}

/* byte classes: 0 ASCII data, 1 whitespace (CR included: a CR is refused only before more data on its line),
 * 2 a byte outside ASCII (UTF-8, checked by utf8_char), 3 refuse (a C0 control character or DEL), 4 line feed */
static unsigned char CLASS[256];

static void init_classes(void) {
    for (int c = 0; c < 256; c++) CLASS[c] = c >= 0x80 ? 2 : c == 0x7f || c < 0x20 ? 3 : 0;
    CLASS[' '] = CLASS['\t'] = CLASS['\v'] = CLASS['\f'] = 1;
    CLASS['\r'] = 1;
    CLASS['\n'] = 4;
}

/* Add one ranked document; qflags and dflags say what the ids hold (ID_WIDE, ID_CHECK). Returns 0, or -1 with
 * s->reason set (or s->nomem), and 1 in *new_query when the document starts a new query. */
static int add_entry(Scan *s, const char *q, size_t qn, int qflags, const char *doc, size_t dn, int dflags,
                     double score, int64_t rank, int *new_query) {
    *new_query = 0;
    if (dn > UINT32_MAX) {
        s->reason = "a doc id longer than 4 GB";
        return -1;
    }
    if (!s->prev_q || qn != s->prev_qlen || !same_bytes(q, s->prev_q, qn)) {
        if (s->prev_q && finish_query(s)) goto nomem;
        int r = start_query(s, q, qn);
        if (r < 0) goto nomem;
        if (r > 0) {
            s->reason = "a query whose lines are not all together";
            return -1;
        }
        s->prev_q = q;
        s->prev_qlen = qn;
        *new_query = 1;
        if ((qflags & ID_CHECK) && idlist_put(&s->check, q, qn, 0)) goto nomem;
    }
    if ((dflags & ID_CHECK) && idlist_put(&s->check, doc, dn, 1)) goto nomem;
    if (s->n == s->cap) {
        if (s->n >= INT32_MAX) { /* ranks are int32 (hit_rank) */
            s->reason = "a query of more than 2147483647 documents";
            return -1;
        }
        size_t cap = s->cap ? 2 * s->cap : 1024;
        Entry *grown = realloc(s->entries, cap * sizeof(Entry));
        if (!grown) goto nomem;
        s->entries = grown;
        s->cap = cap;
    }
    uint64_t h = hash_bytes(doc, dn);
    int d = dup_add(s, doc, dn, h);
    if (d < 0) goto nomem;
    if (d > 0) {
        s->reason = "a document listed twice for a query";
        return -1;
    }
    Entry *e = &s->entries[s->n];
    e->score = score;
    e->doc = doc;
    e->len = (uint32_t)dn;
    e->rank = rank;
    e->row = (uint32_t)s->n;
    e->judgment = s->query >= 0 ? local_find(&s->judged, s->ix, doc, dn, h) : -1;
    s->n++;
    return 0;
nomem:
    s->nomem = 1;
    return -1;
}

/* After the last document: the last query, or the reason there is nothing. */
static int finish_scan(Scan *s) {
    if (!s->prev_q) {
        s->reason = "no data line";
        return -1;
    }
    if (finish_query(s)) {
        s->nomem = 1;
        return -1;
    }
    return 0;
}

#define STOP(why)              \
    do {                       \
        s->reason = (why);     \
        s->reason_line = line; \
        return -1;             \
    } while (0)

/* A CR followed by more data before the end of the line [p, end). */
static int lone_cr(const char *p, const char *end) {
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    if (!cr) return 0;
    for (const char *q = cr; q < end; q++)
        if (CLASS[(unsigned char)*q] != 1) return 1;
    return 0;
}

/* Scan the complete lines of [*pp, end): every line that ends with '\n', and the last one too when at_eof.
 * Leaves *pp at the first byte not consumed (the start of an incomplete line). 0, or -1 with s->reason set
 * (or s->nomem). One pass over the bytes: the tokenizer finds the line end. */
static int scan_lines(Scan *s, const char **pp, const char *end, int at_eof) {
    const char *p = *pp;
    while (p < end) {
        const char *line_start = p;
        int64_t line = s->line + 1;
        if (*p == '#') { /* a comment: '#' as the line's first byte */
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl && !at_eof) {
                if ((size_t)(end - p) > MAX_LINE) STOP("a line longer than the limit");
                break;
            }
            if (!nl) nl = end;
            if ((size_t)(nl - p) > MAX_LINE) STOP("a line longer than the limit");
            if (lone_cr(p, nl)) STOP("a carriage return followed by more data on its line");
            s->line = line;
            p = nl < end ? nl + 1 : end;
            continue;
        }
        const char *tok[6];
        size_t len[6];
        int flags[6];
        int nt = 0;
        unsigned char c = 0;
        for (;;) {
            const char *gap = p;
            while (p < end && (c = CLASS[(unsigned char)*p]) == 1) p++;
            if (p >= end || c == 4) break;
            /* a CR in the whitespace before a token: lines ended by CR alone (one byte: one comparison) */
            if (p > gap && (p - gap == 1 ? *gap == '\r' : memchr(gap, '\r', (size_t)(p - gap)) != NULL))
                STOP("a carriage return followed by more data on its line");
            const char *t = p;
            int f = 0;
            for (;;) {
                while (p < end && (c = CLASS[(unsigned char)*p]) == 0) p++;
                if (p >= end || c != 2) break;
                uint32_t cp;
                int k = utf8_char((const unsigned char *)p, (const unsigned char *)end, &cp);
                if (k < 0 && !at_eof) { /* a character cut by the end of the bytes read: wait for more */
                    p = end;
                    break;
                }
                if (k <= 0) STOP("bytes that are not valid UTF-8");
                if (cp < 0xA0) STOP("a C1 control character");
                f |= ID_WIDE | (nfc_safe(cp) ? 0 : ID_CHECK);
                p += k;
            }
            if (p < end && c == 3) STOP("a control character");
            if (nt < 6) {
                tok[nt] = t;
                len[nt] = (size_t)(p - t);
                flags[nt] = f;
            } else if (!s->extra_ok) {
                STOP("a line with more than 6 columns");
            }
            nt++;
        }
        if ((size_t)(p - line_start) > MAX_LINE) STOP("a line longer than the limit");
        if (p >= end && !at_eof) { /* an incomplete line: wait for more bytes */
            p = line_start;
            break;
        }
        s->line = line;
        if (p < end) p++; /* the newline */
        if (nt == 0) continue; /* blank line */
        if (nt < 6) STOP("a line with fewer than 6 columns");
        s->lines++;
        if (!s->tag) {
            s->tag = malloc(len[5] ? len[5] : 1);
            if (!s->tag) {
                s->nomem = 1;
                return -1;
            }
            memcpy(s->tag, tok[5], len[5]);
            s->tag_len = len[5];
        } else if (len[5] != s->tag_len || memcmp(tok[5], s->tag, len[5])) {
            STOP("run tags that differ");
        }
        int64_t rank;
        double score;
        if (parse_rank(tok[3], len[3], &rank)) STOP("a rank that is not a plain integer");
        if (parse_score(tok[4], len[4], &score)) STOP("a score that is not a finite decimal number");
        if (s->f32) score = (double)(float)score;
        int new_query;
        if (add_entry(s, tok[0], len[0], flags[0], tok[2], len[2], flags[2], score, rank, &new_query)) {
            s->reason_line = line;
            return -1;
        }
    }
    *pp = p;
    return 0;
}

/* The current query's bytes were copied from `from` to `to`: point at the copy. */
static void rebase(Scan *s, const char *from, const char *to) {
    if (s->prev_q) s->prev_q = to + (s->prev_q - from);
    for (size_t i = 0; i < s->n; i++) s->entries[i].doc = to + (s->entries[i].doc - from);
}

/* Scan bytes [start, end) of an open file with pread(), keeping in the buffer only what the current query
 * needs. 0; -1 with s->reason set; -2 with errno set (a read error); -3 when the file ended before `end`
 * (it shrank while it was read). */
static int scan_fd(Scan *s, int fd, long long start, long long end) {
    size_t cap = READ_BLOCK * 2, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        s->nomem = 1;
        return -1;
    }
    const char *p = buf;      /* next byte to scan */
    long long pos = start;    /* file offset of buf[len] */
    int rc = 0;
    while (pos < end) {
        /* keep from the current query's first byte, or from the unscanned bytes when no query is open */
        const char *keep = s->prev_q && s->prev_q < p ? s->prev_q : p;
        size_t kept = len - (size_t)(keep - buf);
        size_t want = end - pos < (long long)READ_BLOCK ? (size_t)(end - pos) : READ_BLOCK;
        char *to = buf;
        if (kept + want > cap) { /* a query longer than the buffer: a larger one */
            size_t grown = cap;
            while (kept + want > grown) grown *= 2;
            to = malloc(grown);
            if (!to) {
                s->nomem = 1;
                rc = -1;
                break;
            }
            cap = grown;
        }
        if (keep != to) {
            memmove(to, keep, kept);
            rebase(s, keep, to);
            p = to + (p - keep);
            len = kept;
        }
        if (to != buf) {
            free(buf);
            buf = to;
        }
        ssize_t got = pread(fd, buf + len, want, (off_t)pos);
        if (got < 0) {
            if (errno == EINTR) continue;
            rc = -2;
            break;
        }
        if (got == 0) {
            rc = -3;
            break;
        }
        len += (size_t)got;
        pos += got;
        if (s->on_block) { /* a test's hook, with the GIL held while it runs */
            PyGILState_STATE gil = PyGILState_Ensure();
            PyObject *r = PyObject_CallFunction(s->on_block, "L", pos);
            if (r) Py_DECREF(r);
            else PyErr_WriteUnraisable(s->on_block);
            PyGILState_Release(gil);
        }
        if (scan_lines(s, &p, buf + len, pos >= end)) {
            rc = -1;
            break;
        }
    }
    if (!rc && finish_scan(s)) {
        s->reason_line = s->line;
        rc = -1;
    }
    free_large(buf);
    return rc;
}

/* A scanner ready for its first document; -1 (s->nomem set) when memory runs out. */
static int scan_init(Scan *s, const JudgmentIndex *ix, int order, int64_t depth, int judged_only) {
    memset(s, 0, sizeof *s);
    s->ix = ix;
    s->order = order;
    s->depth = depth;
    s->judged_only = judged_only;
    s->last_query = -1;
    if (ix->nj > INT32_MAX) { /* judgment rows are int32 (hit_judgment) */
        s->reason = "more than 2147483647 judgments";
        return -1;
    }
    if (buf_i64(&s->qoff, 0) || buf_i64(&s->hit_off, 0) || buf_i64(&s->check.off, 0) ||
        stamped_reserve(&s->dup, 1024) < 0) {
        s->nomem = 1;
        return -1;
    }
    return 0;
}

static void scan_free(Scan *s) {
    free(s->tag);
    free(s->entries);
    stamped_free(&s->dup);
    free(s->seen);
    free(s->seen_hash);
    free(s->judged.hash);
    free(s->judged.row);
    idlist_free(&s->check);
    Buf *bufs[] = {&s->qblob, &s->qoff, &s->num_ret, &s->hit_off, &s->hit_rank, &s->hit_judgment,
                   &s->hit_score, &s->ties, &s->rank_down, &s->rank_steps};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free_large(bufs[i]->data);
}

static PyObject *bytes_of(const Buf *b) { return PyBytes_FromStringAndSize(b->len ? b->data : "", (Py_ssize_t)b->len); }

static PyObject *scan_result(Scan *s) {
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    struct {
        const char *key;
        const Buf *buf;
    } items[] = {{"query_blob", &s->qblob},     {"query_offsets", &s->qoff}, {"num_ret", &s->num_ret},
                 {"hit_offsets", &s->hit_off},  {"hit_rank", &s->hit_rank},  {"hit_judgment", &s->hit_judgment},
                 {"hit_score", &s->hit_score},  {"ties", &s->ties},          {"rank_down", &s->rank_down},
                 {"rank_steps", &s->rank_steps},     {"check_blob", &s->check.blob}, {"check_offsets", &s->check.off},
                 {"check_kind", &s->check.kind}};
    for (size_t i = 0; i < sizeof items / sizeof *items; i++) {
        /* the per-hit arrays (the large ones) are handed over without a copy */
        PyObject *v = items[i].buf == &s->hit_rank || items[i].buf == &s->hit_judgment || items[i].buf == &s->hit_score
                          ? block_of((Buf *)items[i].buf)
                          : bytes_of(items[i].buf);
        if (!v || PyDict_SetItemString(out, items[i].key, v)) {
            Py_XDECREF(v);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(v);
    }
    PyObject *tag = PyUnicode_DecodeUTF8(s->tag ? s->tag : "", (Py_ssize_t)s->tag_len, "strict");
    PyObject *lines = PyLong_FromLongLong(s->lines);
    if (!tag || !lines || PyDict_SetItemString(out, "tag", tag) || PyDict_SetItemString(out, "lines", lines)) {
        Py_XDECREF(tag);
        Py_XDECREF(lines);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(tag);
    Py_DECREF(lines);
    return out;
}

static PyObject *fallback(const char *reason, int64_t line) {
    return Py_BuildValue("{s:s,s:L}", "fallback", reason, "line", (long long)line);
}

/* scan_trec_run(source, index, order, depth, judged_only, start=0, end=-1, extra_ok=False, f32=False) -> dict
 *
 * Scans bytes [start, end) of the file at the path `source` (end -1: to the end; both at line starts), or
 * the whole of `source` when it is a bytes-like object (a file already in memory, such as standard input).
 * The dict holds the outputs as native-endian bytes (see the Python wrapper), or {"fallback": reason, "line":
 * n} when the file needs the Python readers, or {"changed": size} when the file changed size while it was read
 * (or is shorter than `end`). extra_ok: columns after the run tag are ignored; f32: scores are rounded to
 * float32; on_block: for tests, a callable called with the file offset reached after each read (fault
 * injection: it may truncate the file). */
static PyObject *scan_trec_run(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"source", "index", "order", "depth", "judged_only", "start", "end", "extra_ok", "f32",
                             "on_block", NULL};
    PyObject *source, *on_block = Py_None;
    JudgmentIndex *ix;
    int order, judged_only, extra_ok = 0, f32 = 0;
    long long depth, start = 0, end = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!iLp|LLppO", kwlist, &source, &JudgmentIndexType, &ix, &order,
                                     &depth, &judged_only, &start, &end, &extra_ok, &f32, &on_block))
        return NULL;
    if (!ix->ready) {
        PyErr_SetString(PyExc_ValueError, "the JudgmentIndex is not initialised");
        return NULL;
    }
    if (order != ORDER_TREC && order != ORDER_RANK) {
        PyErr_SetString(PyExc_ValueError, "order must be 0 (trec_eval) or 1 (rank)");
        return NULL;
    }
    Py_buffer view = {0};
    int fd = -1;
    long long size;
    if (PyObject_CheckBuffer(source)) {
        if (PyObject_GetBuffer(source, &view, PyBUF_SIMPLE)) return NULL;
        size = (long long)view.len;
    } else {
        PyObject *path = NULL;
        if (!PyUnicode_FSConverter(source, &path)) return NULL;
        fd = open(PyBytes_AS_STRING(path), O_RDONLY);
        if (fd < 0) {
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
            Py_DECREF(path);
            return NULL;
        }
        Py_DECREF(path);
        struct stat st;
        if (fstat(fd, &st)) {
            PyErr_SetFromErrno(PyExc_OSError);
            close(fd);
            return NULL;
        }
        size = (long long)st.st_size;
    }
    if (end > size) { /* the file is shorter than when its parts were cut: it changed */
        if (fd >= 0) close(fd);
        PyBuffer_Release(&view);
        return Py_BuildValue("{s:L}", "changed", size);
    }
    if (end < 0) end = size;
    if (start < 0 || start > end) {
        if (fd >= 0) close(fd);
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "start must be within the file and not after end");
        return NULL;
    }
    if (end == start) {
        if (fd >= 0) close(fd);
        PyBuffer_Release(&view);
        return fallback("no data line", 0);
    }
    Scan s;
    Py_INCREF(ix);
    int rc, err = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = scan_init(&s, ix, order, depth, judged_only);
    s.extra_ok = extra_ok;
    s.f32 = f32;
    s.on_block = on_block == Py_None ? NULL : on_block;
    if (!rc && fd >= 0) {
        rc = scan_fd(&s, fd, start, end);
        err = errno;
    } else if (!rc) {
        const char *p = (const char *)view.buf + start;
        rc = scan_lines(&s, &p, (const char *)view.buf + end, 1);
        if (!rc && finish_scan(&s)) {
            s.reason_line = s.line;
            rc = -1;
        }
    }
    Py_END_ALLOW_THREADS
    PyObject *out;
    if (rc == -2) {
        errno = err;
        out = PyErr_SetFromErrno(PyExc_OSError);
    } else if (rc == -3) {
        struct stat st;
        out = Py_BuildValue("{s:L}", "changed", fstat(fd, &st) ? -1LL : (long long)st.st_size);
    } else if (rc && s.nomem) {
        out = PyErr_NoMemory();
    } else if (rc) {
        out = fallback(s.reason, s.reason_line);
    } else {
        struct stat st; /* a file that changed size while it was read (grown or shrunk) */
        if (fd >= 0 && !fstat(fd, &st) && (long long)st.st_size != size)
            out = Py_BuildValue("{s:L}", "changed", (long long)st.st_size);
        else
            out = scan_result(&s);
    }
    scan_free(&s);
    if (fd >= 0) close(fd);
    PyBuffer_Release(&view);
    Py_DECREF(ix);
    return out;
}

/* ------------------------------------------------------------------ in-memory runs (Arrow C stream) */
/* The Arrow C data interface, https://arrow.apache.org/docs/format/CDataInterface.html */
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};

static const char *stream_error(struct ArrowArrayStream *stream) {
    const char *e = stream->get_last_error ? stream->get_last_error(stream) : NULL;
    return e ? e : "unknown error";
}

enum { STR_VIEW, STR_UTF8, STR_LARGE };

typedef struct {
    int kind;
    int64_t offset;
    const uint8_t *views;
    const int32_t *off32;
    const int64_t *off64;
    const char *data;
    const void **buffers;
    int64_t n_buffers;
} StrColumn;

static const char *str_column(const char *format, const struct ArrowArray *a, StrColumn *c) {
    c->offset = a->offset;
    c->buffers = a->buffers;
    c->n_buffers = a->n_buffers;
    if (a->null_count != 0) return "missing ids";
    if (!strcmp(format, "vu") && a->n_buffers >= 2) {
        c->kind = STR_VIEW;
        c->views = a->buffers[1];
    } else if (!strcmp(format, "u") && a->n_buffers == 3) {
        c->kind = STR_UTF8;
        c->off32 = a->buffers[1];
        c->data = a->buffers[2];
    } else if (!strcmp(format, "U") && a->n_buffers == 3) {
        c->kind = STR_LARGE;
        c->off64 = a->buffers[1];
        c->data = a->buffers[2];
    } else {
        return "an id column that is not a string column";
    }
    return NULL;
}

/* The i-th string; -1 for a view that points outside the array's data buffers. */
static inline int str_at(const StrColumn *c, int64_t i, const char **p, size_t *n) {
    i += c->offset;
    if (c->kind == STR_VIEW) {
        const uint8_t *v = c->views + 16 * i;
        int32_t len, buf, off;
        memcpy(&len, v, 4);
        if (len < 0) return -1;
        *n = (size_t)len;
        if (len <= 12) {
            *p = (const char *)v + 4;
        } else {
            memcpy(&buf, v + 8, 4);
            memcpy(&off, v + 12, 4);
            if (buf < 0 || 2 + (int64_t)buf >= c->n_buffers - 1 || off < 0) return -1;
            *p = (const char *)c->buffers[2 + buf] + off;
        }
    } else if (c->kind == STR_UTF8) {
        *p = c->data + c->off32[i];
        *n = (size_t)(c->off32[i + 1] - c->off32[i]);
    } else {
        *p = c->data + c->off64[i];
        *n = (size_t)(c->off64[i + 1] - c->off64[i]);
    }
    return 0;
}

/* What the readers refuse in an id of a table (a DataFrame, Arrow, Parquet): an empty id, a control character
 * (C0, DEL, C1), bytes that are not UTF-8; NULL with *flags set (ID_WIDE, ID_CHECK) when the id is fine. Eight
 * bytes at a time while they are printable ASCII. */
static const char *table_id(const char *p, size_t n, int *flags) {
    if (!n) return "an empty id";
    const unsigned char *u = (const unsigned char *)p, *end = u + n;
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    while (end - u >= 8) {
        uint64_t w, del;
        memcpy(&w, u, 8);
        del = w ^ (0x7f * ones);
        if ((w & highs) | ((w - 0x20 * ones) & ~w & highs) | ((del - ones) & ~del & highs)) break;
        u += 8;
    }
    int f = 0;
    while (u < end) {
        if (*u < 0x80) {
            if (*u < 0x20 || *u == 0x7f) return "a control character in an id";
            u++;
            continue;
        }
        uint32_t cp;
        int k = utf8_char(u, end, &cp);
        if (k <= 0) return "an id that is not valid UTF-8";
        if (cp < 0xA0) return "a control character in an id";
        f |= ID_WIDE | (nfc_safe(cp) ? 0 : ID_CHECK);
        u += k;
    }
    *flags = f;
    return NULL;
}

/* One batch: query ids, doc ids, scores (float64), ranks (int64). With s->table_checks (a table read as a run, not
 * a Run already checked) ids are checked as the readers check them (table_id) and scores must be finite. */
static int scan_batch(Scan *s, const struct ArrowSchema *schema, const struct ArrowArray *batch) {
    if (schema->n_children != 4 || batch->n_children != 4 || batch->offset != 0) {
        s->reason = "a batch that is not (query_id, doc_id, score, rank)";
        return -1;
    }
    StrColumn q, d;
    const char *why;
    if ((why = str_column(schema->children[0]->format, batch->children[0], &q)) ||
        (why = str_column(schema->children[1]->format, batch->children[1], &d))) {
        s->reason = why;
        return -1;
    }
    const struct ArrowArray *sc = batch->children[2], *rk = batch->children[3];
    if (strcmp(schema->children[2]->format, "g") || strcmp(schema->children[3]->format, "l") ||
        sc->null_count != 0 || rk->null_count != 0) {
        s->reason = "scores that are not float64 or ranks that are not int64, or missing values";
        return -1;
    }
    const double *score = (const double *)sc->buffers[1] + sc->offset;
    const int64_t *rank = (const int64_t *)rk->buffers[1] + rk->offset;
    for (int64_t i = 0; i < batch->length; i++) {
        const char *qp, *dp;
        size_t qn, dn;
        if (str_at(&q, i, &qp, &qn) || str_at(&d, i, &dp, &dn)) {
            s->reason = "a string view outside its buffers";
            return -1;
        }
        if (s->order == ORDER_TREC && isnan(score[i])) {
            s->reason = "a NaN score";
            return -1;
        }
        int qflags = 0, dflags = 0;
        if (s->table_checks) {
            if ((why = table_id(qp, qn, &qflags)) || (why = table_id(dp, dn, &dflags))) {
                s->reason = why;
                return -1;
            }
            if (s->table_checks > 1 && !isfinite(score[i])) {
                s->reason = "a score that is not finite";
                return -1;
            }
        }
        int new_query;
        if (add_entry(s, qp, qn, qflags, dp, dn, dflags, s->f32 ? (double)(float)score[i] : score[i], rank[i],
                      &new_query))
            return -1;
    }
    return 0;
}

/* scan_arrow(stream, index, order, depth, judged_only, f32=False, checks=0) -> dict: the same as scan_trec_run,
 * for an Arrow stream (PyCapsule "arrow_array_stream"; or a list of them, read in turn) of (query_id, doc_id,
 * score float64, rank int64) batches.
 * Every batch stays alive until the end (a query may span batches); nothing is copied. checks: 0 for a Run (already
 * checked), 1 to check ids as the readers do, 2 to require finite scores too (a table with a score column). */
static PyObject *scan_arrow(PyObject *self, PyObject *args) {
    PyObject *given;
    JudgmentIndex *ix;
    int order, judged_only, f32 = 0, checks = 0;
    long long depth;
    if (!PyArg_ParseTuple(args, "OO!iLp|pi", &given, &JudgmentIndexType, &ix, &order, &depth, &judged_only, &f32,
                          &checks))
        return NULL;
    if (!ix->ready || (order != ORDER_TREC && order != ORDER_RANK)) {
        PyErr_SetString(PyExc_ValueError, "an initialised JudgmentIndex and order 0 or 1 are needed");
        return NULL;
    }
    /* one stream, or a list of streams read one after another (slices of a table exported one by one: polars
     * copies a table of several chunks into one batch when it exports it whole) */
    PyObject *list = PyList_Check(given) ? given : NULL;
    Py_ssize_t ns = list ? PyList_GET_SIZE(list) : 1;
    struct ArrowSchema *schemas = calloc((size_t)(ns ? ns : 1), sizeof *schemas);
    struct ArrowArrayStream **streams = calloc((size_t)(ns ? ns : 1), sizeof *streams);
    struct ArrowArray *batches = NULL;
    size_t *batch_schema = NULL;
    size_t nb = 0, cap = 0;
    Py_ssize_t got = 0; /* streams whose schema was read */
    PyObject *out = NULL;
    if (!schemas || !streams) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < ns; k++) {
        PyObject *capsule = list ? PyList_GET_ITEM(list, k) : given;
        struct ArrowArrayStream *stream = PyCapsule_GetPointer(capsule, "arrow_array_stream");
        if (!stream) goto done;
        if (!stream->release) {
            PyErr_SetString(PyExc_ValueError, "the Arrow stream was already consumed");
            goto done;
        }
        streams[k] = stream;
    }
    for (Py_ssize_t k = 0; k < ns; k++) {
        struct ArrowArrayStream *stream = streams[k];
        if (stream->get_schema(stream, &schemas[k])) {
            PyErr_Format(PyExc_ValueError, "Arrow stream: %s", stream_error(stream));
            goto done;
        }
        got = k + 1;
        for (;;) {
            if (nb == cap) {
                cap = cap ? 2 * cap : 16;
                struct ArrowArray *grown = realloc(batches, cap * sizeof *batches);
                size_t *grown_of = grown ? realloc(batch_schema, cap * sizeof *batch_schema) : NULL;
                if (grown) batches = grown;
                if (!grown || !grown_of) {
                    PyErr_NoMemory();
                    goto done;
                }
                batch_schema = grown_of;
            }
            if (stream->get_next(stream, &batches[nb])) {
                PyErr_Format(PyExc_ValueError, "Arrow stream: %s", stream_error(stream));
                goto done;
            }
            if (!batches[nb].release) break;
            batch_schema[nb++] = (size_t)k;
        }
    }
    Scan s;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = scan_init(&s, ix, order, depth, judged_only);
    s.f32 = f32;
    s.table_checks = checks;
    for (size_t b = 0; !rc && b < nb; b++) rc = scan_batch(&s, &schemas[batch_schema[b]], &batches[b]);
    if (!rc) rc = finish_scan(&s);
    Py_END_ALLOW_THREADS
    if (rc && s.nomem) out = PyErr_NoMemory();
    else if (rc) out = fallback(s.reason, 0);
    else out = scan_result(&s);
    scan_free(&s);
done:
    for (size_t b = 0; b < nb; b++) batches[b].release(&batches[b]);
    free(batches);
    free(batch_schema);
    for (Py_ssize_t k = 0; k < got; k++)
        if (schemas[k].release) schemas[k].release(&schemas[k]);
    for (Py_ssize_t k = 0; streams && k < ns; k++)
        if (streams[k] && streams[k]->release) streams[k]->release(streams[k]);
    free(schemas);
    free(streams);
    return out;
}

/* ------------------------------------------------------------------ TREC qrels */
/* read_qrels(path, columns) reads a qrels file of 4 (TREC: query iteration doc grade) or 3 (query doc grade)
 * columns into flat arrays, or says why the Python readers must read it. Taken as is: lines of exactly that
 * many tokens of printable ASCII (separated by spaces, tabs, VT, FF; CR only before LF), '#' comment lines,
 * blank lines, and grades [+-]?[0-9]{1,18}. Anything else (a byte outside printable ASCII, another column
 * count, a grade that is not a plain integer, a document judged twice for a query, no data line) is a
 * fallback: the readers then give the exact error or warning, with the line. The file is read with read() in
 * blocks (memory holds a block, never the file), not mapped, so a file that changes meanwhile cannot fault. A
 * query's documents are checked for repeats as its lines are read (a small table per query, in cache); only a
 * file whose queries' lines are apart gets the check over all its rows at the end. */

typedef struct {
    Buf qblob, qoff, dblob, doff, rowq, grade;
    int wide;         /* grades are int64 in ``grade``; 0: int8, while every grade so far fits (qrels' do) */
    int64_t nq, nj;
    /* query ids: slot -> query index + 1 (0 empty) */
    int64_t *qslot;
    uint64_t *qhash;
    size_t qmask;
    int64_t prev_q;   /* the previous data line's query, -1 before the first */
    int scattered;    /* a query's lines are apart: the duplicate check runs at the end, over every row */
    /* while a query's lines follow each other: its rows so far by doc hash, for the duplicate check */
    int64_t run_start;
    StampedSet seen;
    int64_t dup;      /* a row that repeats an earlier row's (query, doc), -1 none */
    int64_t line;     /* lines read so far */
    IdList check;     /* ids whose Unicode form Python checks (a code point outside NFC_SAFE) */
} Qrels;

static void qrels_free(Qrels *r) {
    Buf *bufs[] = {&r->qblob, &r->qoff, &r->dblob, &r->doff, &r->rowq, &r->grade};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free_large(bufs[i]->data);
    idlist_free(&r->check);
    free_large(r->qslot);
    free_large(r->qhash);
    stamped_free(&r->seen);
}

/* Grow the query table to ``size`` slots, rehashing. */
static int qrels_grow(Qrels *r, size_t size) {
    int64_t *ns = calloc(size, sizeof(int64_t));
    uint64_t *nh = malloc(size * sizeof(uint64_t));
    if (!ns || !nh) {
        free(ns);
        free(nh);
        return -1;
    }
    if (r->qslot) {
        for (size_t i = 0; i <= r->qmask; i++) {
            if (!r->qslot[i]) continue;
            size_t s = r->qhash[i] & (size - 1);
            while (ns[s]) s = (s + 1) & (size - 1);
            ns[s] = r->qslot[i];
            nh[s] = r->qhash[i];
        }
    }
    free(r->qslot);
    free(r->qhash);
    r->qslot = ns;
    r->qhash = nh;
    r->qmask = size - 1;
    return 0;
}

/* The index of query id ``id`` (``id`` points into the bytes read), added if new (and listed for Python's check of
 * its Unicode form when ``flags`` has ID_CHECK); -1 when memory runs out. Lines of a query usually follow each
 * other: the previous line's query is tried first. A query whose lines are apart marks the file scattered. */
static int64_t qrels_query(Qrels *r, const char *id, size_t n, int flags) {
    const int64_t *off = (const int64_t *)r->qoff.data;
    if (r->prev_q >= 0 && (size_t)(off[r->prev_q + 1] - off[r->prev_q]) == n &&
        !memcmp(r->qblob.data + off[r->prev_q], id, n))
        return r->prev_q;
    if ((size_t)(r->nq + 1) * 2 > r->qmask + 1 && qrels_grow(r, 2 * (r->qmask + 1))) return -1;
    uint64_t h = hash_bytes(id, n);
    size_t s = h & r->qmask;
    int64_t q = -1;
    for (; r->qslot[s]; s = (s + 1) & r->qmask) {
        int64_t k = r->qslot[s] - 1;
        if (r->qhash[s] == h && (size_t)(off[k + 1] - off[k]) == n && !memcmp(r->qblob.data + off[k], id, n)) {
            q = k;
            break;
        }
    }
    if (q < 0) {
        if (buf_put(&r->qblob, id, n) || buf_i64(&r->qoff, (int64_t)r->qblob.len)) return -1;
        if ((flags & ID_CHECK) && idlist_put(&r->check, id, n, 0)) return -1;
        r->qslot[s] = ++r->nq;
        r->qhash[s] = h;
        q = r->nq - 1;
    } else {
        r->scattered = 1; /* seen before another query's lines */
    }
    r->prev_q = q;
    r->run_start = r->nj;
    stamped_next(&r->seen);
    return q;
}

/* The grades made int64 (each int8 widened in place, from the last); -1 out of memory. */
static int qrels_widen(Qrels *r) {
    size_t n = r->grade.len;
    if (n && buf_grow(&r->grade, 7 * n)) return -1;
    const int8_t *narrow = (const int8_t *)r->grade.data;
    int64_t *wide = (int64_t *)r->grade.data;
    for (size_t i = n; i-- > 0;) wide[i] = narrow[i];
    r->grade.len = 8 * n;
    r->wide = 1;
    return 0;
}

static int qrels_add(Qrels *r, int64_t q, const char *doc, size_t n, int flags, int64_t grade) {
    int32_t q32 = (int32_t)q;
    uint64_t h = hash_bytes(doc, n);
    if (!r->scattered && r->dup < 0) { /* the duplicate check of a query whose lines follow each other */
        StampedSet *t = &r->seen;
        int grown = stamped_reserve(t, (size_t)(r->nj - r->run_start) + 1);
        if (grown < 0) return -1;
        const int64_t *off = (const int64_t *)r->doff.data;
        for (int64_t j = r->run_start; grown && j < r->nj; j++) { /* a larger set: the query's rows so far */
            uint64_t hj = hash_bytes(r->dblob.data + off[j], (size_t)(off[j + 1] - off[j]));
            stamped_put(t, stamped_free_slot(t, hj), hj, j);
        }
        size_t s = h & t->mask;
        for (; t->gen[s] == t->stamp; s = (s + 1) & t->mask) {
            int64_t i = t->row[s];
            if (t->hash[s] == h && (size_t)(off[i + 1] - off[i]) == n && !memcmp(r->dblob.data + off[i], doc, n)) {
                r->dup = r->nj;
                break;
            }
        }
        if (r->dup < 0) stamped_put(t, s, h, r->nj);
    }
    if ((flags & ID_CHECK) && idlist_put(&r->check, doc, n, 1)) return -1;
    if (!r->wide && (grade < INT8_MIN || grade > INT8_MAX) && qrels_widen(r)) return -1;
    int8_t g8 = (int8_t)grade;
    if (buf_put(&r->dblob, doc, n) || buf_i64(&r->doff, (int64_t)r->dblob.len) || buf_put(&r->rowq, &q32, 4) ||
        (r->wide ? buf_i64(&r->grade, grade) : buf_put(&r->grade, &g8, 1)))
        return -1;
    r->nj++;
    return 0;
}

/* The first row that repeats an earlier row's (query, doc), or -1; -2 when memory runs out: for a file whose
 * queries' lines are apart (the others are checked as they are read). The rows are grouped by query (a counting
 * sort) and each query's docs go through a small table that stays in cache. */
static int64_t qrels_duplicate(const Qrels *r) {
    const int64_t *off = (const int64_t *)r->doff.data;
    const int32_t *rowq = (const int32_t *)r->rowq.data;
    int64_t nq = r->nq, nj = r->nj, found = -1;
    int64_t *start = calloc((size_t)nq + 1, sizeof(int64_t)), *rows = malloc(((size_t)nj + 1) * sizeof(int64_t));
    uint64_t *hash = NULL;
    int64_t *slot = NULL;
    size_t cap = 0;
    if (!start || !rows) goto nomem;
    for (int64_t j = 0; j < nj; j++) start[rowq[j] + 1]++;
    for (int64_t q = 0; q < nq; q++) start[q + 1] += start[q];
    for (int64_t j = 0; j < nj; j++) rows[start[rowq[j]]++] = j; /* start[q] is now the end of q */
    for (int64_t q = nq - 1; q >= 0; q--) start[q + 1] = start[q];
    start[0] = 0;
    for (int64_t q = 0; q < nq; q++) {
        int64_t count = start[q + 1] - start[q];
        size_t size = 16;
        while (size < 2 * (size_t)count) size <<= 1;
        if (size > cap) {
            free(hash);
            free(slot);
            hash = malloc(size * sizeof(uint64_t));
            slot = malloc(size * sizeof(int64_t));
            cap = size;
            if (!hash || !slot) goto nomem;
        }
        memset(slot, 0xff, size * sizeof(int64_t));
        for (int64_t k = start[q]; k < start[q + 1]; k++) {
            int64_t j = rows[k];
            const char *doc = r->dblob.data + off[j];
            size_t n = (size_t)(off[j + 1] - off[j]);
            uint64_t h = hash_bytes(doc, n);
            size_t s = h & (size - 1);
            for (; slot[s] >= 0; s = (s + 1) & (size - 1)) {
                int64_t i = slot[s];
                if (hash[s] == h && (size_t)(off[i + 1] - off[i]) == n && !memcmp(r->dblob.data + off[i], doc, n)) {
                    if (found < 0 || j < found) found = j; /* rows of a query ascend: j is the later one */
                    break;
                }
            }
            if (slot[s] < 0) {
                slot[s] = j;
                hash[s] = h;
            }
        }
    }
    free(start);
    free(rows);
    free(hash);
    free(slot);
    return found;
nomem:
    free(start);
    free(rows);
    free(hash);
    free(slot);
    return -2;
}

/* byte classes of qrels: 0 data (printable ASCII), 1 whitespace, 2 CR, 3 LF, 4 refuse (a control character),
 * 5 a byte outside ASCII (UTF-8, checked by utf8_char) */
static unsigned char QCLASS[256];

static void init_qrels_classes(void) {
    for (int c = 0; c < 256; c++) QCLASS[c] = c >= 0x80 ? 5 : c > 0x20 && c < 0x7f ? 0 : 4;
    QCLASS[' '] = QCLASS['\t'] = QCLASS['\v'] = QCLASS['\f'] = 1;
    QCLASS['\r'] = 2;
    QCLASS['\n'] = 3;
}

#define QSTOP(why)        \
    do {                  \
        *reason = (why);  \
        *at = line;       \
        return 1;         \
    } while (0)

/* Reads the lines of [p, end): whole lines (the last one may lack its newline only at the end of the file), line
 * numbers going on from r->line. 0 read, 1 fallback (reason and line set), -1 out of memory. */
static int qrels_parse(Qrels *r, const char *p, const char *end, int ncols, const char **reason, int64_t *at) {
    int doc_col = ncols - 2, grade_col = ncols - 1;
    int64_t line = r->line;
    while (p < end) {
        const char *line_start = p;
        line++;
        if (*p == '#') { /* a comment, unless a lone CR would end it early for the readers */
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *stop = nl ? nl : end;
            for (const char *cr = memchr(p, '\r', (size_t)(stop - p)); cr; cr = memchr(cr + 1, '\r', (size_t)(stop - cr - 1)))
                if (cr + 1 >= end || cr[1] != '\n') QSTOP("a carriage return that does not end a line");
            if ((size_t)(stop - p) > MAX_LINE) QSTOP("a line longer than the limit");
            p = nl ? nl + 1 : end;
            continue;
        }
        const char *tok[4];
        size_t len[4];
        int flags[4];
        int nt = 0;
        for (;;) {
            unsigned char c = 0;
            while (p < end && (c = QCLASS[(unsigned char)*p]) != 0 && c != 5) {
                if (c == 3) break;
                if (c == 4) QSTOP("a control character");
                if (c == 2 && (p + 1 >= end || p[1] != '\n')) QSTOP("a carriage return that does not end a line");
                p++;
            }
            if (p >= end || c == 3) break;
            const char *t = p;
            int f = 0;
            for (;;) {
                while (p < end && (c = QCLASS[(unsigned char)*p]) == 0) p++;
                if (p >= end || c != 5) break;
                uint32_t cp;
                int k = utf8_char((const unsigned char *)p, (const unsigned char *)end, &cp);
                if (k <= 0) QSTOP("bytes that are not valid UTF-8");
                if (cp < 0xA0) QSTOP("a C1 control character");
                f |= ID_WIDE | (nfc_safe(cp) ? 0 : ID_CHECK);
                p += k;
            }
            if (nt < 4) {
                tok[nt] = t;
                len[nt] = (size_t)(p - t);
                flags[nt] = f;
            }
            if (++nt > ncols) QSTOP("a line with more columns than the format has");
        }
        if ((size_t)(p - line_start) > MAX_LINE) QSTOP("a line longer than the limit");
        if (p < end) p++; /* the newline */
        if (nt == 0) continue;
        if (nt != ncols) QSTOP("a line with fewer columns than the format has");
        int64_t grade;
        if (parse_rank(tok[grade_col], len[grade_col], &grade)) QSTOP("a grade that is not a plain integer");
        if (len[doc_col] > UINT32_MAX || len[0] > UINT32_MAX) QSTOP("an id longer than 4 GB");
        int64_t q = qrels_query(r, tok[0], len[0], flags[0]);
        if (q < 0) return -1;
        if (q > INT32_MAX) QSTOP("more than 2^31 queries");
        if (qrels_add(r, q, tok[doc_col], len[doc_col], flags[doc_col], grade)) return -1;
        if (r->dup >= 0) break;
    }
    r->line = line;
    return 0;
}

/* After the last line: 0, 1 fallback (reason and line set: no data line, a document judged twice), -1 out of
 * memory. */
static int qrels_finish(Qrels *r, const char **reason, int64_t *at) {
    int64_t line = r->line;
    if (!r->nj) QSTOP("no data line");
    int64_t dup = r->dup >= 0 ? r->dup : r->scattered ? qrels_duplicate(r) : -1;
    if (dup == -2) return -1;
    if (dup >= 0) {
        *reason = "a document judged twice for a query";
        *at = 0; /* the readers name both lines */
        return 1;
    }
    return 0;
}

/* Reads the open file ``fd`` in blocks, whole lines at a time (the buffer holds a block and the line it cut, never
 * the file). 0, 1 fallback (reason and line set), -1 out of memory, -2 a read error (errno in *err). */
static int qrels_read(Qrels *r, int fd, long long pos, long long end, int ncols, const char **reason, int64_t *at,
                      int *err) {
    size_t cap = 2 * READ_BLOCK + MAX_LINE, len = 0;
    char *buf = malloc(cap);
    if (!buf) return -1;
    int rc = 0, first = pos == 0, eof = 0;
    while (!rc && !eof) {
        while (len < cap && len < READ_BLOCK + MAX_LINE) { /* a block more (or to the end of the file) */
            size_t want = cap - len;
            if (end >= 0 && (long long)want > end - pos) want = (size_t)(end - pos);
            ssize_t got = want ? pread(fd, buf + len, want, (off_t)pos) : 0;
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) {
                *err = errno;
                rc = -2;
                break;
            }
            if (got == 0) {
                eof = 1;
                break;
            }
            len += (size_t)got;
            pos += got;
            if (len >= READ_BLOCK) break;
        }
        if (rc) break;
        size_t start = 0;
        if (first) {
            if (len < 3 && !eof) continue;
            start = len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0; /* dropped, as the readers drop it */
            first = 0;
        }
        const char *stop = buf + len; /* the end of the whole lines read */
        if (!eof) {
            const char *nl = buf + len;
            while (nl > buf + start && nl[-1] != '\n') nl--;
            if (nl == buf + start) { /* no line ends here: a line longer than the limit, or more to read */
                if (len - start > MAX_LINE) {
                    *reason = "a line longer than the limit";
                    *at = r->line + 1;
                    rc = 1;
                }
                continue;
            }
            stop = nl;
        }
        rc = qrels_parse(r, buf + start, stop, ncols, reason, at);
        if (!rc && r->dup >= 0) break;
        len = (size_t)(buf + len - stop);
        memmove(buf, stop, len);
    }
    free_large(buf);
    return rc;
}

/* Where to cut a qrels file of ``size`` bytes in two for two threads: the start of the first line near the middle
 * whose query differs from the line before it's, or 0 (not cut) when none is found near the middle. A cut inside a
 * query, or a file whose queries' lines are apart, gives the same judgments (qrels_join), only slower. */
static long long qrels_cut(int fd, long long size) {
    enum { WINDOW = 1 << 16 };
    char *w = malloc(WINDOW);
    if (!w) return 0;
    long long from = size / 2;
    ssize_t got = pread(fd, w, WINDOW, (off_t)from);
    long long cut = 0;
    const char *end = got > 0 ? w + got : w, *p = got > 0 ? memchr(w, '\n', (size_t)got) : NULL;
    const char *prev = NULL;
    size_t prev_n = 0;
    while (p && ++p < end) { /* p: a line's start */
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        const char *t = p;
        while (t < nl && QCLASS[(unsigned char)*t] == 1) t++;
        const char *e = t;
        while (e < nl && QCLASS[(unsigned char)*e] != 1 && QCLASS[(unsigned char)*e] != 2) e++;
        if (e > t && *t != '#') {
            if (prev && ((size_t)(e - t) != prev_n || memcmp(t, prev, prev_n))) {
                cut = from + (p - w);
                break;
            }
            prev = t;
            prev_n = (size_t)(e - t);
        }
        p = nl;
    }
    free(w);
    return cut;
}

/* One part of a qrels file read by a thread: bytes [start, end) (end -1: to the end of the file). */
typedef struct {
    Qrels r;
    int fd, ncols, rc, err;
    long long start, end;
    const char *reason;
    int64_t at;
} QrelsPart;

static int qrels_init(Qrels *r) {
    memset(r, 0, sizeof *r);
    r->prev_q = r->dup = -1;
    return qrels_grow(r, 1024) || stamped_reserve(&r->seen, 1024) < 0 || buf_i64(&r->qoff, 0) ||
                   buf_i64(&r->doff, 0) || buf_i64(&r->check.off, 0)
               ? -1
               : 0;
}

static void *qrels_part(void *arg) {
    QrelsPart *p = arg;
    p->rc = qrels_init(&p->r) ? -1 : qrels_read(&p->r, p->fd, p->start, p->end, p->ncols, &p->reason, &p->at, &p->err);
    return NULL;
}

/* Append the second part's judgments to the first's, as if one reader had read both: its queries numbered on
 * (a query of both parts keeps its first number and makes the file scattered: the duplicate check then runs over
 * every row), its rows, ids to check and lines after the first's. 0; 1 when the parts cannot be joined so (an id
 * to check of a query of both parts: the second part lists it again; the caller reads the file in one pass);
 * -1 out of memory. The second part's large arrays are freed as they are appended. */
static int qrels_join(Qrels *a, Qrels *b) {
    const int64_t *boff = (const int64_t *)b->qoff.data;
    int64_t *map = malloc(((size_t)b->nq + 1) * sizeof(int64_t));
    if (!map) return -1;
    int shared = 0;
    for (int64_t q = 0; q < b->nq; q++) {
        const char *id = b->qblob.data + boff[q];
        size_t n = (size_t)(boff[q + 1] - boff[q]);
        if ((size_t)(a->nq + 1) * 2 > a->qmask + 1 && qrels_grow(a, 2 * (a->qmask + 1))) goto nomem;
        const int64_t *aoff = (const int64_t *)a->qoff.data;
        uint64_t h = hash_bytes(id, n);
        size_t s = h & a->qmask;
        map[q] = -1;
        for (; a->qslot[s]; s = (s + 1) & a->qmask) {
            int64_t k = a->qslot[s] - 1;
            if (a->qhash[s] == h && (size_t)(aoff[k + 1] - aoff[k]) == n && !memcmp(a->qblob.data + aoff[k], id, n)) {
                map[q] = k;
                shared = 1;
                break;
            }
        }
        if (map[q] < 0) {
            if (buf_put(&a->qblob, id, n) || buf_i64(&a->qoff, (int64_t)a->qblob.len)) goto nomem;
            a->qslot[s] = ++a->nq;
            a->qhash[s] = h;
            map[q] = a->nq - 1;
        }
    }
    if (a->nq > INT32_MAX) { /* qrels_parse's limit, refused as it refuses it: a fallback */
        free(map);
        return 1;
    }
    const char *kind = b->check.kind.data;
    for (size_t i = 0; shared && i < b->check.kind.len; i++)
        if (kind[i] == 0) {
            free(map);
            return 1;
        }
    size_t dbase = a->dblob.len, cbase = a->check.blob.len;
    const int64_t *doff = (const int64_t *)b->doff.data, *coff = (const int64_t *)b->check.off.data;
    const int32_t *rowq = (const int32_t *)b->rowq.data;
    if ((a->wide && !b->wide && qrels_widen(b)) || (b->wide && !a->wide && qrels_widen(a))) goto nomem;
    /* each of the second part's large arrays is freed once appended: memory holds one of them twice, not all */
    Buf *from[] = {&b->dblob, &b->grade}, *to[] = {&a->dblob, &a->grade};
    for (int k = 0; k < 2; k++) {
        if (buf_put(to[k], from[k]->data, from[k]->len)) goto nomem;
        free_large(from[k]->data);
        from[k]->data = NULL;
        from[k]->len = from[k]->cap = 0;
    }
    if (buf_put(&a->check.blob, b->check.blob.data, b->check.blob.len) ||
        buf_put(&a->check.kind, b->check.kind.data, b->check.kind.len))
        goto nomem;
    for (int64_t j = 0; j < b->nj; j++)
        if (buf_i64(&a->doff, doff[j + 1] + (int64_t)dbase)) goto nomem;
    for (int64_t j = 0; j < b->nj; j++) {
        int32_t q32 = (int32_t)map[rowq[j]];
        if (buf_put(&a->rowq, &q32, 4)) goto nomem;
    }
    for (size_t i = 0; i < b->check.kind.len; i++)
        if (buf_i64(&a->check.off, coff[i + 1] + (int64_t)cbase)) goto nomem;
    if (a->dup < 0 && b->dup >= 0) a->dup = a->nj + b->dup;
    a->nj += b->nj;
    a->line += b->line;
    a->scattered |= b->scattered | shared;
    a->prev_q = b->prev_q >= 0 ? map[b->prev_q] : a->prev_q;
    free(map);
    return 0;
nomem:
    free(map);
    return -1;
}

/* The whole file read into ``r`` (set up by qrels_init), in two parts on two threads when it has at least ``split``
 * bytes and two cores are online; rc as qrels_read's. */
static int qrels_read_file(Qrels *r, int fd, long long size, long long split, int ncols, const char **reason,
                           int64_t *at, int *err) {
    long long cut = size >= split && sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? qrels_cut(fd, size) : 0;
    if (cut > 0) {
        QrelsPart second = {.fd = fd, .ncols = ncols, .start = cut, .end = -1};
        pthread_t thread;
        if (!pthread_create(&thread, NULL, qrels_part, &second)) {
            int rc = qrels_read(r, fd, 0, cut, ncols, reason, at, err);
            pthread_join(thread, NULL);
            if (!rc && r->dup < 0) { /* the first part read whole: the second's outcome follows it */
                rc = second.rc;
                if (rc == 1) {
                    *reason = second.reason;
                    *at = second.at ? second.at + r->line : 0;
                } else if (rc == -2) {
                    *err = second.err;
                } else if (!rc) {
                    rc = qrels_join(r, &second.r);
                }
            }
            qrels_free(&second.r);
            if (rc != 1 || *reason) return rc;
            /* parts that cannot be joined: the file in one pass */
            qrels_free(r);
            if (qrels_init(r)) return -1;
        }
    }
    return qrels_read(r, fd, 0, -1, ncols, reason, at, err);
}

/* read_qrels(path, columns, split=16 MB) -> dict: the judgments of a qrels file of 3 or 4 columns as flat arrays
 * (a file of at least ``split`` bytes read in two parts on two threads, joined as one reader would have read it), or
 * {"fallback": reason, "line": n}. Per query (in order of first appearance): "query_blob", "query_offsets" (bytes);
 * per judgment (in file order): "doc_blob", "doc_offsets" (int64), "row_query" (int32), "grades" (int8 when every
 * grade fits, as qrels' do, else int64: "grade_bytes" says 1 or 8), as Blocks (no copy); no hash of the doc ids
 * (a JudgmentIndex made with unique=True hashes those of the ranked queries when the scan reads them); the ids
 * Python checks
 * ("check_blob", "check_offsets", "check_kind"). */
static PyObject *read_qrels(PyObject *self, PyObject *args) {
    PyObject *path_obj;
    int ncols;
    long long split = 16LL << 20;
    if (!PyArg_ParseTuple(args, "O&i|L", PyUnicode_FSConverter, &path_obj, &ncols, &split)) return NULL;
    if (ncols != 3 && ncols != 4) {
        Py_DECREF(path_obj);
        PyErr_SetString(PyExc_ValueError, "columns must be 3 or 4");
        return NULL;
    }
    int fd = open(PyBytes_AS_STRING(path_obj), O_RDONLY | O_NONBLOCK); /* a FIFO must not block here */
    Py_DECREF(path_obj);
    if (fd < 0) return fallback("the file cannot be opened", 0); /* the readers say why, naming it */
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return fallback("not a regular file", 0);
    }
    Qrels r;
    int rc = 0, err = 0;
    const char *reason = NULL;
    int64_t at = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = qrels_init(&r) ? -1 : qrels_read_file(&r, fd, (long long)st.st_size, split, ncols, &reason, &at, &err);
    if (!rc) rc = qrels_finish(&r, &reason, &at);
    Py_END_ALLOW_THREADS
    close(fd);
    PyObject *out;
    if (rc == -2) {
        out = fallback("the file cannot be read", 0); /* the readers say why, naming it */
    } else if (rc < 0) {
        out = PyErr_NoMemory();
    } else if (rc > 0) {
        out = fallback(reason, at);
    } else {
        out = Py_BuildValue("{s:y#,s:y#,s:N,s:N,s:N,s:N,s:i,s:y#,s:y#,s:y#}", "query_blob",
                            r.qblob.data ? r.qblob.data : "", (Py_ssize_t)r.qblob.len, "query_offsets", r.qoff.data,
                            (Py_ssize_t)r.qoff.len, "doc_blob", block_of(&r.dblob), "doc_offsets", block_of(&r.doff),
                            "row_query", block_of(&r.rowq), "grades", block_of(&r.grade), "grade_bytes",
                            r.wide ? 8 : 1, "check_blob", r.check.blob.data ? r.check.blob.data : "",
                            (Py_ssize_t)r.check.blob.len, "check_offsets", r.check.off.data,
                            (Py_ssize_t)r.check.off.len, "check_kind", r.check.kind.data ? r.check.kind.data : "",
                            (Py_ssize_t)r.check.kind.len);
    }
    (void)err;
    qrels_free(&r);
    return out;
}

/* ------------------------------------------------------------------ judged grades */
static int cmp_desc(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a < b) - (a > b);
}

/* judged_grades(row_query, grades, query_rank, nonrelevant) -> (offsets, sorted): the judged pool of every query,
 * from read_qrels' arrays: row_query (int32, the query of each judgment), grades (int64, or int8: the array's
 * item size says which), query_rank (int64, the
 * place of each query in the order wanted). ``offsets`` (int64, one more than the queries) bound each query's
 * grades in ``sorted`` (float64), in query_rank order, each query's grades descending: those >= 0, or under
 * ``nonrelevant`` all of them with the negative ones made 0. numpy's
 * ``g[np.lexsort((-g, rank[row_query]))]`` over the judged grades ``g`` as float64, in linear time: each query's
 * count of each grade when the grades span fewer than 64 values (as qrels' do), else a counting sort by query and a
 * sort of each query's grades. */
static PyObject *judged_grades(PyObject *self, PyObject *args) {
    Py_buffer rq = {0}, gr = {0}, rk = {0};
    PyObject *grades_obj;
    int nonrelevant;
    if (!PyArg_ParseTuple(args, "y*Oy*p", &rq, &grades_obj, &rk, &nonrelevant)) return NULL;
    PyObject *offsets = NULL, *sorted = NULL, *out = NULL;
    if (PyObject_GetBuffer(grades_obj, &gr, PyBUF_C_CONTIGUOUS)) {
        PyBuffer_Release(&rq);
        PyBuffer_Release(&rk);
        return NULL;
    }
    size_t n = (size_t)rq.len / sizeof(int32_t), nq = (size_t)rk.len / sizeof(int64_t);
    const int32_t *q = rq.buf;
    const int64_t *rank = rk.buf;
    const int64_t *g64 = gr.buf;
    const int8_t *g8 = gr.buf;
    int wide = gr.itemsize == 8; /* else int8 */
#define G(i) (wide ? g64[i] : (int64_t)g8[i])
    if ((gr.itemsize != 1 && gr.itemsize != 8) || (size_t)gr.len != n * (size_t)gr.itemsize ||
        rq.len % sizeof(int32_t) || rk.len % sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError,
                        "row_query (int32) and grades (int64 or int8) of one length, query_rank (int64)");
        goto done;
    }
    for (size_t k = 0; k < nq; k++)
        if (rank[k] < 0 || (size_t)rank[k] >= nq) {
            PyErr_SetString(PyExc_ValueError, "a query rank outside [0, queries)");
            goto done;
        }
    for (size_t i = 0; i < n; i++)
        if (q[i] < 0 || (size_t)q[i] >= nq) {
            PyErr_SetString(PyExc_ValueError, "a query index outside [0, queries)");
            goto done;
        }
    offsets = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((nq + 1) * sizeof(int64_t)));
    if (!offsets) goto done;
    int64_t *start = (int64_t *)PyBytes_AS_STRING(offsets);
    memset(start, 0, (nq + 1) * sizeof(int64_t));
    int64_t lo = INT64_MAX, hi = INT64_MIN; /* the judged grades' range */
    for (size_t i = 0; i < n; i++) {
        int64_t x = G(i);
        if (x < 0 && !nonrelevant) continue;
        x = x < 0 ? 0 : x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    if (hi >= lo && (uint64_t)hi - (uint64_t)lo < 64 && nq * (size_t)(hi - lo + 1) <= 2 * n + 4096) {
        /* a few grades (as qrels have): each query's count of each grade, written out from the top grade down */
        size_t width = (size_t)(hi - lo + 1);
        int64_t *count = calloc(nq * width, sizeof(int64_t));
        if (!count) {
            PyErr_NoMemory();
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            int64_t x = G(i);
            if (x < 0 && !nonrelevant) continue;
            x = x < 0 ? 0 : x;
            count[(size_t)rank[q[i]] * width + (size_t)(hi - x)]++;
        }
        for (size_t k = 0; k < nq; k++) {
            int64_t total = 0;
            for (size_t b = 0; b < width; b++) total += count[k * width + b];
            start[k + 1] = start[k] + total;
        }
        sorted = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((size_t)start[nq] * sizeof(double)));
        if (sorted) {
            double *v = (double *)PyBytes_AS_STRING(sorted);
            for (size_t k = 0, at = 0; k < nq; k++)
                for (size_t b = 0; b < width; b++)
                    for (int64_t c = count[k * width + b], x = hi - (int64_t)b; c > 0; c--) v[at++] = (double)x;
        }
        free(count);
        if (sorted) out = PyTuple_Pack(2, offsets, sorted);
        goto done;
    }
    for (size_t i = 0; i < n; i++) start[rank[q[i]] + 1] += nonrelevant || G(i) >= 0;
    for (size_t k = 0; k < nq; k++) start[k + 1] += start[k];
    sorted = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((size_t)start[nq] * sizeof(double)));
    int64_t *fill = malloc((nq + 1) * sizeof(int64_t));
    if (!sorted || !fill) {
        free(fill);
        if (sorted) PyErr_NoMemory();
        goto done;
    }
    double *v = (double *)PyBytes_AS_STRING(sorted);
    Py_BEGIN_ALLOW_THREADS
    memcpy(fill, start, (nq + 1) * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        int64_t x = G(i);
        if (x < 0 && !nonrelevant) continue;
        v[fill[rank[q[i]]]++] = x < 0 ? 0.0 : (double)x;
    }
    for (size_t k = 0; k < nq; k++) {
        double *a = v + start[k];
        size_t m = (size_t)(start[k + 1] - start[k]);
        size_t i = 1;
        while (i < m && a[i - 1] >= a[i]) i++; /* usually sorted already, or nearly */
        if (i == m) continue;
        if (m > 32) {
            qsort(a, m, sizeof(double), cmp_desc);
            continue;
        }
        for (; i < m; i++) { /* insertion sort */
            double x = a[i];
            size_t j = i;
            while (j > 0 && a[j - 1] < x) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
    }
    Py_END_ALLOW_THREADS
    free(fill);
    out = PyTuple_Pack(2, offsets, sorted);
done:
#undef G
    Py_XDECREF(offsets);
    Py_XDECREF(sorted);
    PyBuffer_Release(&rq);
    PyBuffer_Release(&gr);
    PyBuffer_Release(&rk);
    return out;
}

/* ------------------------------------------------------------------ hits in another order of queries */
/* take_hits(ranks, rows, scores, starts, lengths, out_rank, out_row, out_score): the hits ``starts[i] ..
 * starts[i] + lengths[i] - 1`` of every ``i`` in turn, of a scanned run's per-hit arrays given as parts (the
 * sequences ``ranks`` and ``rows`` of int32 buffers, ``scores`` of float64 ones, part k of each of one length; hit
 * positions count through the parts one after another, and no range crosses from one part to the next), written to
 * the writable buffers out_rank (int64: rank widened), out_row (int32) and out_score (float64) of sum(lengths) items
 * (numpy's arrays: large ones on huge pages). numpy's ``np.concatenate(parts)[ranges(starts, lengths)]`` of each
 * array (and ``astype(np.int64)`` of rank) without joining the parts or an int64 index of every hit: one copy of
 * each range. */
/* The part holding hit ``g``: first[k] <= g < first[k + 1] (first: n + 1 starts), or n when none does. */
static Py_ssize_t part_of(const int64_t *first, Py_ssize_t n, int64_t g) {
    if (n == 0 || g < 0 || g >= first[n]) return n;
    Py_ssize_t lo = 0, hi = n - 1; /* the last part whose first hit is <= g (empty parts are skipped) */
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo + 1) / 2;
        if (first[mid] <= g) lo = mid; else hi = mid - 1;
    }
    return lo;
}

static PyObject *take_hits(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *seqs_in[3], *seqs[3] = {NULL, NULL, NULL};
    Py_buffer st = {0}, ln = {0}, ork = {0}, orw = {0}, osc = {0};
    Py_buffer *views[3] = {NULL, NULL, NULL};
    Py_ssize_t nparts = 0, held = 0;
    int64_t *first = NULL;
    PyObject *out = NULL;
    if (!PyArg_ParseTuple(args, "OOOy*y*w*w*w*", &seqs_in[0], &seqs_in[1], &seqs_in[2], &st, &ln, &ork, &orw, &osc))
        return NULL;
    for (int a = 0; a < 3; a++)
        if (!(seqs[a] = PySequence_Fast(seqs_in[a], "take_hits() needs sequences of buffers"))) goto done;
    nparts = PySequence_Fast_GET_SIZE(seqs[0]);
    if (PySequence_Fast_GET_SIZE(seqs[1]) != nparts || PySequence_Fast_GET_SIZE(seqs[2]) != nparts) {
        PyErr_SetString(PyExc_ValueError, "ranks, rows and scores: as many parts");
        goto done;
    }
    first = PyMem_Malloc(((size_t)nparts + 1) * sizeof(int64_t));
    for (int a = 0; a < 3; a++) views[a] = PyMem_Calloc((size_t)nparts + 1, sizeof(Py_buffer));
    if (!first || !views[0] || !views[1] || !views[2]) {
        PyErr_NoMemory();
        goto done;
    }
    static const Py_ssize_t sizes[3] = {sizeof(int32_t), sizeof(int32_t), sizeof(double)};
    first[0] = 0;
    for (Py_ssize_t k = 0; k < nparts; k++) {
        for (int a = 0; a < 3; a++) {
            if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seqs[a], k), &views[a][k], PyBUF_C_CONTIGUOUS)) {
                for (int b = 0; b < a; b++) PyBuffer_Release(&views[b][k]);
                goto done;
            }
        }
        held = k + 1;
        Py_ssize_t n = views[0][k].len / sizes[0];
        for (int a = 0; a < 3; a++)
            if (views[a][k].len != n * sizes[a]) {
                PyErr_SetString(PyExc_ValueError, "each part: rank and row (int32) and score (float64) of one length");
                goto done;
            }
        first[k + 1] = first[k] + n;
    }
    size_t nq = (size_t)st.len / sizeof(int64_t);
    const int64_t *starts = st.buf, *lengths = ln.buf;
    if (st.len % sizeof(int64_t) || ln.len != st.len) {
        PyErr_SetString(PyExc_ValueError, "starts and lengths (int64) of one length");
        goto done;
    }
    size_t total = 0;
    for (size_t i = 0; i < nq; i++) {
        int64_t a = starts[i], m = lengths[i];
        Py_ssize_t k = part_of(first, nparts, a);
        if (a < 0 || m < 0 || (m > 0 && (k == nparts || m > first[k + 1] - a))) {
            PyErr_SetString(PyExc_ValueError, "a range outside the hits, or across two parts");
            goto done;
        }
        total += (size_t)m;
    }
    if ((size_t)ork.len != total * sizeof(int64_t) || (size_t)orw.len != total * sizeof(int32_t) ||
        (size_t)osc.len != total * sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "out_rank (int64), out_row (int32) and out_score (float64) of the hits "
                                          "taken");
        goto done;
    }
    {
        int64_t *to_rank = ork.buf;
        char *to_row = orw.buf, *to_score = osc.buf;
        size_t at = 0;
        Py_ssize_t k = 0;
        for (size_t i = 0; i < nq; i++) {
            size_t m = (size_t)lengths[i];
            if (!m) continue;
            int64_t g = starts[i];
            if (g < first[k] || g >= first[k + 1]) k = part_of(first, nparts, g); /* not the last range's part */
            size_t a = (size_t)(g - first[k]);
            const int32_t *rank = (const int32_t *)views[0][k].buf + a;
            for (size_t j = 0; j < m; j++) to_rank[at + j] = rank[j];
            memcpy(to_row + at * sizeof(int32_t), (const int32_t *)views[1][k].buf + a, m * sizeof(int32_t));
            memcpy(to_score + at * sizeof(double), (const double *)views[2][k].buf + a, m * sizeof(double));
            at += m;
        }
    }
    out = Py_NewRef(Py_None);
done:
    for (Py_ssize_t k = 0; k < held; k++)
        for (int a = 0; a < 3; a++) PyBuffer_Release(&views[a][k]);
    for (int a = 0; a < 3; a++) {
        Py_XDECREF(seqs[a]);
        PyMem_Free(views[a]);
    }
    PyMem_Free(first);
    PyBuffer_Release(&st);
    PyBuffer_Release(&ln);
    PyBuffer_Release(&ork);
    PyBuffer_Release(&orw);
    PyBuffer_Release(&osc);
    return out;
}

static PyMethodDef methods[] = {
    {"scan_trec_run", (PyCFunction)(void (*)(void))scan_trec_run, METH_VARARGS | METH_KEYWORDS,
     "Scan a TREC run file into judged positions (see gainscope.io.scan)."},
    {"scan_arrow", scan_arrow, METH_VARARGS, "Scan an Arrow stream of a run's rows into judged positions."},
    {"read_qrels", read_qrels, METH_VARARGS, "Read a plain TREC qrels file into flat arrays (see gainscope.io.scan_qrels)."},
    {"judged_grades", judged_grades, METH_VARARGS, "Each query's judged grades, sorted descending (see judged_run)."},
    {"take_hits", take_hits, METH_VARARGS, "A scanned run's hits in another order of queries (see judged_run)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "gainscope._scan",
                                    "Single-pass scanner of TREC run files (C).", -1, methods};

PyMODINIT_FUNC PyInit__scan(void) {
    init_classes();
    init_qrels_classes();
    C_LOCALE = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (PyType_Ready(&JudgmentIndexType) < 0 || PyType_Ready(&BlockType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&JudgmentIndexType);
    if (PyModule_AddObject(m, "JudgmentIndex", (PyObject *)&JudgmentIndexType) < 0) {
        Py_DECREF(&JudgmentIndexType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
