/*
 * classad/regex.h: compiled regular expressions for the built-ins (regexp,
 * regexpMember, regexps, replace, replaceAll, stringList_regexpMember,
 * unresolved). Patterns are compiled by PCRE2 and kept in a small cache per
 * thread, keyed by the pattern's bytes and its compile options, so that an
 * expression evaluated over many records compiles its pattern once. Every
 * match runs under the limits of base/limits.h (ADS_REGEX_*).
 */
#ifndef ADS_CLASSAD_REGEX_H
#define ADS_CLASSAD_REGEX_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "classad/classad_int.h"

typedef struct ads_regex_slot ads_regex_slot;

/* A pattern ready to match, from ads_regex__open until ads_regex__close. */
typedef struct ads_regex {
    pcre2_code *code;
    pcre2_match_data *md;
    pcre2_match_context *mc;
    ads_regex_slot *slot; /* the cache entry lent out, or NULL: owned */
} ads_regex;

/* Compile pattern with PCRE2 options (or take it from the thread's cache):
 * 0, or -1 if it is not a valid pattern or memory ran out (then cx->oom is
 * set). */
int ads_regex__open(ads_regex *re, ads_eval_ctx *cx, ads_str pattern, uint32_t options);

/* Give the pattern back (to the cache, or free it). */
void ads_regex__close(ads_regex *re);

/* Search subject from byte start: > 0 (1 + the highest group set) on a
 * match, PCRE2_ERROR_NOMATCH, or another negative code (a limit was hit, or
 * memory ran out: then cx->oom is set) which the caller turns into error. */
int ads_regex__match(ads_regex *re, ads_eval_ctx *cx, ads_str subject, size_t start,
                     uint32_t flags);

#endif
