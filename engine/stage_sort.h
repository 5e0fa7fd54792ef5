/*
 * engine/stage_sort.h: the order a sorted load's run in memory is written
 * in (engine/stage.c), and a bulk load's batch is stored in
 * (engine/bulk.c). Shared with its test, which checks the sort against the
 * comparison it must agree with.
 */
#ifndef ADS_ENGINE_STAGE_SORT_H
#define ADS_ENGINE_STAGE_SORT_H

#include <stddef.h>
#include <stdint.h>

/* One entry of the run as the sort sees it: what it compares, without
 * reading the entry itself. */
typedef struct ads_stage_ref {
    const unsigned char *key; /* klen bytes; set before the sort */
    size_t off;               /* the entry's place in the run */
    uint64_t seq;             /* the order added: unique */
    uint64_t word;            /* the sort's scratch */
    uint32_t klen, rlen, keyed;
} ads_stage_ref;

/* The order: keyed entries first, by key bytes (a key before the longer
 * keys it begins), then by seq; then the entries without a key, by seq.
 * <0, 0 (only for one entry) or >0. */
int ads_stage__ref_cmp(const ads_stage_ref *a, const ads_stage_ref *b);

/* r[0..n) into that order. Never fails. */
void ads_stage__sort(ads_stage_ref *r, size_t n);

/* The same with at most budget partitions along any path before qsort
 * sorts the part (ads_stage__sort gives 8 + 2 log2 n): for tests. */
void ads_stage__sort_limited(ads_stage_ref *r, size_t n, unsigned budget);

#endif
