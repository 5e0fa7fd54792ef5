/*
 * base/arena.h: region allocation. A statement or an evaluation allocates
 * from one arena and frees everything in one call. Allocation failure returns
 * NULL (callers report ADS_ENOMEM); nothing here aborts.
 *
 * With -DADS_ARENA_DEBUG (set by the sanitizer build) every allocation is a
 * separate malloc, so AddressSanitizer sees an overrun of any single block.
 */
#ifndef ADS_BASE_ARENA_H
#define ADS_BASE_ARENA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ads_arena ads_arena;

/* A new, empty arena; NULL when out of memory. */
ads_arena *ads_arena_new(void);

/* Free the arena and everything allocated from it. NULL is allowed. */
void ads_arena_free(ads_arena *a);

/* Free everything allocated from the arena but keep it (and its first block)
 * for reuse: the cheap way to evaluate many times. */
void ads_arena_reset(ads_arena *a);

/* n bytes aligned for any type, valid until the arena is reset or freed;
 * NULL when out of memory (or n too large). n == 0 returns a valid pointer. */
void *ads_arena_alloc(ads_arena *a, size_t n);

/* A NUL-terminated copy of n bytes of s (s may hold NULs); NULL when out of memory. */
char *ads_arena_strndup(ads_arena *a, const char *s, size_t n);

/* Bytes handed out since creation or the last reset (for tests and stats). */
size_t ads_arena_used(const ads_arena *a);

struct ads_budget;
/* Count the arena's blocks against budget (base/budget.h; NULL: stop
 * counting): an allocation that would take it past its memory limit fails
 * (NULL) and marks the budget. The budget must outlive the arena's blocks or
 * be detached first. */
void ads_arena_set_budget(ads_arena *a, struct ads_budget *budget);

/* The budget the arena counts against, or NULL. */
struct ads_budget *ads_arena_budget(const ads_arena *a);

#ifdef __cplusplus
}
#endif
#endif
