/*
 * classad/regex.c: compiling patterns, and the per-thread cache that keeps
 * them. A constraint such as regexp("^slot[0-9]+@", Name) evaluated over a
 * million rows names the same pattern a million times; compiling it is many
 * times the cost of matching, so each thread keeps its last
 * ADS_REGEX_CACHE_ENTRIES patterns (of at most ADS_REGEX_CACHE_PATTERN_MAX
 * bytes, held in thread-local storage), each with its match data, and
 * replaces the least recently used.
 * The key is the pattern's bytes and the compile options, so "i" and ""
 * never share an entry. An entry is lent to one open regex at a time (a
 * second open of the same pattern while the first is still open compiles
 * its own copy), and the thread's entries are freed when the thread ends.
 * Kept patterns are also compiled to machine code (PCRE2's JIT) where the
 * library supports it.
 */
#include <pthread.h>
#include <string.h>

#include "classad/regex.h"

struct ads_regex_slot {
    size_t len;    /* of pattern */
    uint32_t options, hash;
    uint64_t used; /* the cache's clock when it was last lent */
    bool full;     /* holds a pattern */
    bool busy;     /* lent to an open regex */
    pcre2_code *code;
    pcre2_match_data *md;
    char pattern[ADS_REGEX_CACHE_PATTERN_MAX];
};

/* Thread-local storage, so that keeping patterns allocates nothing of its
 * own beyond what PCRE2 allocates for them. */
typedef struct regex_cache {
    ads_regex_slot slots[ADS_REGEX_CACHE_ENTRIES];
    pcre2_match_context *mc; /* the limits, shared by the thread's matches */
    uint64_t clock;
} regex_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static bool cache_key_ok;
static _Thread_local regex_cache thread_cache;
static _Thread_local bool thread_cache_ready;

static void slot_clear(ads_regex_slot *s)
{
    pcre2_match_data_free(s->md);
    pcre2_code_free(s->code);
    s->md = NULL;
    s->code = NULL;
    s->full = s->busy = false;
}

/* At thread exit (pthread key destructor). */
static void cache_free(void *p)
{
    regex_cache *c = p;
    for (size_t i = 0; i < ADS_REGEX_CACHE_ENTRIES; i++)
        slot_clear(&c->slots[i]);
    pcre2_match_context_free(c->mc);
    c->mc = NULL;
}

static void cache_key_init(void)
{
    cache_key_ok = pthread_key_create(&cache_key, cache_free) == 0;
}

static pcre2_match_context *limits_new(void)
{
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    if (mc) {
        pcre2_set_match_limit(mc, ADS_REGEX_MATCH_LIMIT);
        pcre2_set_depth_limit(mc, ADS_REGEX_DEPTH_LIMIT);
        pcre2_set_heap_limit(mc, ADS_REGEX_HEAP_LIMIT_KIB);
    }
    return mc;
}

/* The calling thread's cache, set up on first use; NULL if it cannot be
 * (then every pattern is compiled per call, as if there were no cache, and
 * the next call tries again). */
static regex_cache *cache_get(void)
{
    regex_cache *c = &thread_cache;
    if (thread_cache_ready)
        return c;
    pthread_once(&cache_once, cache_key_init);
    if (!cache_key_ok || !(c->mc = limits_new()))
        return NULL;
    if (pthread_setspecific(cache_key, c) != 0) {
        cache_free(c);
        return NULL;
    }
    thread_cache_ready = true;
    return c;
}

static uint32_t key_hash(const char *p, size_t len, uint32_t options)
{
    uint32_t h = 2166136261u ^ options;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)p[i];
        h *= 16777619u;
    }
    return h;
}

/* The entry holding (pattern, options) and free to lend, else NULL. */
static ads_regex_slot *cache_find(regex_cache *c, ads_str pattern, uint32_t options,
                                  uint32_t hash)
{
    for (size_t i = 0; i < ADS_REGEX_CACHE_ENTRIES; i++) {
        ads_regex_slot *s = &c->slots[i];
        if (s->full && s->hash == hash && s->options == options && s->len == pattern.len &&
            !s->busy && memcmp(s->pattern, pattern.p, pattern.len) == 0)
            return s;
    }
    return NULL;
}

/* The entry to fill next: an empty one, else the least recently used of
 * those not lent out; NULL when all are lent. */
static ads_regex_slot *cache_victim(regex_cache *c)
{
    ads_regex_slot *best = NULL;
    for (size_t i = 0; i < ADS_REGEX_CACHE_ENTRIES; i++) {
        ads_regex_slot *s = &c->slots[i];
        if (s->busy)
            continue;
        if (!s->full)
            return s;
        if (!best || s->used < best->used)
            best = s;
    }
    return best;
}

static void lend(ads_regex *re, regex_cache *c, ads_regex_slot *s)
{
    s->busy = true;
    s->used = ++c->clock;
    re->code = s->code;
    re->md = s->md;
    re->mc = c->mc;
    re->slot = s;
}

/* Compile into re, owned by re (no cache). */
static int compile_owned(ads_regex *re, ads_eval_ctx *cx, ads_str pattern, uint32_t options)
{
    int code;
    PCRE2_SIZE offset;
    memset(re, 0, sizeof *re);
    re->code = pcre2_compile((PCRE2_SPTR)(pattern.p ? pattern.p : ""), pattern.len, options,
                             &code, &offset, NULL);
    if (!re->code) {
        if (code == PCRE2_ERROR_HEAP_FAILED || code == PCRE2_ERROR_NOMEMORY)
            cx->oom = true;
        return -1;
    }
    re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
    re->mc = limits_new();
    if (!re->md || !re->mc) {
        cx->oom = true;
        ads_regex__close(re);
        return -1;
    }
    return 0;
}

/* Move a freshly compiled re into entry s (its match context becomes the
 * cache's), and lend it. */
static void adopt(ads_regex *re, regex_cache *c, ads_regex_slot *s, ads_str pattern,
                  uint32_t options, uint32_t hash)
{
    slot_clear(s);
    if (pattern.len)
        memcpy(s->pattern, pattern.p, pattern.len);
    s->len = pattern.len;
    s->options = options;
    s->hash = hash;
    s->code = re->code;
    s->md = re->md;
    s->full = true;
    pcre2_match_context_free(re->mc);
    /* kept patterns are worth compiling to machine code where PCRE2 can
     * (without it, or if that fails, they are interpreted) */
    (void)pcre2_jit_compile(s->code, PCRE2_JIT_COMPLETE);
    lend(re, c, s);
}

int ads_regex__open(ads_regex *re, ads_eval_ctx *cx, ads_str pattern, uint32_t options)
{
    regex_cache *c = pattern.len <= ADS_REGEX_CACHE_PATTERN_MAX ? cache_get() : NULL;
    uint32_t hash = 0;
    if (c) {
        hash = key_hash(pattern.p, pattern.len, options);
        ads_regex_slot *s = cache_find(c, pattern, options, hash);
        if (s) {
            lend(re, c, s);
            return 0;
        }
    }
    if (compile_owned(re, cx, pattern, options))
        return -1;
    ads_regex_slot *s = c ? cache_victim(c) : NULL;
    if (s)
        adopt(re, c, s, pattern, options, hash);
    return 0;
}

void ads_regex__close(ads_regex *re)
{
    if (re->slot) {
        re->slot->busy = false;
    } else {
        pcre2_match_context_free(re->mc);
        pcre2_match_data_free(re->md);
        pcre2_code_free(re->code);
    }
    memset(re, 0, sizeof *re);
}

int ads_regex__match(ads_regex *re, ads_eval_ctx *cx, ads_str subject, size_t start,
                     uint32_t flags)
{
    PCRE2_SPTR text = (PCRE2_SPTR)(subject.p ? subject.p : "");
    int rc = pcre2_match(re->code, text, subject.len, start, flags, re->md, re->mc);
    /* Machine code counts its work in its own way and has a stack of its
     * own: when it gives up on a limit, the interpreter decides, so that a
     * pattern gives the same result compiled or not. */
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT ||
        rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT)
        rc = pcre2_match(re->code, text, subject.len, start, flags | PCRE2_NO_JIT, re->md,
                         re->mc);
    if (rc == PCRE2_ERROR_NOMEMORY)
        cx->oom = true;
    if (rc == 0) /* the match data is too small: cannot happen, sized from the pattern */
        rc = PCRE2_ERROR_NOMEMORY;
    return rc;
}
