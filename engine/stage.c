/*
 * engine/stage.c: a sorted load. Records are encoded as rows and keyed as
 * they are added (their stored record key, as the write will compute it)
 * and collected into a run in memory; a run that reaches its byte limit is
 * sorted by (key, order added) and spilled to a temporary file beside the
 * store, unlinked as soon as it is made so that nothing is left behind
 * whatever happens to the process. The merge then gives the rows back in
 * key order, two rows of one key in the order they were added, for
 * ads_bulk_add_row: the store is written front to back, appended to an
 * empty table (MDB_APPEND, full pages) or touched once per page.
 *
 * A row with no key to sort by (its type is unknown here or has hooks, or
 * its key is generated or not all given as values) sorts after every keyed
 * row, in the order added: a file that declares a type before its records
 * stores them after the declaration, and the store reports such a row's
 * error in input order.
 *
 * Memory holds one run (ADS_STAGE_RUN_BYTES) and, while merging, about
 * ADS_STAGE_READ_BUFFER of each run's file pages (runs are read through a
 * mapping, without a copy, and the pages passed are let go). When
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
#include <sys/mman.h>
#include <sys/uio.h>
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
    uint32_t pad;
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

/* A run on disk. While it is written: its file and the entries waiting
 * to be written with one writev (each entry is one piece of memory, its
 * head before its body, where the run in memory or a mapped run has it,
 * so nothing is copied on the way to the kernel). Once written: the file
 * mapped for reading (map NULL when it is empty) and closed. Reading the
 * mapping copies nothing either: the merge hands out entries where they lie
 * in the file's pages. */
typedef struct run_file {
    int fd; /* -1 once written */
    struct iovec *iov;
    size_t niov;
    uint64_t written;
    unsigned level;
    bool disk; /* false: the run in memory (a reader's mem and refs) */
    const unsigned char *map;
    size_t size;
} run_file;

#define RUN_IOVS 256 /* entries written per writev */

static void run_close(run_file *r)
{
    if (r->disk && r->fd >= 0)
        close(r->fd);
    free(r->iov);
    if (r->map)
        munmap((void *)r->map, r->size);
    *r = (run_file){-1, NULL, 0, 0, 0, false, NULL, 0};
}

typedef struct reader {
    run_file file; /* file.disk false: the entries in memory */
    const unsigned char *mem;
    const ads_stage_ref *refs;
    size_t i, n;
    size_t pos, dropped; /* in the mapping: the next entry; pages let go before */
    ent cur;
} reader;

/* The pages of a mapped run that the reader has passed, given back to the
 * kernel every ADS_STAGE_READ_BUFFER bytes: a reader keeps about that much
 * of its run resident, as a read buffer would. The bytes stay in the file
 * (and the page cache); only this process's mapping of them goes. */
static void reader_drop(reader *r, size_t upto)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), end = upto / page * page;
    if (end < r->dropped + ADS_STAGE_READ_BUFFER)
        return;
    (void)madvise((void *)(r->file.map + r->dropped), end - r->dropped, MADV_DONTNEED);
    r->dropped = end;
}

/* The reader's next entry into cur: 1, 0 at its end, or an error. */
static int reader_next(reader *r, ads_error *err)
{
    if (!r->file.disk) {
        if (r->i == r->n)
            return 0;
        ent_at(&r->cur, r->mem + r->refs[r->i++].off);
        return 1;
    }
    size_t left = r->file.size - r->pos;
    if (left == 0)
        return 0;
    if (left < sizeof r->cur.h)
        return ads_error_set(err, ADS_EIO, "reading a sorted run back: the file is short");
    memcpy(&r->cur.h, r->file.map + r->pos, sizeof r->cur.h);
    size_t body = (size_t)r->cur.h.klen + r->cur.h.rlen;
    if (body > left - sizeof r->cur.h)
        return ads_error_set(err, ADS_EIO, "reading a sorted run back: the file is short");
    reader_drop(r, r->pos);
    r->cur.row = r->file.map + r->pos + sizeof r->cur.h;
    r->cur.key = r->cur.row + r->cur.h.rlen;
    r->pos += sizeof r->cur.h + body;
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
    for (size_t i = 0; i < m->n; i++)
        run_close(&m->rd[i].file);
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
 * on old kernels), mkstemp makes one (replacing the template's six X's
 * with a unique name) and it is unlinked at once. */
static int temp_fd(const ads_stage *s, ads_error *err)
{
#ifdef O_TMPFILE
    int fd = open(s->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        return ads_error_set(err, ADS_EIO, "making a sorted run in %s: %s", s->dir,
                             strerror(errno));
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
    struct iovec *iov = malloc(RUN_IOVS * sizeof *iov);
    if (!iov) {
        close(fd);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    *out = (run_file){fd, iov, 0, 0, level, true, NULL, 0};
    return 0;
}

/* The entries waiting written (a short write goes on where it stopped). */
static int run_flush(run_file *r, const ads_stage *s, ads_error *err)
{
    struct iovec *v = r->iov;
    size_t n = r->niov;
    while (n) {
        ssize_t w = writev(r->fd, v, (int)n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return ads_error_set(err, ADS_EIO, "writing a sorted run in %s: %s", s->dir,
                                 w < 0 ? strerror(errno) : "nothing was written");
        r->written += (uint64_t)w;
        size_t got = (size_t)w;
        while (n && got >= v->iov_len) {
            got -= v->iov_len;
            v++;
            n--;
        }
        if (n && got) {
            v->iov_base = (char *)v->iov_base + got;
            v->iov_len -= got;
        }
    }
    r->niov = 0;
    return 0;
}

/* Write an entry: its head and body lie together, the head just before
 * e->row (in the run in memory, as ads_stage_add made it, or in a mapped
 * run), and stay there until the run is done. */
static int put_ent(run_file *r, const ent *e, const ads_stage *s, ads_error *err)
{
    size_t body = (size_t)e->h.rlen + e->h.klen;
    r->iov[r->niov++] = (struct iovec){(void *)(e->row - sizeof e->h), sizeof e->h + body};
    return r->niov == RUN_IOVS ? run_flush(r, s, err) : 0;
}

/* A run written: mapped for reading, and its file closed. */
static int run_done(run_file *r, const ads_stage *s, ads_error *err)
{
    int rc = run_flush(r, s, err);
    if (rc)
        return rc;
    if (r->written > 0) {
        void *map = mmap(NULL, (size_t)r->written, PROT_READ, MAP_SHARED, r->fd, 0);
        if (map == MAP_FAILED)
            return ads_error_set(err, errno == ENOMEM ? ADS_ENOMEM : ADS_EIO,
                                 "mapping a sorted run in %s: %s", s->dir, strerror(errno));
        r->map = map;
        r->size = (size_t)r->written;
    }
    close(r->fd); /* the mapping stays; the file goes with it */
    r->fd = -1;
    free(r->iov);
    r->iov = NULL;
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
        while ((rc = merger_next(&e, &m, err)) == 1 && !(rc = put_ent(&out, e, s, err)))
            s->spilled_bytes += sizeof e->h + e->h.klen + e->h.rlen;
    }
    if (!rc) /* before the merger goes: the entries waiting lie in its runs */
        rc = run_done(&out, s, err);
    merger_free(&m);
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
        rc = put_ent(&out, &e, s, err);
    }
    if (!rc)
        rc = run_done(&out, s, err);
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

/* The stored key of the row (len bytes at row), into s->key: 1, 0 when it
 * has none to sort by, or an error. */
static int row_sort_key(ads_stage *s, const char *row, size_t len, ads_error *err)
{
    ads_msgpack_view mv;
    ads_value v;
    const ads_expr *x = NULL;
    ads_arena_reset(s->a);
    int rc = ads_msgpack_view_init(&mv, row, len, s->a, err);
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
    rc = ads_bulk__row_key(&full, s->type, &mv, s->key_hints, err);
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
    if ((rc = ads_msgpack_encode_row(&s->mem, rec, s->names, err)))
        goto undo;
    size_t rlen = s->mem.len - off - sizeof h;
    if (rlen > UINT32_MAX) {
        rc = ads_error_set(err, ADS_ELIMIT, "a row of %zu bytes is too long to sort", rlen);
        goto undo;
    }
    if ((rc = row_sort_key(s, s->mem.p + off + sizeof h, rlen, err)) < 0)
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
    int rc = merger_next(&e, &s->m, err);
    if (rc == 1) {
        *row = e->row;
        *len = e->h.rlen;
        *tag = e->h.tag;
    }
    return rc;
}
