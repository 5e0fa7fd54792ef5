/*
 * query/tlagg.h: the state of a timeline aggregation, shared by the sweep in
 * time order (query/tlagg.c) and the per-record sweep (query/tlrecord.c).
 */
#ifndef ADS_QUERY_TLAGG_H
#define ADS_QUERY_TLAGG_H

#include "query/query_int.h"

typedef enum { TA_AVG, TA_MIN, TA_MAX, TA_SUM } tagg_kind;
typedef enum { IA_COUNT_STAR, IA_COUNT, IA_SUM, IA_AVG, IA_MIN, IA_MAX } inner_kind;

typedef struct tagg {
    tagg_kind outer;
    inner_kind inner;
    const ads_expr *arg; /* prepared; NULL for count(*) */
} tagg;

/* A record's contribution to one aggregate. */
typedef struct rval {
    double v;
    uint8_t state; /* 0 undefined, 1 a number, 2 defined but not a number */
} rval;

/* A sorted multiset of doubles (min / max inner aggregates). */
typedef struct mset {
    double *v;
    size_t n, cap;
} mset;

/* A group's inner aggregate state for one timeline aggregate. */
typedef struct inner_state {
    uint64_t records, defined, numbers;
    uint64_t others; /* defined values that are not (finite) numbers */
    double sum;
    mset ms;
} inner_state;

/* A span of time [lo, hi). */
typedef struct tspan {
    double lo, hi;
} tspan;

/* One (group, interval, aggregate) cell. */
typedef struct cell {
    double integral, dtime; /* avg@ */
    double lo, hi;          /* min@ / max@ */
    bool seen;
    double sum;             /* sum@ */
    bool bad_f;             /* f was error at some instant (avg@, min@, max@: error) */
    bool bad_samples;       /* the samples of some instant gave error (sum@: error) */
    tspan *cov;             /* per-record sweep: the disjoint spans some record covers */
    size_t ncov, capcov;
} cell;

/* The samples of one group at the current instant (sum@). */
typedef struct instant {
    uint64_t records, defined, numbers, others;
    double sum, lo, hi;
} instant;

typedef struct tgroup {
    uint64_t hash;
    ads_value *keys;
    inner_state *in; /* per aggregate */
    double last; /* f is integrated up to here */
    cell *cells; /* [interval][aggregate] */
    instant *now_in; /* per aggregate */
    bool touched;    /* has samples at the current instant */
    struct tgroup *next;
    size_t seq;
} tgroup;

typedef struct rstate {
    bool contrib;
    tgroup *g;
    rval *vals; /* per aggregate */
} rstate;

typedef struct tl {
    const stmt *st;
    const ads_expr *where;
    const ads_expr **gexprs;
    size_t ngroup;
    tagg *aggs;
    size_t naggs;
    const ads_expr **items, **order;
    double t1, t2, D, a0; /* range, interval length, first interval's aligned start */
    size_t nint;
    ads_arena *a, *ra;
    tgroup **table;
    size_t nbuckets;
    tgroup **groups;
    size_t ngroups, capgroups;
    rstate *recs;
    size_t nrecs;
    tgroup **touched;
    size_t ntouched, captouched;
    double instant_t;
    ads_error *err;
} tl;

/* The range of a temporal filter (timeline.c). */
int ads_q__tl_range(ads_query *q, const temporal *tf, double *t1, double *t2, ads_arena *a,
                    ads_error *err);
/* A timeline aggregation: st's GROUP BY holds @intervals at index iv. */
int ads_q__tl_aggregate(ads_query *q, const stmt *st, const temporal *tf, const ads_expr *where,
                        long iv, const ads_sink *sink, ads_exec_info *info, ads_error *err,
                        ads_txn *txn, const ads_type *type, ads_arena *a, ads_arena *ra);

/* tlagg.c, for tlrecord.c */
bool ads_q__tl_needs_numbers(inner_kind k);
tgroup *ads_q__tl_group_of(tl *x, const ads_value *keys);
void ads_q__tl_rval(rval *out, const ads_value *v);
/* Set the intervals up; first: the range's start when it has none. */
int ads_q__tl_intervals(tl *x, double first);

/* tlrecord.c: can the statement's aggregates be summed record by record
 * (avg@ or sum@ of count(*), count(x), sum(x), over a range with a start)? */
bool ads_q__tl_linear(const tl *x);
/* Run the sweep record by record; it must be a timeline iterator in record
 * order (ads_timeline_by_record). */
int ads_q__tl_by_record(tl *x, ads_query *q, ads_timeline *it, ads_error *err);

#endif
