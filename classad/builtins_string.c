/*
 * classad/builtins_string.c: the string, list, math and regular-expression
 * built-ins (shared/spec/classad.md section 6), with HTCondor's semantics
 * (its ClassAd library, src/classad/fnCall.cpp, and the string-list functions
 * of its compatibility layer). Where HTCondor's code misbehaves (undefined
 * behaviour, garbage results) the function does what HTCondor documents
 * instead; each such place says so.
 *
 * Every function receives its arguments unevaluated and evaluates them all:
 * none of these is lazy, except unresolved(), which reads its first argument
 * as an attribute reference and walks that attribute's expression without
 * evaluating it (it is here for its pattern, a regular expression). Results
 * are values in the evaluation's arena, or point into the argument strings
 * (substr, split), which live at least as long. Regular expressions are
 * PCRE2 (classad/regex.c: compiled once per thread and pattern, matched
 * under limits that bound the work of one match); a match that hits a limit
 * evaluates to error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/budget.h"
#include "classad/classad_int.h"
#include "classad/regex.h"
#include "base/num.h"

/* Evaluate argument i. */
static ads_value arg(ads_eval_ctx *cx, const ads_view *view, const ads_expr *const *args, size_t i)
{
    ads_value v;
    ads_eval__expr(&v, cx, args[i], view);
    return v;
}

/* Evaluate arguments 0..n-1 into v[0..cap), the rest undefined (n <= cap). */
static void eval_args(ads_value *v, size_t cap, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, size_t n)
{
    for (size_t i = 0; i < cap; i++)
        v[i] = i < n ? arg(cx, view, args, i) : ads_undefined();
}

/* The usual strictness: error if any of v[0..n) is error, else undefined if
 * any is undefined. True when that decided *out. */
static bool strict_args(ads_value *out, const ads_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].type == ADS_ERROR) {
            *out = ads_errorv();
            return true;
        }
    for (size_t i = 0; i < n; i++)
        if (v[i].type == ADS_UNDEFINED) {
            *out = ads_undefined();
            return true;
        }
    return false;
}

static void out_of_memory(ads_value *out, ads_eval_ctx *cx)
{
    cx->oom = true;
    *out = ads_errorv();
}

/* *out = a copy of b's bytes in the arena; b is freed. */
static void finish_string(ads_value *out, ads_eval_ctx *cx, ads_buf *b)
{
    if (b->failed || ads_string_copy(out, cx->arena, ads_buf_cstr(b), b->len))
        out_of_memory(out, cx);
    ads_buf_free(b);
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* isspace() in the C locale. */
static bool is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static ads_str str_of(const char *s)
{
    ads_str r = {s, strlen(s)};
    return r;
}

/* Byte-wise comparison (as unsigned bytes, like strcmp): <0, 0, >0. */
static int cmp_exact(ads_str a, ads_str b)
{
    size_t m = a.len < b.len ? a.len : b.len;
    int c = m ? memcmp(a.p, b.p, m) : 0;
    if (c != 0)
        return c;
    return a.len < b.len ? -1 : a.len > b.len;
}

/* s with a non-NULL pointer, so that s.p + offset is always defined. */
static ads_str nonnull(ads_str s)
{
    if (!s.p)
        s.p = "";
    return s;
}

/* ------------------------------------------------------------------------ */
/* Conversions shared by the functions                                      */
/* ------------------------------------------------------------------------ */

/* Append the text of v as strcat() sees it; false for a value that has none. */
static bool append_text(ads_buf *b, const ads_value *v)
{
    switch (v->type) {
    case ADS_STRING:
        ads_buf_add(b, v->u.s.p, v->u.s.len);
        return true;
    case ADS_ABSTIME:
        ads_time__format_abs_condor(b, v->u.abs.secs, v->u.abs.offset);
        return true;
    case ADS_RELTIME:
        ads_time__format_rel_condor(b, v->u.rel);
        return true;
    case ADS_INTEGER:
    case ADS_REAL:
    case ADS_BOOLEAN:
    case ADS_LIST:
    case ADS_RECORD:
    case ADS_IDENT:
        ads_value_unparse_condor(b, v);
        return true;
    default:
        return false;
    }
}

/* strcat(a, b, ...): the texts joined; undefined if any argument is
 * undefined, error if any is error (checked first). */
static void fn_strcat(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, size_t n)
{
    ads_buf b = ADS_BUF_INIT;
    bool undefined = false;
    *out = ads_string("", 0);
    for (size_t i = 0; i < n; i++) {
        ads_value v;
        ads_eval__expr(&v, cx, args[i], view);
        if (v.type == ADS_ERROR) {
            *out = ads_errorv();
            goto done;
        }
        if (v.type == ADS_UNDEFINED) {
            undefined = true;
            continue;
        }
        if (!append_text(&b, &v)) {
            *out = ads_errorv();
            goto done;
        }
    }
    if (undefined)
        *out = ads_undefined();
    else if (b.failed || ads_string_copy(out, cx->arena, ads_buf_cstr(&b), b.len)) {
        cx->oom = true;
        *out = ads_errorv();
    }
done:
    ads_buf_free(&b);
}

/*
 * The text of v as string() makes it (HTCondor's convertValueToStringValue),
 * borrowed for a string and in the arena otherwise. Returns ADS_STRING, or
 * ADS_UNDEFINED / ADS_ERROR when v has no text: the value to return then.
 */
static ads_vtype text_of(ads_str *s, ads_eval_ctx *cx, const ads_value *v)
{
    if (v->type == ADS_STRING) {
        *s = v->u.s;
        return ADS_STRING;
    }
    if (v->type == ADS_UNDEFINED)
        return ADS_UNDEFINED;
    ads_buf b = ADS_BUF_INIT;
    ads_vtype t = ADS_STRING;
    if (v->type == ADS_ERROR || !append_text(&b, v)) {
        t = ADS_ERROR;
    } else {
        char *p = b.failed ? NULL : ads_arena_strndup(cx->arena, ads_buf_cstr(&b), b.len);
        if (!p) {
            cx->oom = true;
            t = ADS_ERROR;
        } else {
            s->p = p;
            s->len = b.len;
        }
    }
    ads_buf_free(&b);
    return t;
}

/* The number real() makes of v (booleans 0 and 1, times their seconds,
 * strings their leading number); false if there is none, which includes
 * undefined and error. */
static bool to_real(double *r, ads_eval_ctx *cx, const ads_value *v)
{
    switch (v->type) {
    case ADS_INTEGER:
        *r = (double)v->u.i;
        return true;
    case ADS_REAL:
        *r = v->u.r;
        return true;
    case ADS_BOOLEAN:
        *r = v->u.b ? 1.0 : 0.0;
        return true;
    case ADS_ABSTIME:
        *r = v->u.abs.secs;
        return true;
    case ADS_RELTIME:
        *r = v->u.rel;
        return true;
    case ADS_STRING: {
        char *s = ads_arena_strndup(cx->arena, v->u.s.p, v->u.s.len);
        if (!s) {
            cx->oom = true;
            return false;
        }
        char *end;
        *r = ads_strtod_c(s, &end);
        return end != s;
    }
    default:
        return false;
    }
}

/* An integral double as an integer; error for NaN, infinities and values
 * outside int64 (a C cast of those is undefined behaviour). */
static ads_value int_of_integral(double r)
{
    if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0))
        return ads_errorv();
    return ads_int((int64_t)r);
}

/* ------------------------------------------------------------------------ */
/* Math: floor ceiling ceil round pow quantize random                       */
/* ------------------------------------------------------------------------ */

typedef enum round_kind { ROUND_FLOOR, ROUND_CEIL, ROUND_EVEN } round_kind;

/* An integer passes through; anything else goes through real() (so
 * undefined is error, as in HTCondor) and is rounded to an integer. */
static void do_round(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                     const ads_expr *const *args, round_kind k)
{
    ads_value v = arg(cx, view, args, 0);
    double r;
    if (v.type == ADS_INTEGER) {
        *out = v;
        return;
    }
    if (!to_real(&r, cx, &v)) {
        *out = ads_errorv();
        return;
    }
    /* rint rounds half to even in the default rounding mode */
    r = k == ROUND_FLOOR ? floor(r) : k == ROUND_CEIL ? ceil(r) : rint(r);
    *out = int_of_integral(r);
}

static void fn_floor(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                     const ads_expr *const *args, size_t n)
{
    (void)n;
    do_round(out, cx, view, args, ROUND_FLOOR);
}

static void fn_ceiling(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                       const ads_expr *const *args, size_t n)
{
    (void)n;
    do_round(out, cx, view, args, ROUND_CEIL);
}

static void fn_round(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                     const ads_expr *const *args, size_t n)
{
    (void)n;
    do_round(out, cx, view, args, ROUND_EVEN);
}

/* base ** e (e >= 0) in int64; false if it overflows. A square is taken only
 * when a later bit of e needs it, so an overflowing square means an
 * overflowing result. */
static bool int_pow(int64_t base, int64_t e, int64_t *out)
{
    int64_t r = 1;
    while (e > 0) {
        if (e & 1) {
            if (__builtin_mul_overflow(r, base, &r))
                return false;
        }
        e >>= 1;
        if (e == 0)
            break;
        if (__builtin_mul_overflow(base, base, &base))
            return false;
    }
    *out = r;
    return true;
}

/* pow(a, b): integer when both are integers and b >= 0 (error if it does not
 * fit int64; HTCondor rounds through a double and so gets pow(-2, 3) = -7),
 * else the real power of real(a) and real(b). */
static void fn_pow(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                   const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value a = arg(cx, view, args, 0), b = arg(cx, view, args, 1);
    if (a.type == ADS_INTEGER && b.type == ADS_INTEGER && b.u.i >= 0) {
        int64_t r;
        *out = int_pow(a.u.i, b.u.i, &r) ? ads_int(r) : ads_errorv();
        return;
    }
    double x, y;
    if (!to_real(&x, cx, &a) || !to_real(&y, cx, &b)) {
        *out = ads_errorv();
        return;
    }
    *out = ads_real(pow(x, y));
}

/* ceiling(a / b) * b exactly, b != 0; error if it does not fit int64. */
/* quantize of integers as HTCondor computes it: (a + b - 1) / b * b with
 * C's division, which truncates toward zero. So it is the least multiple of
 * b >= a when both are positive, and otherwise what that formula gives
 * (quantize(-7, 3) is -3, quantize(7, -3) is 3). A step that overflows
 * 64 bits is error (HTCondor's is undefined behaviour). */
static ads_value quantize_int(int64_t a, int64_t b)
{
    int64_t bm1, n, m;
    if (__builtin_sub_overflow(b, 1, &bm1) || __builtin_add_overflow(a, bm1, &n) ||
        (n == INT64_MIN && b == -1))
        return ads_errorv();
    if (__builtin_mul_overflow(n / b, b, &m))
        return ads_errorv();
    return ads_int(m);
}

/*
 * quantize(a, b): the least multiple of b that is >= a (as ceiling(a/b)*b),
 * integer when a and b are integers (then by HTCondor's formula,
 * quantize_int, which differs for a negative a or b). When b is a list, the first member >= a
 * is the answer, else the last member is used as b ({} as 0). A base of 0
 * returns a unchanged.
 */
static void fn_quantize(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                        const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value a = arg(cx, view, args, 0), b = arg(cx, view, args, 1);
    double ra, rb;
    if (!to_real(&ra, cx, &a)) {
        *out = ads_errorv();
        return;
    }
    if (b.type == ADS_LIST) {
        ads_value last = ads_real(0.0);
        for (size_t i = 0; i < b.u.list.n; i++) {
            const ads_value *it = &b.u.list.items[i];
            if (!to_real(&rb, cx, it)) {
                *out = ads_errorv();
                return;
            }
            if (rb >= ra) {
                *out = *it;
                return;
            }
            last = *it;
        }
        b = last;
    }
    if (!to_real(&rb, cx, &b)) {
        *out = ads_errorv();
        return;
    }
    if (b.type == ADS_INTEGER) {
        if (b.u.i == 0)
            *out = a;
        else if (a.type == ADS_INTEGER)
            *out = quantize_int(a.u.i, b.u.i);
        else
            *out = ads_real(ceil(ra / rb) * rb);
        return;
    }
    if (fabs(rb) <= 1e-8)
        *out = a;
    else
        *out = ads_real(ceil(ra / rb) * rb);
}

/* 64 random bits from the kernel; if that fails, from the clock, mixed. */
static uint64_t random_bits(void)
{
    uint64_t x;
    if (getrandom(&x, sizeof x, GRND_NONBLOCK) == (ssize_t)sizeof x)
        return x;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    x = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&ts;
    x += 0x9e3779b97f4a7c15u; /* splitmix64's finaliser */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* random() is a real in [0, 1); random(n) an integer in [0, n) for an
 * integer n > 0, a real in [0, x) for a finite real x > 0; else error. */
static void fn_random(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, size_t n)
{
    ads_value v = n == 0 ? ads_real(1.0) : arg(cx, view, args, 0);
    if (v.type == ADS_INTEGER && v.u.i > 0) {
        /* reject the low 2^64 mod n values so every residue is equally likely */
        uint64_t un = (uint64_t)v.u.i, low = (0 - un) % un, x;
        do
            x = random_bits();
        while (x < low);
        *out = ads_int((int64_t)(x % un));
    } else if (v.type == ADS_REAL && v.u.r > 0 && isfinite(v.u.r)) {
        double r = (double)(random_bits() >> 11) * 0x1p-53 * v.u.r;
        if (r >= v.u.r) /* rounding can reach the bound */
            r = nextafter(v.u.r, 0.0);
        *out = ads_real(r);
    } else {
        *out = ads_errorv();
    }
}

/* ------------------------------------------------------------------------ */
/* Strings: join substr strcmp stricmp toUpper toLower                      */
/* ------------------------------------------------------------------------ */

/*
 * join(sep, a, b, ...), join(sep, list), join(list): the texts of the items
 * (as string() makes them) with sep between. Undefined items are skipped
 * (an undefined sep counts as ""); undefined if nothing but undefined was
 * given; error if any item or sep is error or has no text. As in HTCondor,
 * sep goes between items only once the text so far is not empty.
 */
static void fn_join(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, size_t n)
{
    if (n == 0) {
        *out = ads_string("", 0);
        return;
    }
    ads_value *v = ads_eval__alloc(cx, n * sizeof *v);
    if (!v) {
        *out = ads_errorv();
        return;
    }
    eval_args(v, n, cx, view, args, n);
    ads_value sep = v[0], empty = ads_string("", 0);
    const ads_value *items = v + 1;
    size_t count = n - 1;
    if (n <= 2 && v[n - 1].type == ADS_LIST) {
        sep = n == 2 ? v[0] : empty;
        items = v[n - 1].u.list.items;
        count = v[n - 1].u.list.n;
    }
    ads_buf b = ADS_BUF_INIT;
    ads_str sep_text = {"", 0};
    bool undefined = false, defined = false;
    ads_vtype t = text_of(&sep_text, cx, &sep);
    if (t == ADS_ERROR) {
        *out = ads_errorv();
        return;
    }
    if (t == ADS_UNDEFINED) {
        undefined = true;
        sep_text = empty.u.s;
    }
    for (size_t i = 0; i < count; i++) {
        if (items[i].type == ADS_UNDEFINED) {
            undefined = true;
            continue;
        }
        if (items[i].type == ADS_ERROR) {
            *out = ads_errorv();
            goto done;
        }
        if (b.len > 0)
            ads_buf_add(&b, sep_text.p, sep_text.len);
        if (!append_text(&b, &items[i])) {
            *out = ads_errorv();
            goto done;
        }
        defined = true;
    }
    if (undefined && !defined) {
        *out = ads_undefined();
        goto done;
    }
    finish_string(out, cx, &b);
done:
    ads_buf_free(&b);
}

/* -x for x < 0 as an unsigned count, without overflowing at INT64_MIN. */
static uint64_t magnitude(int64_t x)
{
    return (uint64_t)(-(x + 1)) + 1;
}

/*
 * substr(s, offset [, length]), Perl-like: a negative offset counts from the
 * end, a negative length leaves that many bytes off the end, and the part
 * that falls outside s is dropped. Undefined if any argument is undefined
 * (checked first, as HTCondor does), else error unless s is a string and
 * offset and length are integers.
 */
static void fn_substr(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, size_t n)
{
    ads_value v[3];
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, n);
    for (size_t i = 0; i < n; i++)
        if (v[i].type == ADS_UNDEFINED) {
            *out = ads_undefined();
            return;
        }
    if (v[0].type != ADS_STRING || v[1].type != ADS_INTEGER ||
        (n == 3 && v[2].type != ADS_INTEGER)) {
        *out = ads_errorv();
        return;
    }
    uint64_t len = v[0].u.s.len, start, count;
    int64_t off = v[1].u.i;
    if (off < 0)
        start = magnitude(off) >= len ? 0 : len - magnitude(off);
    else
        start = (uint64_t)off >= len ? len : (uint64_t)off;
    uint64_t rest = len - start;
    if (n < 3) {
        count = rest;
    } else {
        int64_t want = v[2].u.i;
        if (want >= 0)
            count = (uint64_t)want > rest ? rest : (uint64_t)want;
        else
            count = magnitude(want) >= rest ? 0 : rest - magnitude(want);
    }
    *out = count ? ads_string(v[0].u.s.p + start, (size_t)count) : ads_string("", 0);
}

/* strcmp(a, b) / stricmp(a, b): -1, 0 or 1 comparing the texts (string()
 * of each) byte-wise, case-sensitively or not. Undefined if either is
 * undefined (before error, as HTCondor checks). */
static void compare_strings(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                            const ads_expr *const *args, bool fold)
{
    ads_value a = arg(cx, view, args, 0), b = arg(cx, view, args, 1);
    ads_str x, y;
    if (a.type == ADS_UNDEFINED || b.type == ADS_UNDEFINED) {
        *out = ads_undefined();
        return;
    }
    if (text_of(&x, cx, &a) != ADS_STRING || text_of(&y, cx, &b) != ADS_STRING) {
        *out = ads_errorv();
        return;
    }
    int c = fold ? ads_value__strcmp_fold(x, y) : cmp_exact(x, y);
    *out = ads_int(c < 0 ? -1 : c > 0);
}

static void fn_strcmp(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, size_t n)
{
    (void)n;
    compare_strings(out, cx, view, args, false);
}

static void fn_stricmp(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                       const ads_expr *const *args, size_t n)
{
    (void)n;
    compare_strings(out, cx, view, args, true);
}

/* toUpper(x) / toLower(x): the text of x (string()) with ASCII letters
 * changed; undefined and error pass through. */
static void change_case(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                        const ads_expr *const *args, bool upper)
{
    ads_value v = arg(cx, view, args, 0);
    ads_str s;
    ads_vtype t = text_of(&s, cx, &v);
    if (t != ADS_STRING) {
        *out = t == ADS_UNDEFINED ? ads_undefined() : ads_errorv();
        return;
    }
    char *p = ads_eval__alloc(cx, s.len + 1);
    if (!p) {
        *out = ads_errorv();
        return;
    }
    for (size_t i = 0; i < s.len; i++) {
        char c = s.p[i];
        if (upper && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        else if (!upper && c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        p[i] = c;
    }
    p[s.len] = '\0';
    *out = ads_string(p, s.len);
}

static void fn_to_upper(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                        const ads_expr *const *args, size_t n)
{
    (void)n;
    change_case(out, cx, view, args, true);
}

static void fn_to_lower(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                        const ads_expr *const *args, size_t n)
{
    (void)n;
    change_case(out, cx, view, args, false);
}

/* ------------------------------------------------------------------------ */
/* Version comparison: versioncmp versionGT/GE/LT/LE/EQ version_in_range    */
/* ------------------------------------------------------------------------ */

/* s up to its first NUL byte: the comparison is defined on C strings. */
static ads_str c_string(ads_str s)
{
    const char *nul = s.len ? memchr(s.p, '\0', s.len) : NULL;
    if (nul)
        s.len = (size_t)(nul - s.p);
    return s;
}

/* The byte at i, or 0 past the end (the C string's terminator). */
static unsigned char byte_at(ads_str s, size_t i)
{
    return i < s.len ? (unsigned char)s.p[i] : 0;
}

/* Leading zeros of the digit run at k, a lone final 0 not counted. */
static size_t leading_zeros(ads_str s, size_t k)
{
    size_t z = 0;
    while (byte_at(s, k + z) == '0')
        z++;
    if (z > 0 && !is_digit(byte_at(s, k + z)))
        z--;
    return z;
}

static size_t digit_run(ads_str s, size_t k)
{
    size_t n = 0;
    while (is_digit(byte_at(s, k + n)))
        n++;
    return n;
}

/*
 * The version order of HTCondor's natural_cmp (that of strverscmp(3)):
 * byte-wise, except where the first difference lies in a run of digits, which
 * then compare as numbers, more leading zeros sorting first ("000" < "00" <
 * "01" < "010" < "09" < "0" < "1" < "9" < "10"). Returns what HTCondor
 * returns: negative, zero or positive, not only -1/0/1.
 */
static int64_t version_cmp(ads_str a, ads_str b)
{
    a = c_string(a);
    b = c_string(b);
    size_t i = 0;
    while (i < a.len && i < b.len && a.p[i] == b.p[i])
        i++;
    int ca = byte_at(a, i), cb = byte_at(b, i);
    if (ca == cb)
        return 0;
    size_t k = i; /* where the digit run reaching the difference starts */
    while (k > 0 && is_digit((unsigned char)a.p[k - 1]))
        k--;
    if (k == i && !(is_digit((unsigned char)ca) && is_digit((unsigned char)cb)))
        return ca - cb;
    size_t za = leading_zeros(a, k), zb = leading_zeros(b, k);
    if (za != zb)
        return (int64_t)zb - (int64_t)za;
    if (za > 0)
        return ca - cb;
    size_t la = digit_run(a, k), lb = digit_run(b, k);
    if (la != lb)
        return (int64_t)la - (int64_t)lb;
    return ca - cb;
}

typedef enum version_op { V_CMP, V_GT, V_GE, V_LT, V_LE, V_EQ } version_op;

/* Undefined if either side is undefined; the sides compare as texts
 * (string()), error if either has none. */
static void compare_versions(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                             const ads_expr *const *args, version_op op)
{
    ads_value a = arg(cx, view, args, 0), b = arg(cx, view, args, 1);
    ads_str x, y;
    if (a.type == ADS_UNDEFINED || b.type == ADS_UNDEFINED) {
        *out = ads_undefined();
        return;
    }
    if (text_of(&x, cx, &a) != ADS_STRING || text_of(&y, cx, &b) != ADS_STRING) {
        *out = ads_errorv();
        return;
    }
    int64_t r = version_cmp(x, y);
    switch (op) {
    case V_CMP:
        *out = ads_int(r);
        return;
    case V_GT:
        *out = ads_bool(r > 0);
        return;
    case V_GE:
        *out = ads_bool(r >= 0);
        return;
    case V_LT:
        *out = ads_bool(r < 0);
        return;
    case V_LE:
        *out = ads_bool(r <= 0);
        return;
    default:
        *out = ads_bool(r == 0);
    }
}

#define VERSION_FN(fname, op)                                                                      \
    static void fname(ads_value *out, ads_eval_ctx *cx, const ads_view *view,                      \
                      const ads_expr *const *args, size_t n)                                       \
    {                                                                                              \
        (void)n;                                                                                   \
        compare_versions(out, cx, view, args, op);                                                 \
    }

VERSION_FN(fn_versioncmp, V_CMP)
VERSION_FN(fn_version_gt, V_GT)
VERSION_FN(fn_version_ge, V_GE)
VERSION_FN(fn_version_lt, V_LT)
VERSION_FN(fn_version_le, V_LE)
VERSION_FN(fn_version_eq, V_EQ)

/* version_in_range(v, lo, hi): versionLE(lo, v) && versionLE(v, hi).
 * Undefined if lo or hi is undefined; an undefined v is error (it has no
 * text), as in HTCondor. */
static void fn_version_in_range(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                                const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v[3];
    ads_str t[3];
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, 3);
    if (v[1].type == ADS_UNDEFINED || v[2].type == ADS_UNDEFINED) {
        *out = ads_undefined();
        return;
    }
    for (int i = 0; i < 3; i++)
        if (text_of(&t[i], cx, &v[i]) != ADS_STRING) {
            *out = ads_errorv();
            return;
        }
    *out = ads_bool(version_cmp(t[1], t[0]) <= 0 && version_cmp(t[0], t[2]) <= 0);
}

/* ------------------------------------------------------------------------ */
/* String lists: "a, b, c" with a set of delimiter characters               */
/* ------------------------------------------------------------------------ */

/* Items are the runs between delimiter characters; empty ones are skipped,
 * and with trim white space around each is dropped too. */
typedef struct tokenizer {
    ads_str s, delims;
    size_t pos;
    bool trim;
} tokenizer;

static tokenizer tokens_of(ads_str s, ads_str delims, bool trim)
{
    tokenizer t = {s, delims, 0, trim};
    return t;
}

static bool is_delim(const tokenizer *t, unsigned char c)
{
    return t->delims.len > 0 && memchr(t->delims.p, c, t->delims.len) != NULL;
}

/* The next item into *tok; false at the end. */
static bool next_token(tokenizer *t, ads_str *tok)
{
    const char *s = t->s.p;
    size_t i = t->pos, n = t->s.len;
    while (i < n &&
           (is_delim(t, (unsigned char)s[i]) || (t->trim && is_space((unsigned char)s[i]))))
        i++;
    if (i >= n) {
        t->pos = n;
        return false;
    }
    size_t start = i, end = i;
    while (i < n && !is_delim(t, (unsigned char)s[i])) {
        i++;
        if (!t->trim || !is_space((unsigned char)s[i - 1]))
            end = i;
    }
    t->pos = i;
    tok->p = s + start;
    tok->len = end - start;
    return true;
}

static int qcmp_exact(const void *a, const void *b)
{
    return cmp_exact(*(const ads_str *)a, *(const ads_str *)b);
}

static int qcmp_fold(const void *a, const void *b)
{
    return ads_value__strcmp_fold(*(const ads_str *)a, *(const ads_str *)b);
}

/* The items of s sorted (for membership tests in n log n rather than n*m):
 * 0, or -1 when out of memory (cx->oom set). */
static int sorted_tokens(ads_str **items, size_t *count, ads_eval_ctx *cx, tokenizer t,
                         int (*cmp)(const void *, const void *))
{
    tokenizer c = t;
    ads_str tok;
    size_t n = 0;
    while (next_token(&c, &tok))
        n++;
    ads_str *v = ads_eval__alloc(cx, (n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    n = 0;
    while (next_token(&t, &tok))
        v[n++] = tok;
    if (n > 1)
        qsort(v, n, sizeof *v, cmp);
    *items = v;
    *count = n;
    return 0;
}

static bool in_sorted(const ads_str *items, size_t n, ads_str key,
                      int (*cmp)(const void *, const void *))
{
    return n > 0 && bsearch(&key, items, n, sizeof *items, cmp) != NULL;
}

/*
 * stringListsIntersect(a, b [, delims]): true if some item of a is also an
 * item of b (case-sensitive). Items are not trimmed; an empty delimiter set
 * means the default " ,". Error if anything is error, else undefined if
 * anything is undefined, else error unless all are strings.
 */
static void fn_string_lists_intersect(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                                      const ads_expr *const *args, size_t n)
{
    ads_value v[3];
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, n);
    if (strict_args(out, v, n))
        return;
    if (v[0].type != ADS_STRING || v[1].type != ADS_STRING || (n == 3 && v[2].type != ADS_STRING)) {
        *out = ads_errorv();
        return;
    }
    ads_str delims = n == 3 && v[2].u.s.len > 0 ? v[2].u.s : str_of(" ,");
    ads_str *set, tok;
    size_t count;
    if (sorted_tokens(&set, &count, cx, tokens_of(v[1].u.s, delims, false), qcmp_exact)) {
        *out = ads_errorv();
        return;
    }
    tokenizer t = tokens_of(v[0].u.s, delims, false);
    *out = ads_bool(false);
    while (next_token(&t, &tok))
        if (in_sorted(set, count, tok, qcmp_exact)) {
            *out = ads_bool(true);
            return;
        }
}

/* One item of a number list: its value as strtod reads a prefix of it, and,
 * when it is made only of "+-0123456789", as an integer too. */
typedef struct number_item {
    double r;
    int64_t i;
    bool integral;
    bool overflow; /* integral, but outside int64 */
} number_item;

/* 0, or -1 if tok does not start with a number (cx->oom set if memory ran out). */
static int parse_number_item(number_item *it, ads_eval_ctx *cx, ads_str tok)
{
    char small[64], *s = small;
    if (tok.len >= sizeof small) {
        s = ads_arena_strndup(cx->arena, tok.p, tok.len);
        if (!s) {
            cx->oom = true;
            return -1;
        }
    } else {
        memcpy(small, tok.p, tok.len);
        small[tok.len] = '\0';
    }
    char *end;
    it->r = ads_strtod_c(s, &end);
    if (end == s)
        return -1;
    it->integral = strspn(s, "+-0123456789") == tok.len;
    it->overflow = false;
    it->i = 0;
    if (it->integral) {
        /* the integer strtod saw: an optional sign, then digits */
        size_t k = 0;
        bool neg = s[0] == '-';
        if (s[0] == '+' || s[0] == '-')
            k = 1;
        for (; is_digit((unsigned char)s[k]); k++) {
            int d = s[k] - '0';
            bool over = __builtin_mul_overflow(it->i, 10, &it->i);
            over |= __builtin_add_overflow(it->i, neg ? -d : d, &it->i);
            it->overflow = it->overflow || over;
        }
    }
    return 0;
}

typedef enum summary { SUM_SUM, SUM_AVG, SUM_MIN, SUM_MAX } summary;

/*
 * stringListSum/Avg/Min/Max(list [, delims]): over the items of a string list
 * (default delimiters ", ", items trimmed). Items that do not start with a
 * number make it error. The result is an integer if every item is made of
 * "+-0123456789" only, else a real; an integer result that does not fit int64
 * is error. Avg of integers is their sum divided and truncated (as HTCondor
 * computes it). An empty list sums and averages to 0.0; its min and max are
 * undefined. Both arguments must be strings (undefined is error).
 * HTCondor starts min and max from FLT_MAX and FLT_MIN, so stringListMax("-5")
 * gives 0 there; here they are the least and greatest item.
 */
static void string_list_summary(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                                const ads_expr *const *args, size_t n, summary kind)
{
    ads_value v[2];
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, n);
    if (v[0].type != ADS_STRING || (n == 2 && v[1].type != ADS_STRING)) {
        *out = ads_errorv();
        return;
    }
    tokenizer t = tokens_of(v[0].u.s, n == 2 ? v[1].u.s : str_of(", "), true);
    ads_str tok;
    size_t count = 0;
    bool real = false, overflow = false;
    double racc = 0;
    int64_t iacc = 0;
    while (next_token(&t, &tok)) {
        number_item it;
        if (parse_number_item(&it, cx, tok)) {
            *out = ads_errorv();
            return;
        }
        real = real || !it.integral;
        overflow = overflow || it.overflow;
        if (count == 0) {
            racc = it.r;
            iacc = it.i;
        } else if (kind == SUM_SUM || kind == SUM_AVG) {
            racc += it.r;
            if (__builtin_add_overflow(iacc, it.i, &iacc))
                overflow = true;
        } else if (kind == SUM_MIN) {
            racc = it.r < racc ? it.r : racc;
            iacc = it.i < iacc ? it.i : iacc;
        } else {
            racc = it.r > racc ? it.r : racc;
            iacc = it.i > iacc ? it.i : iacc;
        }
        count++;
    }
    if (count == 0) {
        *out = kind == SUM_SUM || kind == SUM_AVG ? ads_real(0.0) : ads_undefined();
        return;
    }
    if (real)
        *out = ads_real(kind == SUM_AVG ? racc / (double)count : racc);
    else if (overflow)
        *out = ads_errorv();
    else
        *out = ads_int(kind == SUM_AVG ? iacc / (int64_t)count : iacc);
}

#define SUMMARY_FN(fname, kind)                                                                    \
    static void fname(ads_value *out, ads_eval_ctx *cx, const ads_view *view,                      \
                      const ads_expr *const *args, size_t n)                                       \
    {                                                                                              \
        string_list_summary(out, cx, view, args, n, kind);                                         \
    }

SUMMARY_FN(fn_string_list_sum, SUM_SUM)
SUMMARY_FN(fn_string_list_avg, SUM_AVG)
SUMMARY_FN(fn_string_list_min, SUM_MIN)
SUMMARY_FN(fn_string_list_max, SUM_MAX)

/* stringListSize(list [, delims]): the number of items (default ", ",
 * trimmed, empty ones skipped); error unless both are strings. */
static void fn_string_list_size(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                                const ads_expr *const *args, size_t n)
{
    ads_value v[2];
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, n);
    if (v[0].type != ADS_STRING || (n == 2 && v[1].type != ADS_STRING)) {
        *out = ads_errorv();
        return;
    }
    tokenizer t = tokens_of(v[0].u.s, n == 2 ? v[1].u.s : str_of(", "), true);
    ads_str tok;
    int64_t count = 0;
    while (next_token(&t, &tok))
        count++;
    *out = ads_int(count);
}

typedef enum list_test { LT_MEMBER, LT_IMEMBER, LT_SUBSET, LT_ISUBSET } list_test;

/*
 * stringListMember(x, list [, delims]) and stringListIMember: x is an item of
 * list (items trimmed; default delimiters ", \t\r\n"; the I form ignores
 * case). stringListSubsetMatch(a, b [, delims]) and stringListISubsetMatch:
 * every item of a is an item of b; an empty a is a subset of anything.
 * Each argument must be a string or undefined (else error); undefined
 * counts as "" (an undefined delims as the default), and both lists
 * undefined gives undefined. As in HTCondor, an a that holds only
 * delimiters (",") has no item to match and gives false.
 */
static void string_list_test(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                             const ads_expr *const *args, size_t n, list_test kind)
{
    ads_value v[3];
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, n);
    for (size_t i = 0; i < n; i++)
        if (v[i].type != ADS_STRING && v[i].type != ADS_UNDEFINED) {
            *out = ads_errorv();
            return;
        }
    if (v[0].type == ADS_UNDEFINED && v[1].type == ADS_UNDEFINED) {
        *out = ads_undefined();
        return;
    }
    ads_str x = v[0].type == ADS_STRING ? v[0].u.s : str_of("");
    ads_str list = v[1].type == ADS_STRING ? v[1].u.s : str_of("");
    ads_str delims = n == 3 && v[2].type == ADS_STRING ? v[2].u.s : str_of(", \t\r\n");
    bool fold = kind == LT_IMEMBER || kind == LT_ISUBSET;
    int (*cmp)(const void *, const void *) = fold ? qcmp_fold : qcmp_exact;
    tokenizer t = tokens_of(list, delims, true);
    ads_str tok;
    if (kind == LT_MEMBER || kind == LT_IMEMBER) {
        *out = ads_bool(false);
        while (next_token(&t, &tok))
            if (cmp(&tok, &x) == 0) {
                *out = ads_bool(true);
                return;
            }
        return;
    }
    if (x.len == 0) {
        *out = ads_bool(true);
        return;
    }
    ads_str *set;
    size_t count;
    if (sorted_tokens(&set, &count, cx, t, cmp)) {
        *out = ads_errorv();
        return;
    }
    tokenizer items = tokens_of(x, delims, true);
    bool all = false;
    while (next_token(&items, &tok)) {
        all = in_sorted(set, count, tok, cmp);
        if (!all)
            break;
    }
    *out = ads_bool(all);
}

#define LIST_TEST_FN(fname, kind)                                                                  \
    static void fname(ads_value *out, ads_eval_ctx *cx, const ads_view *view,                      \
                      const ads_expr *const *args, size_t n)                                       \
    {                                                                                              \
        string_list_test(out, cx, view, args, n, kind);                                            \
    }

LIST_TEST_FN(fn_string_list_member, LT_MEMBER)
LIST_TEST_FN(fn_string_list_imember, LT_IMEMBER)
LIST_TEST_FN(fn_string_list_subset_match, LT_SUBSET)
LIST_TEST_FN(fn_string_list_isubset_match, LT_ISUBSET)

/* Append an item of split()'s result, or just count it when items is NULL. */
static void split_emit(ads_value *items, size_t *n, const char *p, size_t len)
{
    if (items)
        items[*n] = ads_string(p, len);
    (*n)++;
}

/* One pass of split(): the items of s into items (NULL: count only). */
static size_t split_pass(ads_value *items, ads_str s, ads_str seps)
{
    size_t n = 0, last = 0;
    int prev = -1; /* the last separator seen that is not white space */
    for (size_t i = 0; seps.len > 0 && i < s.len; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (!memchr(seps.p, c, seps.len))
            continue;
        if (i > last)
            split_emit(items, &n, s.p + last, i - last);
        else if (prev == c)
            split_emit(items, &n, s.p + i, 0);
        if (!is_space(c))
            prev = c;
        last = i + 1;
    }
    if (s.len > last)
        split_emit(items, &n, s.p + last, s.len - last);
    return n;
}

/*
 * split(s [, seps]): the list of the pieces of s between separator
 * characters (default ", \t"). As in HTCondor, empty pieces are dropped except
 * between two of the same non-space separator: "a,,b" is {"a", "", "b"}, but
 * "a, b" is {"a", "b"}. Error unless both are strings.
 */
static void fn_split(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                     const ads_expr *const *args, size_t n)
{
    ads_value s = arg(cx, view, args, 0);
    ads_value seps = n == 2 ? arg(cx, view, args, 1) : ads_string(", \t", 3);
    if (s.type != ADS_STRING || seps.type != ADS_STRING) {
        *out = ads_errorv();
        return;
    }
    size_t count = split_pass(NULL, s.u.s, seps.u.s);
    ads_value *items = ads_eval__alloc(cx, (count ? count : 1) * sizeof *items);
    if (!items) {
        *out = ads_errorv();
        return;
    }
    split_pass(items, s.u.s, seps.u.s);
    *out = ads_list(items, count);
}

/* ------------------------------------------------------------------------ */
/* Regular expressions (PCRE2)                                              */
/* ------------------------------------------------------------------------ */

/*
 * The options string, one letter each, others ignored (for forward
 * compatibility, as HTCondor does):
 *   i  case-insensitive (PCRE2_CASELESS)
 *   m  ^ and $ also match at line breaks inside the target (PCRE2_MULTILINE)
 *   s  . also matches a newline (PCRE2_DOTALL)
 *   x  white space and # comments in the pattern are ignored (PCRE2_EXTENDED)
 *   f  substitutions only: the result is the full target with the matched
 *      part(s) replaced, rather than the replacement text alone
 *   g  substitutions only: replace every non-overlapping match, not just the
 *      first
 * regexp, regexpMember, regexps, replace and replaceAll read the lower-case
 * letters only, as HTCondor's fnCall.cpp does; stringList_regexpMember reads
 * either case, as HTCondor's version of it does.
 */
typedef struct regex_opts {
    uint32_t compile;
    bool full, global;
} regex_opts;

static regex_opts parse_regex_opts(ads_str s, bool any_case)
{
    regex_opts o = {0, false, false};
    for (size_t i = 0; i < s.len; i++) {
        char c = s.p[i];
        if (any_case && c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        switch (c) {
        case 'i':
            o.compile |= PCRE2_CASELESS;
            break;
        case 'm':
            o.compile |= PCRE2_MULTILINE;
            break;
        case 's':
            o.compile |= PCRE2_DOTALL;
            break;
        case 'x':
            o.compile |= PCRE2_EXTENDED;
            break;
        case 'f':
            o.full = true;
            break;
        case 'g':
            o.global = true;
            break;
        default:
            break;
        }
    }
    return o;
}

/* regexp(pattern, target [, options]): true if the pattern matches somewhere
 * in target. Error if anything is error, else undefined if anything is
 * undefined, else error unless all are strings; error for an invalid
 * pattern and for a match that hits the limits. */
static void fn_regexp(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, size_t n)
{
    ads_value v[3];
    ads_regex re;
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, n);
    if (strict_args(out, v, n))
        return;
    if (v[0].type != ADS_STRING || v[1].type != ADS_STRING || (n == 3 && v[2].type != ADS_STRING)) {
        *out = ads_errorv();
        return;
    }
    regex_opts o = parse_regex_opts(n == 3 ? v[2].u.s : str_of(""), false);
    if (ads_regex__open(&re, cx, v[0].u.s, o.compile)) {
        *out = ads_errorv();
        return;
    }
    int rc = ads_regex__match(&re, cx, v[1].u.s, 0, 0);
    *out = rc > 0 ? ads_bool(true) : rc == PCRE2_ERROR_NOMATCH ? ads_bool(false) : ads_errorv();
    ads_regex__close(&re);
}

/*
 * regexpMember(pattern, list [, options]): true if the pattern matches some
 * string of the list; else undefined if some member was undefined, else
 * false. A member that is neither a string nor undefined, met before a
 * match, makes it error. Argument rules as regexp's, with list a list.
 * HTCondor answers false (not error) for an invalid pattern here, because its
 * per-member result is dropped; here an invalid pattern or a match over the
 * limits is error, as in regexp.
 */
static void fn_regexp_member(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                             const ads_expr *const *args, size_t n)
{
    ads_value v[3];
    ads_regex re;
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, n);
    if (strict_args(out, v, n))
        return;
    if (v[0].type != ADS_STRING || v[1].type != ADS_LIST || (n == 3 && v[2].type != ADS_STRING)) {
        *out = ads_errorv();
        return;
    }
    regex_opts o = parse_regex_opts(n == 3 ? v[2].u.s : str_of(""), false);
    if (ads_regex__open(&re, cx, v[0].u.s, o.compile)) {
        *out = ads_errorv();
        return;
    }
    bool undefined = false;
    *out = ads_bool(false);
    for (size_t i = 0; i < v[1].u.list.n; i++) {
        const ads_value *it = &v[1].u.list.items[i];
        if (it->type == ADS_UNDEFINED) {
            undefined = true;
            continue;
        }
        if (it->type != ADS_STRING) {
            *out = ads_errorv();
            goto done;
        }
        int rc = ads_regex__match(&re, cx, it->u.s, 0, 0);
        if (rc > 0) {
            *out = ads_bool(true);
            goto done;
        }
        if (rc != PCRE2_ERROR_NOMATCH) {
            *out = ads_errorv();
            goto done;
        }
    }
    if (undefined)
        *out = ads_undefined();
done:
    ads_regex__close(&re);
}

/* Append the replacement text for one match: "\0" .. "\9" stand for the
 * groups, any other backslash is itself. False if it names a group beyond
 * the highest one the match set (groups is pcre2_match's count). */
static bool expand_replacement(ads_buf *b, ads_str repl, ads_str subject, const PCRE2_SIZE *ov,
                               int groups)
{
    for (size_t i = 0; i < repl.len; i++) {
        char c = repl.p[i];
        if (c == '\\' && i + 1 < repl.len && is_digit((unsigned char)repl.p[i + 1])) {
            int g = repl.p[i + 1] - '0';
            if (g >= groups)
                return false;
            PCRE2_SIZE s = ov[2 * g], e = ov[2 * g + 1];
            if (s != PCRE2_UNSET && s <= e && e <= subject.len)
                ads_buf_add(b, subject.p + s, e - s);
            i++;
        } else {
            ads_buf_addc(b, c);
        }
    }
    return true;
}

/*
 * regexps(pattern, target, replacement [, options]) and replace (options plus
 * "f") and replaceAll (plus "fg"): the replacement text for the first match
 * ("" if none), with "f" the whole target with the match replaced (target
 * unchanged if none), with "g" every match. After an empty match the next
 * one is looked for at the same place but must not be empty there, else the
 * search moves one byte on (the usual global-substitution rule; HTCondor
 * instead steps past the end of the target and answers error whenever the
 * pattern can match the empty string at the end). Argument rules as
 * regexp's; error if the replacement names a group that did not take part
 * beyond the last one set, or the result would exceed ADS_MAX_TEXT.
 */
static void substitute(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                       const ads_expr *const *args, size_t n, const char *extra)
{
    ads_value v[4];
    ads_regex re;
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, n);
    if (strict_args(out, v, n))
        return;
    if (v[0].type != ADS_STRING || v[1].type != ADS_STRING || v[2].type != ADS_STRING ||
        (n == 4 && v[3].type != ADS_STRING)) {
        *out = ads_errorv();
        return;
    }
    regex_opts o = parse_regex_opts(n == 4 ? v[3].u.s : str_of(""), false);
    regex_opts more = parse_regex_opts(str_of(extra), false);
    o.full = o.full || more.full;
    o.global = o.global || more.global;
    if (ads_regex__open(&re, cx, v[0].u.s, o.compile)) {
        *out = ads_errorv();
        return;
    }
    ads_str subject = nonnull(v[1].u.s), repl = nonnull(v[2].u.s);
    ads_buf b = ADS_BUF_INIT;
    size_t pos = 0;
    uint32_t flags = 0;
    /* a statement's budget (base/budget.h) bounds the text and the time */
    ads_budget *budget = ads_arena_budget(cx->arena);
    for (;;) {
        if (!ads_budget_check(budget) || !ads_budget_room(budget, b.len))
            goto over_budget;
        int rc = ads_regex__match(&re, cx, subject, pos, flags);
        if (rc == PCRE2_ERROR_NOMATCH) {
            if (flags == 0 || pos >= subject.len)
                break;
            /* no non-empty match where the empty one was: move on a byte */
            if (o.full)
                ads_buf_addc(&b, subject.p[pos]);
            pos++;
            flags = 0;
            continue;
        }
        if (rc < 0)
            goto error;
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(re.md);
        /* \K can make a match end before it starts: refuse it */
        if (ov[0] < pos || ov[1] < ov[0] || ov[1] > subject.len)
            goto error;
        if (o.full)
            ads_buf_add(&b, subject.p + pos, ov[0] - pos);
        if (!expand_replacement(&b, repl, subject, ov, rc) || b.len > ADS_MAX_TEXT)
            goto error;
        pos = ov[1];
        if (!o.global)
            break;
        flags = ov[0] == ov[1] ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
    }
    if (o.full)
        ads_buf_add(&b, subject.p + pos, subject.len - pos);
    if (b.len > ADS_MAX_TEXT)
        goto error;
    ads_regex__close(&re);
    finish_string(out, cx, &b);
    return;
over_budget:
    if (budget && !budget->hit)
        budget->hit = ADS_BUDGET_MEMORY;
    cx->oom = true; /* the statement stops, saying which limit */
error:
    ads_regex__close(&re);
    ads_buf_free(&b);
    *out = ads_errorv();
}

static void fn_regexps(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                       const ads_expr *const *args, size_t n)
{
    substitute(out, cx, view, args, n, "");
}

static void fn_replace(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                       const ads_expr *const *args, size_t n)
{
    substitute(out, cx, view, args, n, "f");
}

static void fn_replace_all(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                           const ads_expr *const *args, size_t n)
{
    substitute(out, cx, view, args, n, "fg");
}

/*
 * stringList_regexpMember(pattern, list [, delims [, options]]): true if the
 * pattern matches some item of the string list (default ", ", trimmed);
 * undefined for a list with no items; error unless all are strings, for an
 * invalid pattern, or for a match over the limits.
 */
static void fn_string_list_regexp_member(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                                         const ads_expr *const *args, size_t n)
{
    ads_value v[4];
    ads_regex re;
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, n);
    for (size_t i = 0; i < n; i++)
        if (v[i].type != ADS_STRING) {
            *out = ads_errorv();
            return;
        }
    regex_opts o = parse_regex_opts(n == 4 ? v[3].u.s : str_of(""), true);
    if (ads_regex__open(&re, cx, v[0].u.s, o.compile)) {
        *out = ads_errorv();
        return;
    }
    tokenizer t = tokens_of(v[1].u.s, n >= 3 ? v[2].u.s : str_of(", "), true);
    ads_str tok;
    bool any = false;
    *out = ads_bool(false);
    while (next_token(&t, &tok)) {
        any = true;
        int rc = ads_regex__match(&re, cx, tok, 0, 0);
        if (rc > 0) {
            *out = ads_bool(true);
            break;
        }
        if (rc != PCRE2_ERROR_NOMATCH) {
            *out = ads_errorv();
            break;
        }
    }
    if (!any)
        *out = ads_undefined();
    ads_regex__close(&re);
}

/* ------------------------------------------------------------------------ */
/* unresolved: the references of an attribute that resolve to nothing      */
/* ------------------------------------------------------------------------ */

/*
 * unresolved(attr [, pattern]) follows the references of attribute attr's
 * expression without evaluating it, as HTCondor's (fnCall.cpp hasRefs, over
 * ClassAd::_GetExternalReferences) does: a name found in scope is followed
 * into its own expression, in the record where it was found; a name found
 * nowhere is unresolved; `base.name` whose base is undefined is unresolved
 * as written (less a leading "TARGET.", as HTCondor drops it), and whose base
 * is a record looks name up in that record only. Scopes are the evaluator's:
 * outward through the enclosing records, `.name` from the outermost, and
 * self, parent, toplevel and root when no attribute has that name. A base
 * that is a record (written in place, or held by an attribute) is followed
 * into, so references inside its members count; any other base counts for
 * the names it needs itself, and is not evaluated (HTCondor evaluates it).
 * Each attribute is followed once: circular references end there, and
 * shared ones cost once, so the walk is linear in what it reaches.
 */
typedef struct ref_name {
    ads_str name;
    size_t seq; /* order met: of names equal without case, the first is kept */
} ref_name;

typedef struct seen_attr {
    bool used;
    const void *self; /* the view's record */
    ads_str name;
    uint32_t hash;
} seen_attr;

typedef struct ref_walk {
    ads_eval_ctx *cx;
    bool collect; /* false while the argument itself is resolved */
    bool failed;  /* too deep, a record that cannot be read, or out of memory */
    ref_name *refs; /* the unresolved references met (arena) */
    size_t n, cap;
    seen_attr *seen; /* attributes followed: open addressing, cap a power of 2 */
    size_t nseen, seen_cap;
} ref_walk;

typedef enum base_kind { BASE_RECORD, BASE_UNDEFINED, BASE_OTHER } base_kind;

static void walk_refs(ref_walk *w, const ads_expr *e, const ads_view *view);
static base_kind resolve_base(ref_walk *w, const ads_expr *e, const ads_view *view,
                              const ads_view **out);

static void add_ref(ref_walk *w, ads_str name)
{
    if (!w->collect || w->failed)
        return;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        ref_name *p = ads_eval__alloc(w->cx, cap * sizeof *p);
        if (!p) {
            w->failed = true;
            return;
        }
        if (w->n)
            memcpy(p, w->refs, w->n * sizeof *p);
        w->refs = p;
        w->cap = cap;
    }
    w->refs[w->n].name = name;
    w->refs[w->n].seq = w->n;
    w->n++;
}

static size_t seen_slot(const void *self, uint32_t hash, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)self * 0x9E3779B97F4A7C15u ^ hash;
    return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* Mark attribute name of record self as followed: true the first time. */
static bool first_visit(ref_walk *w, const void *self, ads_str name, uint32_t hash)
{
    if ((w->nseen + 1) * 2 > w->seen_cap) {
        size_t cap = w->seen_cap ? w->seen_cap * 2 : 16;
        seen_attr *s = ads_eval__alloc(w->cx, cap * sizeof *s);
        if (!s) {
            w->failed = true;
            return false;
        }
        memset(s, 0, cap * sizeof *s);
        for (size_t i = 0; i < w->seen_cap; i++) {
            if (!w->seen[i].used)
                continue;
            size_t k = seen_slot(w->seen[i].self, w->seen[i].hash, cap);
            while (s[k].used)
                k = (k + 1) & (cap - 1);
            s[k] = w->seen[i];
        }
        w->seen = s;
        w->seen_cap = cap;
    }
    size_t k = seen_slot(self, hash, w->seen_cap);
    for (; w->seen[k].used; k = (k + 1) & (w->seen_cap - 1))
        if (w->seen[k].self == self && w->seen[k].hash == hash &&
            ads_name__eq(w->seen[k].name.p, w->seen[k].name.len, name.p, name.len))
            return false;
    w->seen[k].used = true;
    w->seen[k].self = self;
    w->seen[k].name = name;
    w->seen[k].hash = hash;
    w->nseen++;
    return true;
}

/* Look name up in view v, and outward through the enclosing views if
 * outward: 1 found (*where; *x its expression, or NULL and *lit its plain
 * value), 0 absent, -1 a record could not be read (w->failed set). */
static int find_attr(ref_walk *w, const ads_view *v, bool outward, ads_str name, uint32_t hash,
                     const ads_view **where, const ads_expr **x, ads_value *lit)
{
    for (; v; v = outward ? v->parent : NULL) {
        *x = NULL;
        int r = v->ops->lookup(v->self, name.p, name.len, hash, w->cx->arena, lit, x);
        if (r < 0) {
            w->failed = true;
            return -1;
        }
        if (r > 0) {
            *where = v;
            return 1;
        }
    }
    return 0;
}

/* If e is self (or MY), parent, toplevel or root and no attribute has that name: 1,
 * with *target the view it names (NULL for the parent of the outermost
 * record). Else 0. */
static int special_target(ref_walk *w, const ads_expr *e, const ads_view *view,
                          const ads_view **target)
{
    if (e->kind != N_ATTR || e->quoted || e->scope != SCOPE_NORMAL)
        return 0;
    ads_str nm = e->u.attr.name;
    const ads_view *t, *where;
    const ads_expr *x;
    ads_value lit;
    if (ads_name__eq(nm.p, nm.len, "self", 4) || ads_name__eq(nm.p, nm.len, "my", 2))
        t = view;
    else if (ads_name__eq(nm.p, nm.len, "parent", 6))
        t = view->parent;
    else if (ads_name__eq(nm.p, nm.len, "toplevel", 8) || ads_name__eq(nm.p, nm.len, "root", 4))
        t = w->cx->root;
    else
        return 0;
    if (find_attr(w, view, true, nm, e->u.attr.hash, &where, &x, &lit) != 0)
        return 0;
    *target = t;
    return 1;
}

/* Follow attribute name of where (its expression x, NULL for a plain value)
 * into that expression, the first time only. */
static void follow(ref_walk *w, const ads_view *where, ads_str name, uint32_t hash,
                   const ads_expr *x)
{
    if (x && w->collect && !w->failed && first_visit(w, where->self, name, hash))
        walk_refs(w, x, where);
}

/* BASE_RECORD with *out a view of record r (in the arena), enclosed by
 * parent; BASE_OTHER if memory ran out. */
static base_kind record_base(ref_walk *w, const ads_record *r, const ads_view *parent,
                             const ads_view **out)
{
    ads_view *v = ads_eval__alloc(w->cx, sizeof *v);
    if (!v) {
        w->failed = true;
        return BASE_OTHER;
    }
    *v = ads_record_view(r, parent);
    *out = v;
    return BASE_RECORD;
}

/*
 * The record the base e of `e.name` stands for (BASE_RECORD, *out its view),
 * or undefined, or anything else. Attribute names, selections and records
 * are followed through the tree (a nested record's members keep their
 * expressions). Nothing is evaluated: a base that is an expression, or an
 * attribute holding one, is BASE_OTHER, after the names it needs are
 * collected. (Evaluating it could call unresolved() again, and again.)
 */
static base_kind resolve_base_at(ref_walk *w, const ads_expr *e, const ads_view *view,
                                 const ads_view **out)
{
    while (e->kind == N_PAREN)
        e = e->u.ops.a;
    const ads_view *where, *b;
    const ads_expr *x;
    ads_value lit;
    ads_str name;
    uint32_t hash;
    int r;
    switch ((node_kind)e->kind) {
    case N_RECORD:
        return record_base(w, e->u.rec, view, out);
    case N_ATTR:
        if (special_target(w, e, view, out))
            return *out ? BASE_RECORD : BASE_UNDEFINED;
        name = e->u.attr.name;
        hash = e->u.attr.hash;
        r = find_attr(w, e->scope == SCOPE_ROOT ? w->cx->root : view, e->scope != SCOPE_ROOT,
                      name, hash, &where, &x, &lit);
        break;
    case N_SELECT:
        switch (resolve_base(w, e->u.sel.base, view, &b)) {
        case BASE_UNDEFINED:
            return BASE_UNDEFINED;
        case BASE_OTHER:
            return BASE_OTHER;
        default:
            break;
        }
        name = e->u.sel.name;
        hash = e->u.sel.hash;
        r = find_attr(w, b, false, name, hash, &where, &x, &lit);
        break;
    default:
        if (w->collect)
            walk_refs(w, e, view);
        return BASE_OTHER;
    }
    if (r <= 0)
        return r == 0 ? BASE_UNDEFINED : BASE_OTHER;
    if (!x) {
        if (lit.type == ADS_RECORD)
            return record_base(w, lit.u.rec, view, out);
        return lit.type == ADS_UNDEFINED ? BASE_UNDEFINED : BASE_OTHER;
    }
    const ads_expr *inner = x;
    while (inner->kind == N_PAREN)
        inner = inner->u.ops.a;
    if (inner->kind == N_RECORD)
        return record_base(w, inner->u.rec, where, out);
    follow(w, where, name, hash, x);
    return BASE_OTHER;
}

/* resolve_base_at within the depth limit (the recursion goes through it). */
static base_kind resolve_base(ref_walk *w, const ads_expr *e, const ads_view *view,
                              const ads_view **out)
{
    base_kind k = BASE_OTHER;
    if (++w->cx->depth > ADS_MAX_DEPTH)
        w->failed = true;
    else if (!w->failed)
        k = resolve_base_at(w, e, view, out);
    w->cx->depth--;
    return k;
}

/* `base.name` whose base is undefined: unresolved as written. */
static void add_selected_ref(ref_walk *w, const ads_expr *e)
{
    if (!w->collect || w->failed)
        return;
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse(&b, e->u.sel.base);
    ads_buf_addc(&b, '.');
    ads_buf_add(&b, nonnull(e->u.sel.name).p, e->u.sel.name.len);
    const char *p = ads_buf_cstr(&b);
    size_t len = b.len;
    if (len > 7 && ads_name__eq(p, 7, "target.", 7)) {
        p += 7;
        len -= 7;
    }
    char *copy = b.failed ? NULL : ads_eval__alloc(w->cx, len ? len : 1);
    if (copy) {
        memcpy(copy, p, len);
        ads_str s = {copy, len};
        add_ref(w, s);
    } else {
        w->failed = true;
    }
    ads_buf_free(&b);
}

static void walk_refs_at(ref_walk *w, const ads_expr *e, const ads_view *view)
{
    const ads_view *where, *b;
    const ads_expr *x;
    ads_value lit;
    int r;
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        return;
    case N_ATTR: {
        bool root = e->scope == SCOPE_ROOT;
        r = find_attr(w, root ? w->cx->root : view, !root, e->u.attr.name, e->u.attr.hash, &where,
                      &x, &lit);
        if (r > 0)
            follow(w, where, e->u.attr.name, e->u.attr.hash, x);
        else if (r == 0 && !special_target(w, e, view, &b))
            add_ref(w, e->u.attr.name);
        return;
    }
    case N_SELECT:
        switch (resolve_base(w, e->u.sel.base, view, &b)) {
        case BASE_RECORD:
            r = find_attr(w, b, false, e->u.sel.name, e->u.sel.hash, &where, &x, &lit);
            if (r > 0)
                follow(w, where, e->u.sel.name, e->u.sel.hash, x);
            else if (r == 0)
                add_ref(w, e->u.sel.name);
            return;
        case BASE_UNDEFINED:
            add_selected_ref(w, e);
            return;
        default:
            return;
        }
    case N_RECORD: {
        /* the members in the record's own scope, as evaluation sees them */
        ads_view inner = ads_record_view(e->u.rec, view);
        for (size_t i = 0; i < e->u.rec->n && !w->failed; i++)
            walk_refs(w, e->u.rec->exprs[i], &inner);
        return;
    }
    case N_BINARY:
    case N_AND:
    case N_OR: {
        /* a chain (classad_int.h): its operands left to right, in a loop */
        ads_spine s;
        ads_spine__init(&s);
        for (x = e; ads_expr__is_binop(x); x = x->u.ops.a)
            if (ads_spine__push(&s, x)) {
                w->failed = true;
                w->cx->oom = true;
                break;
            }
        if (!w->failed)
            walk_refs(w, x, view);
        for (size_t i = s.n; i-- > 0 && !w->failed;)
            walk_refs(w, s.nodes[i]->u.ops.b, view);
        ads_spine__free(&s);
        return;
    }
    default:
        for (size_t i = 0, n = ads_expr_nargs(e); i < n && !w->failed; i++)
            walk_refs(w, ads_expr_arg(e, i), view);
    }
}

/* Collect the unresolved references of e (in view), within the depth limit
 * that evaluation shares. */
static void walk_refs(ref_walk *w, const ads_expr *e, const ads_view *view)
{
    if (++w->cx->depth > ADS_MAX_DEPTH)
        w->failed = true;
    else if (!w->failed)
        walk_refs_at(w, e, view);
    w->cx->depth--;
}

static int ref_cmp(const void *a, const void *b)
{
    const ref_name *x = a, *y = b;
    int c = ads_value__strcmp_fold(x->name, y->name);
    return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * unresolved(attr): the unresolved references of attribute attr (see above),
 * sorted without regard to case, each once, joined by commas ("" if none).
 * unresolved(attr, pattern): true if one of them matches the regular
 * expression pattern (case-insensitive, as HTCondor compiles it; an empty
 * match does not count), else false. Error if the first argument is not an
 * attribute reference (`a`, `.a` or `base.a`), if the pattern is not a string
 * (undefined included: HTCondor's code), is invalid or its match hits the
 * limits, or if the references go deeper than the evaluation limit or a
 * record cannot be read; undefined if attr names no attribute.
 */
static void fn_unresolved(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                          const ads_expr *const *args, size_t n)
{
    ref_walk w;
    memset(&w, 0, sizeof w);
    w.cx = cx;
    const ads_expr *a = args[0];
    while (a->kind == N_PAREN)
        a = a->u.ops.a;
    const ads_view *where = NULL, *b;
    const ads_expr *x = NULL;
    ads_value lit;
    ads_str name;
    uint32_t hash;
    int found = 0;
    if (a->kind == N_ATTR) {
        bool root = a->scope == SCOPE_ROOT;
        name = a->u.attr.name;
        hash = a->u.attr.hash;
        found = find_attr(&w, root ? cx->root : view, !root, name, hash, &where, &x, &lit);
    } else if (a->kind == N_SELECT) {
        name = a->u.sel.name;
        hash = a->u.sel.hash;
        if (resolve_base(&w, a->u.sel.base, view, &b) == BASE_RECORD)
            found = find_attr(&w, b, false, name, hash, &where, &x, &lit);
    } else {
        *out = ads_errorv();
        return;
    }
    if (w.failed) {
        *out = ads_errorv();
        return;
    }
    if (found == 0) {
        *out = ads_undefined();
        return;
    }
    ads_regex re;
    if (n == 2) {
        ads_value p = arg(cx, view, args, 1);
        if (p.type != ADS_STRING || ads_regex__open(&re, cx, p.u.s, PCRE2_CASELESS)) {
            *out = ads_errorv();
            return;
        }
    }
    w.collect = true;
    follow(&w, where, name, hash, x);
    if (w.failed) {
        *out = ads_errorv();
    } else if (n == 2) {
        *out = ads_bool(false);
        for (size_t i = 0; i < w.n; i++) {
            int rc = ads_regex__match(&re, cx, w.refs[i].name, 0, PCRE2_NOTEMPTY);
            if (rc > 0) {
                *out = ads_bool(true);
                break;
            }
            if (rc != PCRE2_ERROR_NOMATCH) {
                *out = ads_errorv();
                break;
            }
        }
    } else {
        if (w.n > 1)
            qsort(w.refs, w.n, sizeof *w.refs, ref_cmp);
        ads_buf text = ADS_BUF_INIT;
        for (size_t i = 0; i < w.n; i++) {
            if (i > 0 && ads_value__strcmp_fold(w.refs[i].name, w.refs[i - 1].name) == 0)
                continue;
            if (i > 0)
                ads_buf_addc(&text, ',');
            ads_buf_add(&text, nonnull(w.refs[i].name).p, w.refs[i].name.len);
        }
        finish_string(out, cx, &text);
    }
    if (n == 2)
        ads_regex__close(&re);
}

/* ------------------------------------------------------------------------ */
/* Lists: member identicalMember sum avg min max anyCompare allCompare      */
/* ------------------------------------------------------------------------ */

/*
 * member(x, list): some member == x; identicalMember(x, list): some member
 * is x. Undefined if list is undefined or (member only) x is; error if list
 * is not a list, x is a list or a record, or (member only) x is error.
 */
static void list_member(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                        const ads_expr *const *args, bool identical)
{
    ads_value x = arg(cx, view, args, 0), l = arg(cx, view, args, 1);
    if (l.type == ADS_UNDEFINED || (!identical && x.type == ADS_UNDEFINED)) {
        *out = ads_undefined();
        return;
    }
    if (l.type != ADS_LIST || x.type == ADS_LIST || x.type == ADS_RECORD ||
        (!identical && x.type == ADS_ERROR)) {
        *out = ads_errorv();
        return;
    }
    for (size_t i = 0; i < l.u.list.n; i++) {
        ads_value r;
        ads_eval__binary(&r, cx, identical ? OP_IS : OP_EQ, &l.u.list.items[i], &x);
        if (r.type == ADS_BOOLEAN && r.u.b) {
            *out = ads_bool(true);
            return;
        }
    }
    *out = ads_bool(false);
}

static void fn_member(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, size_t n)
{
    (void)n;
    list_member(out, cx, view, args, false);
}

static void fn_identical_member(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                                const ads_expr *const *args, size_t n)
{
    (void)n;
    list_member(out, cx, view, args, true);
}

static bool is_number(const ads_value *v)
{
    return v->type == ADS_INTEGER || v->type == ADS_REAL || v->type == ADS_BOOLEAN;
}

/*
 * sum(list) and avg(list), as HTCondor computes them: undefined members are
 * skipped; any other non-number (booleans count) is error. The sum starts
 * from the first member and adds the rest with +, so it is an integer unless
 * a member is real (integers wrap as + does); sum of no numbers is 0. avg
 * divides the sum by the count as a real; with no numbers it is the integer
 * 0 (HTCondor's code, though its documentation says undefined for a list of
 * undefined). Undefined if list is undefined; error if it is not a list.
 */
static void sum_avg(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, bool avg)
{
    ads_value l = arg(cx, view, args, 0);
    if (l.type == ADS_UNDEFINED) {
        *out = l;
        return;
    }
    if (l.type != ADS_LIST) {
        *out = ads_errorv();
        return;
    }
    ads_value acc = ads_int(0);
    size_t count = 0;
    for (size_t i = 0; i < l.u.list.n; i++) {
        const ads_value *it = &l.u.list.items[i];
        if (it->type == ADS_UNDEFINED)
            continue;
        if (!is_number(it)) {
            *out = ads_errorv();
            return;
        }
        if (count == 0)
            acc = *it;
        else
            ads_eval__binary(&acc, cx, OP_ADD, &acc, it);
        count++;
    }
    if (avg && count > 0) {
        ads_value d = ads_real((double)count);
        ads_eval__binary(&acc, cx, OP_DIV, &acc, &d);
    }
    *out = acc;
}

static void fn_sum(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                   const ads_expr *const *args, size_t n)
{
    (void)n;
    sum_avg(out, cx, view, args, false);
}

static void fn_avg(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                   const ads_expr *const *args, size_t n)
{
    (void)n;
    sum_avg(out, cx, view, args, true);
}

/* min(list) / max(list): the least / greatest number, skipping undefined
 * members, as the member itself (max({2, 0.5, 1}) is the integer 2, and a
 * boolean stays a boolean: HTCondor's code; its documentation says a real
 * when any member is real); the first of equal ones; undefined for no
 * numbers; error for any other member. Undefined if list is undefined;
 * error if it is not a list. */
static void min_max(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, bool max)
{
    ads_value l = arg(cx, view, args, 0);
    if (l.type == ADS_UNDEFINED) {
        *out = l;
        return;
    }
    if (l.type != ADS_LIST) {
        *out = ads_errorv();
        return;
    }
    ads_value best = ads_undefined();
    for (size_t i = 0; i < l.u.list.n; i++) {
        const ads_value *it = &l.u.list.items[i];
        if (it->type == ADS_UNDEFINED)
            continue;
        if (!is_number(it)) {
            *out = ads_errorv();
            return;
        }
        if (best.type == ADS_UNDEFINED) {
            best = *it;
            continue;
        }
        ads_value r;
        ads_eval__binary(&r, cx, max ? OP_GT : OP_LT, it, &best);
        if (r.type == ADS_BOOLEAN && r.u.b)
            best = *it;
    }
    *out = best;
}

static void fn_min(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                   const ads_expr *const *args, size_t n)
{
    (void)n;
    min_max(out, cx, view, args, false);
}

static void fn_max(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                   const ads_expr *const *args, size_t n)
{
    (void)n;
    min_max(out, cx, view, args, true);
}

/* The operator an anyCompare/allCompare string names (exactly), or OP_NONE. */
static op_kind compare_op(ads_str s)
{
    static const struct {
        const char *name;
        op_kind op;
    } ops[] = {
        {"<", OP_LT}, {"<=", OP_LE}, {"!=", OP_NE}, {"==", OP_EQ},
        {">", OP_GT}, {">=", OP_GE}, {"is", OP_IS}, {"isnt", OP_ISNT},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strlen(ops[i].name) == s.len && memcmp(ops[i].name, s.p, s.len) == 0)
            return ops[i].op;
    return OP_NONE;
}

/*
 * anyCompare(op, list, x) / allCompare(op, list, x): whether `member op x`
 * is true for some / every member; op is one of < <= != == > >= is isnt.
 * Undefined if op or list is undefined; error if op is anything else or
 * list is not a list. A comparison that is error makes it error; one that
 * is undefined ends the scan with false, for both (HTCondor's code: so
 * anyCompare("==", {undefined, 1}, 1) is false, {1, undefined} true).
 */
static void list_compare(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                         const ads_expr *const *args, bool all)
{
    ads_value v[3];
    eval_args(v, sizeof v / sizeof v[0], cx, view, args, 3);
    if (v[0].type == ADS_UNDEFINED) {
        *out = ads_undefined();
        return;
    }
    op_kind op = v[0].type == ADS_STRING ? compare_op(v[0].u.s) : OP_NONE;
    if (op == OP_NONE) {
        *out = ads_errorv();
        return;
    }
    if (v[1].type == ADS_UNDEFINED) {
        *out = ads_undefined();
        return;
    }
    if (v[1].type != ADS_LIST) {
        *out = ads_errorv();
        return;
    }
    for (size_t i = 0; i < v[1].u.list.n; i++) {
        ads_value r;
        ads_eval__binary(&r, cx, op, &v[1].u.list.items[i], &v[2]);
        if (r.type == ADS_UNDEFINED) {
            *out = ads_bool(false);
            return;
        }
        if (r.type != ADS_BOOLEAN) {
            *out = ads_errorv();
            return;
        }
        if (r.u.b != all) {
            *out = ads_bool(!all);
            return;
        }
    }
    *out = ads_bool(all);
}

static void fn_any_compare(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                           const ads_expr *const *args, size_t n)
{
    (void)n;
    list_compare(out, cx, view, args, false);
}

static void fn_all_compare(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                           const ads_expr *const *args, size_t n)
{
    (void)n;
    list_compare(out, cx, view, args, true);
}

const ads_builtin ads_builtins__string[] = {
    {"strcat", fn_strcat, 0, -1},
    /* math */
    {"floor", fn_floor, 1, 1},
    {"ceiling", fn_ceiling, 1, 1},
    {"ceil", fn_ceiling, 1, 1},
    {"round", fn_round, 1, 1},
    {"pow", fn_pow, 2, 2},
    {"quantize", fn_quantize, 2, 2},
    {"random", fn_random, 0, 1},
    /* strings */
    {"join", fn_join, 0, -1},
    {"substr", fn_substr, 2, 3},
    {"strcmp", fn_strcmp, 2, 2},
    {"stricmp", fn_stricmp, 2, 2},
    {"toUpper", fn_to_upper, 1, 1},
    {"toLower", fn_to_lower, 1, 1},
    {"versioncmp", fn_versioncmp, 2, 2},
    {"versionGT", fn_version_gt, 2, 2},
    {"versionGE", fn_version_ge, 2, 2},
    {"versionLT", fn_version_lt, 2, 2},
    {"versionLE", fn_version_le, 2, 2},
    {"versionEQ", fn_version_eq, 2, 2},
    {"version_in_range", fn_version_in_range, 3, 3},
    {"split", fn_split, 1, 2},
    /* string lists */
    {"stringListsIntersect", fn_string_lists_intersect, 2, 3},
    {"stringListSize", fn_string_list_size, 1, 2},
    {"stringListSum", fn_string_list_sum, 1, 2},
    {"stringListAvg", fn_string_list_avg, 1, 2},
    {"stringListMin", fn_string_list_min, 1, 2},
    {"stringListMax", fn_string_list_max, 1, 2},
    {"stringListMember", fn_string_list_member, 2, 3},
    {"stringListIMember", fn_string_list_imember, 2, 3},
    {"stringListSubsetMatch", fn_string_list_subset_match, 2, 3},
    {"stringListISubsetMatch", fn_string_list_isubset_match, 2, 3},
    {"stringList_regexpMember", fn_string_list_regexp_member, 2, 4},
    /* regular expressions */
    {"regexp", fn_regexp, 2, 3},
    {"regexpMember", fn_regexp_member, 2, 3},
    {"regexps", fn_regexps, 3, 4},
    {"replace", fn_replace, 3, 4},
    {"replaceAll", fn_replace_all, 3, 4},
    {"unresolved", fn_unresolved, 1, 2},
    /* lists */
    {"member", fn_member, 2, 2},
    {"identicalMember", fn_identical_member, 2, 2},
    {"sum", fn_sum, 1, 1},
    {"avg", fn_avg, 1, 1},
    {"min", fn_min, 1, 1},
    {"max", fn_max, 1, 1},
    {"anyCompare", fn_any_compare, 3, 3},
    {"allCompare", fn_all_compare, 3, 3},
};
const size_t ads_builtins__string_count =
    sizeof ads_builtins__string / sizeof ads_builtins__string[0];
