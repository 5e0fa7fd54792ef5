/*
 * base/num.h: numbers read and written the same whatever the process's
 * locale. A program that embeds adstore may call setlocale(LC_ALL, ""), and
 * under LC_NUMERIC=de_DE the C library's strtod stops at '.' and printf
 * writes "2,25": stored expressions would change meaning. Every reading and
 * writing of a real in the library goes through these, which use the "C"
 * locale (made once, for the whole process, on first use) for the calling
 * thread only, for the length of the call.
 */
#ifndef ADS_NUM_H
#define ADS_NUM_H

#include <stdarg.h>
#include <stddef.h>

/* strtod as in the "C" locale ('.' is the radix character). */
double ads_strtod_c(const char *s, char **end);

/* snprintf and vsnprintf as in the "C" locale (no grouping, '.' as the
 * radix character); the same return values. */
int ads_snprintf_c(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int ads_vsnprintf_c(char *buf, size_t cap, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
