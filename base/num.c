/*
 * base/num.c: strtod and snprintf in the "C" locale (base/num.h). The locale
 * object is made once per process under pthread_once and never freed (one
 * small allocation, as the C library keeps its own). uselocale() switches
 * only the calling thread, so other threads, and the caller's own locale
 * after the call, are untouched. Should newlocale fail (no memory), the
 * calls fall back to the process's locale, which is "C" unless the program
 * changed it.
 */
/* strtod_l and uselocale: _GNU_SOURCE, which the build defines */
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/num.h"

static pthread_once_t c_once = PTHREAD_ONCE_INIT;
static locale_t c_locale = (locale_t)0;

static void make_c_locale(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t c_loc(void)
{
    pthread_once(&c_once, make_c_locale);
    return c_locale;
}

double ads_strtod_c(const char *s, char **end)
{
    locale_t c = c_loc();
    return c ? strtod_l(s, end, c) : strtod(s, end);
}

int ads_vsnprintf_c(char *buf, size_t cap, const char *fmt, va_list ap)
{
    locale_t c = c_loc();
    locale_t old = c ? uselocale(c) : (locale_t)0;
    int n = vsnprintf(buf, cap, fmt, ap);
    if (old)
        uselocale(old);
    return n;
}

int ads_snprintf_c(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = ads_vsnprintf_c(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}
