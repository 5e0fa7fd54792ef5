/*
 * base/budget.c: a statement's memory and time limits (see budget.h).
 */
#include "base/budget.h"

#include <time.h>

static double now_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ads_budget_start(ads_budget *b, size_t max_bytes, double max_seconds)
{
    b->max_bytes = max_bytes;
    b->used_bytes = 0;
    b->max_seconds = max_seconds > 0 ? max_seconds : 0;
    b->deadline = b->max_seconds ? now_monotonic() + b->max_seconds : 0;
    b->tick = 0;
    b->hit = ADS_BUDGET_OK;
}

bool ads_budget_check(ads_budget *b)
{
    if (!b)
        return true;
    if (b->hit)
        return false;
    if (b->deadline && (b->tick++ & 63) == 0 && now_monotonic() > b->deadline) {
        b->hit = ADS_BUDGET_TIME;
        return false;
    }
    return true;
}

bool ads_budget_room(const ads_budget *b, size_t n)
{
    return !b || !b->max_bytes || (b->used_bytes <= b->max_bytes && n <= b->max_bytes - b->used_bytes);
}
