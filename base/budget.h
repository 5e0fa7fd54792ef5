/*
 * base/budget.h: what one statement may spend, in memory and in time.
 *
 * A budget is attached to the arenas a statement allocates from
 * (ads_arena_set_budget): their blocks count against max_bytes while held,
 * and an allocation past it fails as if memory had run out, with `hit` set
 * so the caller can say which limit stopped it. Loops that may run long (a
 * scan, a join without a key, a global regex substitution) call
 * ads_budget_check, which reads the clock every few calls and sets `hit`
 * once the deadline has passed. Defaults and the user's knobs are in
 * base/limits.h and docs/query.md ("Statement limits").
 */
#ifndef ADS_BASE_BUDGET_H
#define ADS_BASE_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { ADS_BUDGET_OK = 0, ADS_BUDGET_MEMORY = 1, ADS_BUDGET_TIME = 2 };

typedef struct ads_budget {
    size_t max_bytes;  /* 0: no limit */
    size_t used_bytes; /* arena blocks held now */
    double max_seconds;/* 0: no limit */
    double deadline;   /* CLOCK_MONOTONIC seconds; set by ads_budget_start */
    unsigned tick;
    int hit;           /* ADS_BUDGET_*: the first limit reached */
} ads_budget;

/* Start counting: the deadline is now + max_seconds. */
void ads_budget_start(ads_budget *b, size_t max_bytes, double max_seconds);

/* False once a limit has been reached (sets b->hit). Cheap: the clock is
 * read every 64th call. NULL is a budget without limits. */
bool ads_budget_check(ads_budget *b);

/* Room for n more bytes (counted only when the arena takes them). */
bool ads_budget_room(const ads_budget *b, size_t n);

#ifdef __cplusplus
}
#endif
#endif
