/*
 * tests/fuzz/fuzz_dump_read.c: the dump reader and restore on any bytes.
 * Each input runs twice: as it is, and with its trailer's checksum made
 * right (when it has a trailer to fix), so that mutations get past the
 * checksum to the rows behind it.
 *
 * Properties. The reader (ads_dump_reader_new/next over a FILE *) either
 * returns records or fails with a code, the same code in the error and a
 * message; a record it returns unparses to text that reads back as the same
 * record; after its end it stays at the end. ads_restore into a directory
 * that does not exist either succeeds, leaving a store there (the data file
 * and the lock file, nothing else), or fails with the codes a bad dump can
 * give and leaves nothing: neither the directory nor the one it builds
 * beside it. A second restore over a store that got rows is refused
 * (ADS_EEXIST) and leaves the store. The directories live in a fresh
 * mkdtemp folder (under /dev/shm when there is one), removed afterwards;
 * removing it fails if anything was left behind.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "classad/classad.h"
#include "engine/engine.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_record.h"

/* ---- making the checksum right ---- */

static uint32_t be(const uint8_t *p, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* The length of the MessagePack object at p (n bytes there), or 0 if it is
 * cut short, malformed or nested deeper than this cares to follow. Nothing
 * is allocated: counts are checked against the bytes left. */
static size_t mp_len(const uint8_t *p, size_t n, int depth)
{
    if (n == 0 || depth > 64)
        return 0;
    uint8_t c = p[0];
    size_t head = 1, body = 0, items = 0;
    if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
        return 1;
    if ((c & 0xf0) == 0x80)
        items = 2 * (size_t)(c & 0x0f);
    else if ((c & 0xf0) == 0x90)
        items = c & 0x0f;
    else if ((c & 0xe0) == 0xa0)
        body = c & 0x1f;
    else {
        static const uint8_t fixed[] = {[0xca - 0xc4] = 5,  [0xcb - 0xc4] = 9,  [0xcc - 0xc4] = 2,
                                        [0xcd - 0xc4] = 3,  [0xce - 0xc4] = 5,  [0xcf - 0xc4] = 9,
                                        [0xd0 - 0xc4] = 2,  [0xd1 - 0xc4] = 3,  [0xd2 - 0xc4] = 5,
                                        [0xd3 - 0xc4] = 9,  [0xd4 - 0xc4] = 3,  [0xd5 - 0xc4] = 4,
                                        [0xd6 - 0xc4] = 6,  [0xd7 - 0xc4] = 10, [0xd8 - 0xc4] = 18};
        if (c >= 0xc4 && c <= 0xd8 && fixed[c - 0xc4])
            return n >= fixed[c - 0xc4] ? fixed[c - 0xc4] : 0;
        switch (c) {
        case 0xc4: case 0xd9: head = 2; break; /* bin8, str8 */
        case 0xc5: case 0xda: head = 3; break;
        case 0xc6: case 0xdb: head = 5; break;
        case 0xc7: head = 3; break;            /* ext8: length, type */
        case 0xc8: head = 4; break;
        case 0xc9: head = 6; break;
        case 0xdc: case 0xde: head = 3; break; /* array16, map16 */
        case 0xdd: case 0xdf: head = 5; break;
        default: return 0;                     /* 0xc1 */
        }
        if (n < head)
            return 0;
        switch (c) {
        case 0xc4: case 0xd9: case 0xc7: body = p[1]; break;
        case 0xc5: case 0xda: case 0xc8: body = be(p + 1, 2); break;
        case 0xc6: case 0xdb: case 0xc9: body = be(p + 1, 4); break;
        case 0xdc: items = be(p + 1, 2); break;
        case 0xdd: items = be(p + 1, 4); break;
        case 0xde: items = 2 * (size_t)be(p + 1, 2); break;
        default: items = 2 * (size_t)be(p + 1, 4); break;
        }
    }
    if (n < head || n - head < body || items > n - head)
        return 0;
    size_t at = head + body;
    for (size_t i = 0; i < items; i++) {
        size_t l = mp_len(p + at, n - at, depth + 1);
        if (!l)
            return 0;
        at += l;
    }
    return at;
}

/* A MessagePack dump with the trailer's checksum made right: the first map
 * after the header is what the reader takes for the trailer; its
 * "checksum" value becomes the XXH3-64 of every byte before it. 0 and *out
 * (malloc'd, *outlen) when there was something to change. */
static int fix_msgpack(const uint8_t *d, size_t n, uint8_t **out, size_t *outlen)
{
    size_t at = mp_len(d, n, 0), l;
    if (!at)
        return -1;
    for (;; at += l) {
        if (at >= n || !(l = mp_len(d + at, n - at, 0)))
            return -1;
        uint8_t c = d[at];
        if ((c & 0xf0) == 0x80 || c == 0xde || c == 0xdf)
            break;
    }
    size_t head = (d[at] & 0xf0) == 0x80 ? 1 : d[at] == 0xde ? 3 : 5;
    size_t pairs = (d[at] & 0xf0) == 0x80 ? (size_t)(d[at] & 0x0f)
                   : d[at] == 0xde        ? be(d + at + 1, 2)
                                          : be(d + at + 1, 4);
    uint64_t sum = XXH3_64bits(d, at);
    uint8_t *o = malloc(n + 16 * (pairs + 1));
    if (!o)
        return -1;
    memcpy(o, d, at + head);
    size_t w = at + head, p = at + head;
    bool changed = false;
    for (size_t i = 0; i < pairs; i++) {
        size_t kl = mp_len(d + p, n - p, 0);
        size_t vl = kl ? mp_len(d + p + kl, n - p - kl, 0) : 0;
        if (!vl) {
            free(o);
            return -1;
        }
        memcpy(o + w, d + p, kl);
        w += kl;
        if (kl == 9 && memcmp(d + p, "\xa8" "checksum", 9) == 0) {
            o[w++] = 0xcf;
            for (int b = 7; b >= 0; b--)
                o[w++] = (uint8_t)(sum >> (8 * b));
            changed = changed || vl != 9 || memcmp(o + w - 9, d + p + kl, 9) != 0;
        } else {
            memcpy(o + w, d + p + kl, vl);
            w += vl;
        }
        p += kl + vl;
    }
    memcpy(o + w, d + p, n - p); /* whatever follows the trailer */
    w += n - p;
    if (!changed) {
        free(o);
        return -1;
    }
    *out = o;
    *outlen = w;
    return 0;
}

/* A text dump with the trailer line's checksum made right: the first line
 * after the header that starts as the writer starts a trailer is written
 * again with the XXH3-64 of every byte before it, its counts kept. */
static int fix_text(const uint8_t *d, size_t n, uint8_t **out, size_t *outlen)
{
    static const char lead[] = "[ End = true; Meta = ";
    const uint8_t *nl = memchr(d, '\n', n);
    if (!nl)
        return -1;
    for (size_t at = (size_t)(nl - d) + 1; at < n;) {
        const uint8_t *end = memchr(d + at, '\n', n - at);
        size_t len = end ? (size_t)(end - (d + at)) + 1 : n - at;
        if (len < sizeof lead - 1 || memcmp(d + at, lead, sizeof lead - 1) != 0 || len > 200) {
            at += len;
            continue;
        }
        char line[256];
        unsigned long long meta, rows;
        memcpy(line, d + at, len);
        line[len] = '\0';
        if (sscanf(line + sizeof lead - 1, "%llu; Rows = %llu;", &meta, &rows) != 2)
            return -1;
        int m = snprintf(line, sizeof line,
                         "[ End = true; Meta = %llu; Rows = %llu; Checksum = \"%016llx\" ]\n", meta,
                         rows, (unsigned long long)XXH3_64bits(d, at));
        uint8_t *o = malloc(n + (size_t)m);
        if (!o)
            return -1;
        memcpy(o, d, at);
        memcpy(o + at, line, (size_t)m);
        memcpy(o + at + (size_t)m, d + at + len, n - at - len);
        *outlen = at + (size_t)m + n - at - len;
        if (*outlen == n && memcmp(o, d, n) == 0) {
            free(o);
            return -1;
        }
        *out = o;
        return 0;
    }
    return -1;
}

/* ---- the properties ---- */

static FILE *open_bytes(const uint8_t *d, size_t n)
{
    /* fmemopen refuses a zero size */
    return n ? fmemopen((void *)d, n, "rb") : fopen("/dev/null", "rb");
}

/* The dump reader over the bytes: each record it gives reads back the same
 * from its own text, an error has a code and a message, the end stays the
 * end. */
static void check_reader(const uint8_t *d, size_t n)
{
    FILE *f = open_bytes(d, n);
    ads_arena *a = ads_arena_new(), *b = ads_arena_new();
    ads_dump_reader *r = NULL;
    ads_error err;
    if (!f || !a || !b)
        goto done;
    int rc = ads_dump_reader_new(&r, f, &err);
    if (rc) {
        fuzz_check(rc == ADS_ECORRUPT || rc == ADS_ENOMEM);
        fuzz_check(err.code == rc && err.message[0] != '\0');
        fuzz_check(n > 0 || rc == ADS_ECORRUPT);
        goto done;
    }
    fuzz_check(n > 0);
    for (int i = 0; i < 100000; i++) {
        const ads_record *rec = NULL;
        rc = ads_dump_reader_next(&rec, r, a, &err);
        if (rc < 0) {
            fuzz_check(rc == ADS_ECORRUPT || rc == ADS_EVERSION || rc == ADS_ENOMEM);
            fuzz_check(err.code == rc && err.message[0] != '\0');
            break;
        }
        if (rc == 0) {
            /* the end stays the end */
            fuzz_check(ads_dump_reader_next(&rec, r, a, &err) == 0);
            break;
        }
        fuzz_check(rc == 1 && rec != NULL);
        ads_buf text = ADS_BUF_INIT;
        ads_record_unparse(&text, rec);
        fuzz_check(!text.failed);
        const ads_record *back;
        rc = ads_record_parse(&back, b, text.p, text.len, &err);
        if (rc)
            fprintf(stderr, "does not read back: %s\n%s\n", err.message, ads_buf_cstr(&text));
        fuzz_check(rc == 0);
        if (!fuzz_same_record(rec, back))
            fprintf(stderr, "reads back otherwise:\n%s\n", ads_buf_cstr(&text));
        fuzz_check(fuzz_same_record(rec, back));
        ads_buf_free(&text);
        ads_arena_reset(a);
        ads_arena_reset(b);
    }
done:
    ads_dump_reader_free(r);
    if (f)
        fclose(f);
    ads_arena_free(a);
    ads_arena_free(b);
}

/* Nothing in folder dir but entries named in keep (NULL-terminated). */
static bool holds_only(const char *dir, const char *const *keep)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    bool ok = true;
    while (ok && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        bool known = false;
        for (size_t i = 0; keep[i] && !known; i++)
            known = strcmp(e->d_name, keep[i]) == 0;
        ok = known;
        if (!ok)
            fprintf(stderr, "%s holds %s\n", dir, e->d_name);
    }
    closedir(d);
    return ok;
}

static void check_restore(const uint8_t *d, size_t n)
{
    const char *shm = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    char base[64], store[96], path[128];
    snprintf(base, sizeof base, "%s/ads-fuzz-dump-XXXXXX", shm);
    if (!mkdtemp(base))
        return;
    snprintf(store, sizeof store, "%s/store", base);
    FILE *f = open_bytes(d, n);
    if (!f) {
        rmdir(base);
        return;
    }
    ads_dump_result res;
    ads_error err;
    int rc = ads_restore(store, f, NULL, &res, &err);
    fclose(f);
    static const char *const none[] = {NULL};
    static const char *const the_store[] = {"store", NULL};
    static const char *const store_files[] = {"data.mdb", "lock.mdb", NULL};
    if (rc) {
        /* a bad dump: its error, and nothing left behind */
        if (rc != ADS_ECORRUPT && rc != ADS_EVERSION && rc != ADS_ENOMEM)
            fprintf(stderr, "restore: %d %s\n", rc, err.message);
        fuzz_check(rc == ADS_ECORRUPT || rc == ADS_EVERSION || rc == ADS_ENOMEM);
        fuzz_check(err.code == rc && err.message[0] != '\0');
        fuzz_check(holds_only(base, none));
    } else {
        /* a store, in place, and nothing beside it */
        fuzz_check(holds_only(base, the_store));
        fuzz_check(holds_only(store, store_files));
        snprintf(path, sizeof path, "%s/data.mdb", store);
        struct stat sb;
        fuzz_check(stat(path, &sb) == 0);
        if (res.rows > 0) {
            /* a second restore over a store with rows is refused, and the
             * store stays */
            f = open_bytes(d, n);
            if (f) {
                rc = ads_restore(store, f, NULL, NULL, &err);
                fclose(f);
                fuzz_check(rc == ADS_EEXIST);
                fuzz_check(holds_only(base, the_store));
                fuzz_check(stat(path, &sb) == 0);
            }
        }
        unlink(path);
        snprintf(path, sizeof path, "%s/lock.mdb", store);
        unlink(path);
        fuzz_check(rmdir(store) == 0);
    }
    int gone = rmdir(base);
    if (gone != 0)
        fprintf(stderr, "%s left behind: %s\n", base, strerror(errno));
    fuzz_check(gone == 0);
}

static void check(const uint8_t *d, size_t n)
{
    check_reader(d, n);
    check_restore(d, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes, so ASan sees any over-read */
    uint8_t *s = malloc(size ? size : 1), *fixed = NULL;
    size_t fixed_len = 0;
    if (!s)
        return 0;
    memcpy(s, data, size);
    check(s, size);
    int rc = size && s[0] == '[' ? fix_text(s, size, &fixed, &fixed_len)
                                 : fix_msgpack(s, size, &fixed, &fixed_len);
    if (rc == 0)
        check(fixed, fixed_len);
    free(fixed);
    free(s);
    return 0;
}
