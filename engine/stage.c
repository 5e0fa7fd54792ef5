/*
 * engine/stage.c: a sorted load. Records are encoded as rows and keyed as
 * they are added (their stored record key, as the write will compute it)
 * and collected into a run in memory; a run that reaches its byte limit is
 * sorted by (key, order added) and spilled to a temporary file beside the
 * store, unlinked as soon as it is made so that nothing is left behind
 * whatever happens to the process. The merge then gives the rows back in
 * key order, two rows of one key in the order they were added, for
 * ads_bulk_add_staged: the store is written front to back, appended to an
 * empty table (MDB_APPEND, full pages) or touched once per page.
 *
 * Rows keyed by ids: the stage's encoder remembers the names of the last
 * record of each attribute count (engine/shape_ids.c). When a record is
 * encoded with names and the encoder has taken in a shape since the last
 * try, a write transaction gives those names ids: at once for the first
 * record, then ADS_STAGE_IDS_EVERY records after a try that gave ids, and
 * after twice as many records as last time after one that gave none (a
 * file of ever new shapes tries as the logarithm of its length). The
 * records after it of those names are encoded keyed by the ids: their rows
 * are a third shorter to sort and spill, and the write takes them as they
 * are (ads_bulk_add_staged), without a name looked up. The ids of a
 * transaction that committed are the store's for good, whatever becomes of
 * the load.
 *
 * A row with no key to sort by (its type is unknown here or has hooks, or
 * its key is generated or not all given as values) sorts after every keyed
 * row, in the order added: a file that declares a type before its records
 * stores them after the declaration, and the store reports such a row's
 * error in input order.
 *
 * Memory holds one run (ADS_STAGE_RUN_BYTES) and, while merging, a read
 * buffer (ADS_STAGE_READ_BUFFER) and the current entry of each run. When
 * ADS_STAGE_MERGE_WAYS runs are on disk, the runs of the lowest level that
 * has two or more (a spilled run is of level 0, a merge of level-k runs of
 * level k + 1) are merged into one before the next is spilled: each row is
 * rewritten once per level, and levels grow as the logarithm of the input
 * (merging every run instead would rewrite all the input so far each time,
 * a cost that grows as its square).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/limits.h"
#include "engine/engine_int.h"
#include "engine/stage_sort.h"

/* An entry, in memory and in a run file: this head, then row, then key. */
typedef struct ent_head {
    uint32_t klen, rlen;
    uint64_t seq;  /* the order added */
    int64_t tag;   /* the caller's (an import's input line) */
    uint32_t keyed; /* 0: no key to sort by (after every keyed row) */
    uint32_t by_ids; /* 1: the row is keyed by the store's attribute ids */
    uint64_t sig;    /* ... with this signature of its names */
} ent_head;

typedef struct ent {
    ent_head h;
    const unsigned char *row, *key; /* the body: row, then key */
} ent;

static int ent_cmp(const ent *a, const ent *b)
{
    if (a->h.keyed != b->h.keyed)
        return a->h.keyed ? -1 : 1;
    size_t n = a->h.klen < b->h.klen ? a->h.klen : b->h.klen;
    int c = n ? memcmp(a->key, b->key, n) : 0;
    if (c)
        return c;
    if (a->h.klen != b->h.klen)
        return a->h.klen < b->h.klen ? -1 : 1;
    return a->h.seq < b->h.seq ? -1 : a->h.seq > b->h.seq;
}

static void ent_at(ent *e, const unsigned char *p)
{
    memcpy(&e->h, p, sizeof e->h);
    e->row = p + sizeof e->h;
    e->key = e->row + e->h.rlen;
}

/* ---- one run being read: the sorted entries in memory, or a file ---- */

/* A run on disk: its stream, the stream's buffer and its level. */
typedef struct run_file {
    FILE *f;
    char *buf;
    unsigned level;
} run_file;

static void run_close(run_file *r)
{
    if (r->f)
        fclose(r->f);
    free(r->buf);
    *r = (run_file){NULL, NULL, 0};
}

typedef struct reader {
    run_file file; /* file.f NULL: the entries in memory */
    const unsigned char *mem;
    const ads_stage_ref *refs;
    size_t i, n;
    unsigned char *buf; /* a file's current key and row */
    size_t cap;
    ent cur;
} reader;

/* The reader's next entry into cur: 1, 0 at its end, or an error. */
static int reader_next(reader *r, ads_error *err)
{
    FILE *f = r->file.f;
    if (!f) {
        if (r->i == r->n)
            return 0;
        ent_at(&r->cur, r->mem + r->refs[r->i++].off);
        return 1;
    }
    size_t got = fread(&r->cur.h, 1, sizeof r->cur.h, f);
    if (got == 0 && feof(f))
        return 0;
    if (got != sizeof r->cur.h)
        return ads_error_set(err, ADS_EIO, "reading a sorted run back: %s",
                             ferror(f) ? strerror(errno) : "the file is short");
    size_t body = (size_t)r->cur.h.klen + r->cur.h.rlen;
    if (body > r->cap) {
        unsigned char *p = realloc(r->buf, body);
        if (!p)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        r->buf = p;
        r->cap = body;
    }
    if (fread(r->buf, 1, body, f) != body)
        return ads_error_set(err, ADS_EIO, "reading a sorted run back: %s",
                             ferror(f) ? strerror(errno) : "the file is short");
    r->cur.row = r->buf;
    r->cur.key = r->cur.row + r->cur.h.rlen;
    return 1;
}

/* ---- a k-way merge over readers: a binary heap of their indexes ---- */

typedef struct merger {
    reader *rd;
    size_t n;
    size_t *heap, nheap;
    size_t last; /* the reader whose entry was given last, or SIZE_MAX */
} merger;

static bool heap_less(const merger *m, size_t x, size_t y)
{
    return ent_cmp(&m->rd[m->heap[x]].cur, &m->rd[m->heap[y]].cur) < 0;
}

static void sift_down(merger *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, min = i;
        if (l < m->nheap && heap_less(m, l, min))
            min = l;
        if (r < m->nheap && heap_less(m, r, min))
            min = r;
        if (min == i)
            return;
        size_t t = m->heap[i];
        m->heap[i] = m->heap[min];
        m->heap[min] = t;
        i = min;
    }
}

/* Start the merge: every reader's first entry, the heap built. */
static int merger_start(merger *m, ads_error *err)
{
    if (!(m->heap = malloc((m->n ? m->n : 1) * sizeof *m->heap)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    m->nheap = 0;
    m->last = SIZE_MAX;
    for (size_t i = 0; i < m->n; i++) {
        int rc = reader_next(&m->rd[i], err);
        if (rc < 0)
            return rc;
        if (rc)
            m->heap[m->nheap++] = i;
    }
    for (size_t i = m->nheap / 2; i-- > 0;)
        sift_down(m, i);
    return 0;
}

/* The smallest entry left: 1 and *out (valid until the next call), 0 at
 * the end, or an error. */
static int merger_next(const ent **out, merger *m, ads_error *err)
{
    if (m->last != SIZE_MAX) {
        int rc = reader_next(&m->rd[m->last], err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            m->heap[0] = m->heap[--m->nheap];
        if (m->nheap)
            sift_down(m, 0);
        m->last = SIZE_MAX;
    }
    if (!m->nheap)
        return 0;
    m->last = m->heap[0];
    *out = &m->rd[m->last].cur;
    return 1;
}

static void merger_free(merger *m)
{
    for (size_t i = 0; i < m->n; i++) {
        run_close(&m->rd[i].file);
        free(m->rd[i].buf);
    }
    free(m->rd);
    free(m->heap);
    memset(m, 0, sizeof *m);
}

/* ---- the stage ---- */

struct ads_stage {
    ads_db *db;
    char *dir;
    size_t run_bytes;
    ads_txn *txn; /* a read transaction for the types, while adding */
    ads_arena *a;
    ads_msgpack_order *names;
    ads_names_reader reader; /* how rows keyed by ids are read */
    ads_learnt learnt[ADS_MSGPACK_ORDER_SHAPES];
    uint64_t ids_at; /* s->seq from which names may be given ids again */
    uint64_t ids_every;
    uint64_t ids_kept; /* the encoder's shapes taken in at the last try */
    bool ids_off;    /* giving names ids failed: not tried again */
    const ent *cur;  /* the entry ads_stage_next gave last */
    unsigned char key[ADS_KEY_INLINE_MAX]; /* the last row's stored key */
    size_t key_len;
    const ads_type *type; /* the type of the last AdType looked up */
    /* where the last row had AdType and its type's key attributes: rows of
     * one shape have them at the same place */
    _Atomic uint32_t type_hint, key_hints[ADS_BULK_KEY_HINTS];
    char type_name[256];
    size_t type_len;
    /* the run being collected */
    ads_buf mem;
    ads_stage_ref *refs;
    size_t n, cap;
    uint64_t seq;
    /* the runs on disk */
    run_file *runs;
    size_t nruns;
    uint64_t spilled, spilled_bytes;
    bool merging;
    merger m;
};

int ads_stage_begin(ads_stage **out, ads_db *db, const char *dir, size_t run_bytes,
                    ads_error *err)
{
    if (!out || !db || !dir)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_stage *s = calloc(1, sizeof *s);
    if (!s)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    s->db = db;
    s->run_bytes = run_bytes ? run_bytes : ADS_STAGE_RUN_BYTES;
    if (!(s->dir = strdup(dir)) || !(s->a = ads_arena_new()) ||
        !(s->runs = calloc(ADS_STAGE_MERGE_WAYS, sizeof *s->runs)) ||
        ads_msgpack_order_new(&s->names, NULL)) {
        ads_stage_free(s);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    ads_names__reader(&s->reader, db);
    ads_shape_ids__seed(db, s->names);
    s->ids_every = ADS_STAGE_IDS_EVERY;
    *out = s;
    return 0;
}

void ads_stage_free(ads_stage *s)
{
    if (!s)
        return;
    if (s->txn)
        ads_txn_abort(s->txn);
    merger_free(&s->m);
    for (size_t i = 0; s->runs && i < s->nruns; i++)
        run_close(&s->runs[i]);
    free(s->runs);
    ads_arena_free(s->a);
    ads_msgpack_order_free(s->names);
    ads_buf_free(&s->mem);
    free(s->refs);
    free(s->dir);
    free(s);
}

uint64_t ads_stage_runs(const ads_stage *s)
{
    return s->spilled;
}

uint64_t ads_stage_spilled_bytes(const ads_stage *s)
{
    return s->spilled_bytes;
}

/* A new temporary file in the store's directory that no name points to:
 * O_TMPFILE makes it without one, so that a process killed at any moment
 * leaves nothing behind. Where the file system cannot (EOPNOTSUPP, EISDIR
 * on old kernels), mkstemp makes one (its argument is mkstemp's template:
 * the six X's are what mkstemp replaces with a unique name) and it is
 * unlinked at once. ADSTORE_TEST_NO_TMPFILE set takes that way on any file
 * system, for the tests. */
static int temp_fd(const ads_stage *s, ads_error *err)
{
#ifdef O_TMPFILE
    if (!getenv("ADSTORE_TEST_NO_TMPFILE")) {
        int fd = open(s->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd >= 0)
            return fd;
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
            return ads_error_set(err, ADS_EIO, "making a sorted run in %s: %s", s->dir,
                                 strerror(errno));
    }
#endif
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/.import-run-XXXXXX", s->dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return ads_error_set(err, ADS_ELIMIT, "the store's path is too long for a sorted run");
    int tfd = mkstemp(path);
    if (tfd < 0)
        return ads_error_set(err, ADS_EIO, "making a sorted run in %s: %s", s->dir,
                             strerror(errno));
    unlink(path);
    return tfd;
}

static int temp_file(run_file *out, const ads_stage *s, unsigned level, ads_error *err)
{
    int fd = temp_fd(s, err);
    if (fd < 0)
        return fd;
    /* the stream's buffer is given: glibc sizes a buffer it makes itself
     * by the file system's block (4 KiB), whatever size setvbuf asked for */
    char *buf = malloc(ADS_STAGE_READ_BUFFER);
    FILE *f = buf ? fdopen(fd, "w+b") : NULL;
    if (!f) {
        free(buf);
        close(fd);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    setvbuf(f, buf, _IOFBF, ADS_STAGE_READ_BUFFER);
    *out = (run_file){f, buf, level};
    return 0;
}

/* Write an entry (its body, row then key, is contiguous in memory). */
static int put_ent(FILE *f, const ent *e, const ads_stage *s, ads_error *err)
{
    size_t body = (size_t)e->h.rlen + e->h.klen;
    if (fwrite(&e->h, sizeof e->h, 1, f) != 1 || fwrite(e->row, 1, body, f) != body)
        return ads_error_set(err, ADS_EIO, "writing a sorted run in %s: %s", s->dir,
                             strerror(errno));
    return 0;
}

/* A run written, flushed and rewound for reading. */
static int run_done(FILE *f, const ads_stage *s, ads_error *err)
{
    if (fflush(f) || fseeko(f, 0, SEEK_SET))
        return ads_error_set(err, ADS_EIO, "writing a sorted run in %s: %s", s->dir,
                             strerror(errno));
    return 0;
}

/* The lowest level with two runs or more on disk (there is one when all
 * ADS_STAGE_MERGE_WAYS places are taken: levels are far fewer). */
static unsigned level_to_merge(const ads_stage *s)
{
    unsigned best = UINT32_MAX;
    for (size_t i = 0; i < s->nruns; i++)
        for (size_t j = i + 1; j < s->nruns; j++)
            if (s->runs[i].level == s->runs[j].level && s->runs[i].level < best)
                best = s->runs[i].level;
    return best;
}

/* The runs on disk of the lowest level that has two or more merged into
 * one of the next level (when there are as many as merge at once). */
static int merge_runs(ads_stage *s, ads_error *err)
{
    unsigned level = level_to_merge(s);
    run_file out;
    merger m = {0};
    int rc = temp_file(&out, s, level + 1, err);
    if (rc)
        return rc;
    if (!(m.rd = calloc(s->nruns, sizeof *m.rd))) {
        run_close(&out);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    size_t kept = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        if (s->runs[i].level == level)
            m.rd[m.n++].file = s->runs[i]; /* the merger owns it now */
        else
            s->runs[kept++] = s->runs[i];
    }
    s->nruns = kept;
    const ent *e;
    if (!(rc = merger_start(&m, err))) {
        while ((rc = merger_next(&e, &m, err)) == 1 && !(rc = put_ent(out.f, e, s, err)))
            s->spilled_bytes += sizeof e->h + e->h.klen + e->h.rlen;
    }
    merger_free(&m);
    if (!rc)
        rc = run_done(out.f, s, err);
    if (rc) {
        run_close(&out);
        return rc;
    }
    s->runs[s->nruns++] = out;
    return 0;
}

/* The run in memory sorted (its references: the entries stay in place). */
static void sort_mem(ads_stage *s)
{
    for (size_t i = 0; i < s->n; i++)
        s->refs[i].key = (const unsigned char *)s->mem.p + s->refs[i].off + sizeof(ent_head) +
                         s->refs[i].rlen;
    if (s->n) /* an empty run has no references at all (NULL) */
        ads_stage__sort(s->refs, s->n);
}

/* The run in memory sorted and written to a file. */
static int spill(ads_stage *s, ads_error *err)
{
    int rc;
    if (s->nruns == ADS_STAGE_MERGE_WAYS && (rc = merge_runs(s, err)))
        return rc;
    run_file out;
    if ((rc = temp_file(&out, s, 0, err)))
        return rc;
    sort_mem(s);
    for (size_t i = 0; i < s->n && !rc; i++) {
        ent e;
        ent_at(&e, (const unsigned char *)s->mem.p + s->refs[i].off);
        rc = put_ent(out.f, &e, s, err);
    }
    if (!rc)
        rc = run_done(out.f, s, err);
    if (rc) {
        run_close(&out);
        return rc;
    }
    s->runs[s->nruns++] = out;
    s->spilled++;
    s->spilled_bytes += s->mem.len;
    ads_buf_clear(&s->mem);
    s->n = 0;
    return 0;
}

/* The stored key of the row (len bytes at row, keyed by ids when by_ids),
 * into s->key: 1, 0 when it has none to sort by, or an error. */
static int row_sort_key(ads_stage *s, const char *row, size_t len, bool by_ids, ads_error *err)
{
    ads_msgpack_view mv;
    ads_value v;
    const ads_expr *x = NULL;
    ads_arena_reset(s->a);
    int rc = ads_msgpack__view_open(&mv, row, len, by_ids ? &s->reader.nm : NULL, s->a, err);
    if (!rc)
        rc = ads_msgpack__lookup(&v, &x, &mv, "AdType", 6, &s->type_hint, err);
    if (rc < 0)
        return rc == ADS_ENOMEM ? rc : 0; /* the write refuses it, in input order */
    if (rc == 0 || x || v.type != ADS_STRING || v.u.s.len >= sizeof s->type_name)
        return 0;
    if (!s->type || v.u.s.len != s->type_len || memcmp(v.u.s.p, s->type_name, s->type_len)) {
        s->type = NULL;
        if (!s->txn && (rc = ads_txn_begin(&s->txn, s->db, ADS_TXN_READONLY, err)))
            return rc;
        if ((rc = ads_types__by_name(&s->type, s->txn, v.u.s.p, v.u.s.len, err)))
            return rc == ADS_ENOTFOUND || rc == ADS_EINVAL ? 0 : rc;
        memcpy(s->type_name, v.u.s.p, v.u.s.len);
        s->type_len = v.u.s.len;
    }
    if (s->type->has_hooks)
        return 0;
    ads_buf full = ADS_BUF_INIT;
    rc = ads_bulk__row_key(&full, s->type, &mv, s->key_hints, NULL, err);
    if (rc == 1 && full.failed)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (rc == 1)
        s->key_len = ads_key__stored(s->key, (const unsigned char *)full.p, full.len, 0);
    ads_buf_free(&full);
    return rc;
}

/* Room for one more reference. */
static int ref_room(ads_stage *s, ads_error *err)
{
    if (s->n < s->cap)
        return 0;
    size_t cap = s->cap ? 2 * s->cap : 1024;
    ads_stage_ref *refs = realloc(s->refs, cap * sizeof *refs);
    if (!refs)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    s->refs = refs;
    s->cap = cap;
    return 0;
}

static int give_ids_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    ads_stage *s = ctx;
    return ads_shape_ids__learn(s->learnt, s->names, txn, true, err);
}

/* Ids for the names of the encoder's shapes that have none (a write
 * transaction adds those the store lacks), used from the next record on
 * (see "Rows keyed by ids" above for when). Only a memo: when the write
 * fails the records are encoded with names, as they were. */
static void give_ids(ads_stage *s)
{
    ads_error err;
    /* (inside a write on the same store, a write would wait for itself) */
    if (s->ids_off || ads_db__in_write(s->db))
        return;
    s->ids_kept = ads_msgpack__memo_kept(s->names);
    if (s->txn) {
        /* the stage's read transaction is let go first: a write that must
         * grow the map waits for every transaction of the handle to end */
        ads_txn_abort(s->txn);
        s->txn = NULL;
        s->type = NULL;
    }
    if (ads_db_write(s->db, give_ids_fn, s, &err)) {
        s->ids_off = true;
        return;
    }
    if (ads_shape_ids__hand_over(s->db, s->names, s->learnt))
        s->ids_every = ADS_STAGE_IDS_EVERY;
    else if (s->ids_every < UINT64_MAX / 2)
        s->ids_every *= 2;
    s->ids_at = s->seq + s->ids_every;
}

int ads_stage_add(ads_stage *s, const ads_record *rec, int64_t tag, ads_error *err)
{
    if (!s || !rec)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (s->merging)
        return ads_error_set(err, ADS_EINVAL, "the stage is being merged: nothing more can be added");
    int rc = ref_room(s, err);
    if (rc)
        return rc;
    /* the entry is made in place: a head to fill in, the row, its key */
    size_t off = s->mem.len;
    ent_head h = {0, 0, s->seq, tag, 0, 0};
    ads_buf_add(&s->mem, &h, sizeof h);
    if (s->mem.failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    bool by_ids = false;
    if ((rc = ads_msgpack__encode_row_ids(&s->mem, rec, s->names, &by_ids, &h.sig, NULL, err)))
        goto undo;
    h.by_ids = by_ids;
    size_t rlen = s->mem.len - off - sizeof h;
    if (rlen > UINT32_MAX) {
        rc = ads_error_set(err, ADS_ELIMIT, "a row of %zu bytes is too long to sort", rlen);
        goto undo;
    }
    if ((rc = row_sort_key(s, s->mem.p + off + sizeof h, rlen, by_ids, err)) < 0)
        goto undo;
    h.keyed = rc ? 1u : 0u;
    h.klen = rc ? (uint32_t)s->key_len : 0;
    h.rlen = (uint32_t)rlen;
    ads_buf_add(&s->mem, s->key, h.klen);
    if (s->mem.failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    memcpy(s->mem.p + off, &h, sizeof h);
    s->refs[s->n] = (ads_stage_ref){NULL, off, h.seq, 0, h.klen, h.rlen, h.keyed};
    s->n++;
    s->seq++;
    if (!by_ids && s->seq >= s->ids_at && ads_msgpack__memo_kept(s->names) != s->ids_kept)
        give_ids(s);
    if (s->mem.len >= s->run_bytes)
        return spill(s, err);
    return 0;
undo:
    s->mem.len = off;
    return rc;
}

int ads_stage_merge(ads_stage *s, ads_error *err)
{
    if (!s)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (s->merging)
        return ads_error_set(err, ADS_EINVAL, "the stage is already being merged");
    if (s->txn) {
        ads_txn_abort(s->txn);
        s->txn = NULL;
        s->type = NULL;
    }
    s->merging = true;
    sort_mem(s);
    merger *m = &s->m;
    if (!(m->rd = calloc(s->nruns + 1, sizeof *m->rd)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    m->n = s->nruns + 1;
    for (size_t i = 0; i < s->nruns; i++)
        m->rd[i].file = s->runs[i];
    s->nruns = 0; /* the merger owns them now */
    m->rd[m->n - 1].mem = (const unsigned char *)s->mem.p;
    m->rd[m->n - 1].refs = s->refs;
    m->rd[m->n - 1].n = s->n;
    return merger_start(m, err);
}

int ads_stage_next(const void **row, size_t *len, int64_t *tag, ads_stage *s, ads_error *err)
{
    if (!s || !row || !len || !tag)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (!s->merging)
        return ads_error_set(err, ADS_EINVAL, "the stage is not being merged (ads_stage_merge)");
    const ent *e;
    s->cur = NULL;
    int rc = merger_next(&e, &s->m, err);
    if (rc == 1) {
        *row = e->row;
        *len = e->h.rlen;
        *tag = e->h.tag;
        s->cur = e;
    }
    return rc;
}

int ads_stage__current(const ads_stage *s, const void **row, size_t *len, bool *by_ids,
                       uint64_t *sig, ads_db **db)
{
    if (!s->cur)
        return ADS_EINVAL;
    *row = s->cur->row;
    *len = s->cur->h.rlen;
    *by_ids = s->cur->h.by_ids != 0;
    *sig = s->cur->h.sig;
    *db = s->db;
    return 0;
}
