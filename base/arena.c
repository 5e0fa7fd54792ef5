/*
 * base/arena.c: a chain of blocks, bump allocation inside the newest one.
 * Blocks double in size up to a cap; a request larger than a block gets a
 * block of its own. In the debug build each allocation is its own malloc,
 * chained so that reset and free release them all.
 */
#include "base/arena.h"
#include "base/budget.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 16
#define FIRST_BLOCK 4096
#define MAX_BLOCK (1u << 20)

typedef struct block {
    struct block *next;
    size_t size, used;
    _Alignas(ALIGN) unsigned char data[];
} block;

struct ads_arena {
    block *head; /* newest first; the last one is the first block */
    size_t next_size;
    size_t handed_out;
    ads_budget *budget; /* blocks held count against it; NULL: none */
};

ads_arena *ads_arena_new(void)
{
    ads_arena *a = calloc(1, sizeof *a);
    if (a)
        a->next_size = FIRST_BLOCK;
    return a;
}

static void free_blocks(ads_arena *a, block *b, block *keep)
{
    while (b && b != keep) {
        block *next = b->next;
        if (a->budget)
            a->budget->used_bytes -= sizeof(block) + b->size;
        free(b);
        b = next;
    }
}

void ads_arena_free(ads_arena *a)
{
    if (!a)
        return;
    free_blocks(a, a->head, NULL);
    free(a);
}

void ads_arena_reset(ads_arena *a)
{
    block *first = a->head;
    if (!first)
        return;
    while (first->next)
        first = first->next;
#ifdef ADS_ARENA_DEBUG
    free_blocks(a, a->head, NULL);
    a->head = NULL;
#else
    free_blocks(a, a->head, first);
    first->used = 0;
    first->next = NULL;
    a->head = first;
#endif
    a->handed_out = 0;
}

static block *new_block(ads_arena *a, size_t size)
{
    if (size > SIZE_MAX - sizeof(block))
        return NULL;
    if (a->budget && !ads_budget_room(a->budget, sizeof(block) + size)) {
        if (!a->budget->hit)
            a->budget->hit = ADS_BUDGET_MEMORY;
        return NULL;
    }
    block *b = malloc(sizeof(block) + size);
    if (b) {
        b->size = size;
        b->used = 0;
        b->next = NULL;
        if (a->budget)
            a->budget->used_bytes += sizeof(block) + size;
    }
    return b;
}

/* An allocation of need bytes (n asked) that the newest block cannot hold,
 * or any allocation in the debug build. Out of ads_arena_alloc's line so
 * that its usual path, a bump in the newest block, saves no registers. */
__attribute__((noinline)) static void *alloc_slow(ads_arena *a, size_t n, size_t need)
{
#ifdef ADS_ARENA_DEBUG
    (void)need;
    block *b = new_block(a, n ? n : 1);
    if (!b)
        return NULL;
    b->next = a->head;
    a->head = b;
    a->handed_out += n;
    return b->data;
#else
    block *b = a->head;
    if (b && need > a->next_size / 2) {
        /* a large request gets a block of its own, behind the current one,
         * so the current block keeps serving small requests */
        block *big = new_block(a, need);
        if (!big)
            return NULL;
        big->used = need;
        big->next = b->next;
        b->next = big;
        a->handed_out += n;
        return big->data;
    }
    size_t size = a->next_size > need ? a->next_size : need;
    if (a->next_size < MAX_BLOCK)
        a->next_size *= 2;
    block *nb = new_block(a, size);
    if (!nb)
        return NULL;
    nb->next = b;
    nb->used = need;
    a->head = nb;
    a->handed_out += n;
    return nb->data;
#endif
}

void *ads_arena_alloc(ads_arena *a, size_t n)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (need == 0)
        need = ALIGN;
#ifndef ADS_ARENA_DEBUG
    block *b = a->head;
    if (b && b->size - b->used >= need) {
        void *p = b->data + b->used;
        b->used += need;
        a->handed_out += n;
        return p;
    }
#endif
    return alloc_slow(a, n, need);
}

char *ads_arena_strndup(ads_arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *p = ads_arena_alloc(a, n + 1);
    if (p) {
        if (n)
            memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

size_t ads_arena_used(const ads_arena *a)
{
    return a->handed_out;
}

void ads_arena_set_budget(ads_arena *a, struct ads_budget *budget)
{
    /* blocks already held count from now on */
    for (block *b = a->head; b; b = b->next) {
        if (a->budget)
            a->budget->used_bytes -= sizeof(block) + b->size;
        if (budget)
            budget->used_bytes += sizeof(block) + b->size;
    }
    a->budget = budget;
}

struct ads_budget *ads_arena_budget(const ads_arena *a)
{
    return a->budget;
}
