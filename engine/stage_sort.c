/*
 * engine/stage_sort.c: a sorted load's run in key order. The keys are
 * compared eight bytes at a time, as big-endian words kept in the
 * references: a three-way radix quicksort partitions on the word at one
 * depth, and the group whose words are all the pivot's goes on with the
 * next eight bytes. Each key is read once per eight bytes of it that its
 * place depends on, where a comparison sort reads two keys (scattered
 * through the run, so two cache misses) and calls memcmp per comparison:
 * on 20,000 job ads qsort took 5,600 instructions a row.
 *
 * The order is ads_stage__ref_cmp's, exactly: a key shorter than eight
 * bytes at a depth is padded with zeros there, which sorts it before any
 * key it begins; keys that end within the words they tie on are ordered
 * by that comparison, which gives length, then the order added. Like
 * introsort, a part that takes more partitions than twice the logarithm
 * of the run (pivots chosen badly, on purpose or by chance) is sorted by
 * qsort with the same comparison, so the time stays n log n.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/stage_sort.h"

/* Parts of this many entries or fewer are sorted by insertion. */
enum { SMALL_PART = 12 };

/* The comparison for two keyed entries whose keys agree in their first d
 * bytes (or end within them, the longer one with zeros to there). */
static int cmp_from(const ads_stage_ref *a, const ads_stage_ref *b, size_t d)
{
    size_t n = a->klen < b->klen ? a->klen : b->klen;
    int c = n > d ? memcmp(a->key + d, b->key + d, n - d) : 0;
    if (c)
        return c;
    if (a->klen != b->klen)
        return a->klen < b->klen ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int ads_stage__ref_cmp(const ads_stage_ref *a, const ads_stage_ref *b)
{
    if (a->keyed != b->keyed)
        return a->keyed ? -1 : 1;
    return cmp_from(a, b, 0);
}

static int cmp_void(const void *x, const void *y)
{
    return ads_stage__ref_cmp(x, y);
}

/* The eight key bytes from d as a big-endian word, zeros past the end. */
static uint64_t word_at(const ads_stage_ref *r, size_t d)
{
    if (d >= r->klen)
        return 0;
    size_t m = r->klen - d < 8 ? r->klen - d : 8;
    const unsigned char *p = r->key + d;
    uint64_t w = 0;
    if (m == 8)
        return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
               (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
               (uint64_t)p[6] << 8 | (uint64_t)p[7];
    for (size_t i = 0; i < m; i++)
        w = w << 8 | p[i];
    return w << (8 * (8 - m));
}

static void insertion(ads_stage_ref *r, size_t n, size_t d)
{
    for (size_t i = 1; i < n; i++) {
        ads_stage_ref t = r[i];
        size_t j = i;
        for (; j > 0 && cmp_from(&t, &r[j - 1], d) < 0; j--)
            r[j] = r[j - 1];
        r[j] = t;
    }
}

static void swap(ads_stage_ref *a, ads_stage_ref *b)
{
    ads_stage_ref t = *a;
    *a = *b;
    *b = t;
}

static uint64_t median3(uint64_t a, uint64_t b, uint64_t c)
{
    if (a < b)
        return b < c ? b : a < c ? c : a;
    return a < c ? a : b < c ? c : b;
}

/* Keyed r[0..n), whose keys agree in their first d bytes, each with its
 * word at d; budget partitions left before qsort takes over. */
static void sort_at(ads_stage_ref *r, size_t n, size_t d, unsigned budget)
{
    for (;;) {
        if (n <= SMALL_PART) {
            insertion(r, n, d);
            return;
        }
        if (budget == 0) {
            qsort(r, n, sizeof *r, cmp_void);
            return;
        }
        budget--;
        uint64_t p = median3(r[0].word, r[n / 2].word, r[n - 1].word);
        size_t lt = 0, i = 0, gt = n;
        while (i < gt) {
            if (r[i].word < p)
                swap(&r[lt++], &r[i++]);
            else if (r[i].word > p)
                swap(&r[i], &r[--gt]);
            else
                i++;
        }
        sort_at(r, lt, d, budget);
        sort_at(r + gt, n - gt, d, budget);
        /* the pivot's group goes on at the next word, unless every key of
         * it ends within this one: then only lengths and order differ */
        r += lt;
        n = gt - lt;
        size_t k = 0;
        while (k < n && r[k].klen <= d + 8)
            k++;
        if (k == n) {
            if (n <= SMALL_PART)
                insertion(r, n, d);
            else
                qsort(r, n, sizeof *r, cmp_void);
            return;
        }
        d += 8;
        for (k = 0; k < n; k++)
            r[k].word = word_at(&r[k], d);
    }
}

void ads_stage__sort(ads_stage_ref *r, size_t n)
{
    unsigned budget = 8;
    for (size_t m = n; m > 1; m >>= 1)
        budget += 2;
    ads_stage__sort_limited(r, n, budget);
}

void ads_stage__sort_limited(ads_stage_ref *r, size_t n, unsigned budget)
{
    /* entries without a key to the end, keeping their order (added order,
     * as they come), the keyed ones in any order before them */
    size_t keyed = n;
    for (size_t i = n; i-- > 0;)
        if (!r[i].keyed)
            swap(&r[i], &r[--keyed]);
    for (size_t i = keyed + 1; i < n; i++)
        if (r[i].seq < r[i - 1].seq) { /* only if the caller's were out of order */
            qsort(r + keyed, n - keyed, sizeof *r, cmp_void);
            break;
        }
    for (size_t i = 0; i < keyed; i++)
        r[i].word = word_at(&r[i], 0);
    sort_at(r, keyed, 0, budget);
}
