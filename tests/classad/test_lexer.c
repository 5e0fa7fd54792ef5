/*
 * tests/classad/test_lexer.c: literals and tokens as the user writes them,
 * checked through parse and evaluate: numbers in every base and their
 * limits, the '-' rule, string escapes, joined strings, quoted names,
 * comments, times, identifiers, and every lexical error with its position.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "classad/classad.h"

static ads_arena *arena;

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    arena = ads_arena_new();
    return arena ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ads_arena_free(arena);
    return 0;
}

static ads_value value_of(const char *text)
{
    const ads_expr *e;
    ads_error err;
    ads_value v;
    if (ads_expr_parse(&e, arena, text, strlen(text), &err))
        fail_msg("'%s' does not parse: %s", text, err.message);
    assert_int_equal(ads_expr_eval(&v, e, NULL, arena), 0);
    return v;
}

static void refused(const char *text, int line, int column, const char *message)
{
    const ads_expr *e;
    ads_error err;
    int rc = ads_expr_parse(&e, arena, text, strlen(text), &err);
    if (rc != ADS_ESYNTAX || err.line != line || err.column != column ||
        strcmp(err.message, message) != 0)
        fail_msg("'%s': rc %d at %d:%d '%s'; expected %d:%d '%s'", text, rc, err.line,
                 err.column, err.message, line, column, message);
}

static void lexer__integers_in_every_base(void **state)
{
    (void)state;
    assert_int_equal(value_of("42").u.i, 42);
    assert_int_equal(value_of("0x1F").u.i, 31);
    assert_int_equal(value_of("0X1f").u.i, 31);
    assert_int_equal(value_of("017").u.i, 15);
    assert_int_equal(value_of("0").u.i, 0);
    assert_int_equal(value_of("9223372036854775807").u.i, INT64_MAX);
    assert_int_equal(value_of("-9223372036854775808").u.i, INT64_MIN);
    assert_int_equal(value_of("0x7fffffffffffffff").u.i, INT64_MAX);
    assert_int_equal(value_of("-0x8000000000000000").u.i, INT64_MIN);
}

static void lexer__integer_overflow_and_bad_digits_are_errors(void **state)
{
    (void)state;
    refused("9223372036854775808", 1, 1, "integer literal does not fit 64 bits");
    refused("x + 0x10000000000000000", 1, 5, "integer literal does not fit 64 bits");
    refused("0x8000000000000000", 1, 1, "integer literal does not fit 64 bits");
    refused("08", 1, 2, "'8' is not an octal digit");
    refused("0x", 1, 3, "expected hex digits after '0x'");
    refused("12abc", 1, 3, "unexpected 'a' in a number");
}

static void lexer__reals(void **state)
{
    (void)state;
    assert_true(value_of("1.5").u.r == 1.5);
    assert_true(value_of(".5").u.r == 0.5);
    assert_true(value_of("1e3").u.r == 1000.0);
    assert_true(value_of("1.5E-3").u.r == 1.5e-3);
    assert_int_equal(value_of("1e3").type, ADS_REAL);
    assert_true(isinf(value_of("1e400").u.r));
    refused("5.", 1, 2, "expected a digit after '.' in a number");
    refused("..5", 1, 2, "expected an attribute name after '.', found the number .5");
    refused("1e", 1, 2, "expected digits in the exponent");
    refused("1.5.2", 1, 4, "unexpected '.' in a number");
}

static void lexer__minus_joins_a_number_unless_a_value_precedes(void **state)
{
    (void)state;
    assert_int_equal(value_of("3-1").u.i, 2);
    assert_int_equal(value_of("2 * -3").u.i, -6);
    assert_int_equal(value_of("- 3").u.i, -3);
    assert_int_equal(value_of("(4)-1").u.i, 3);
    assert_int_equal(value_of("{5}[0]-1").u.i, 4);
}

static void lexer__string_escapes(void **state)
{
    (void)state;
    ads_value v = value_of("\"a\\tb\\n\\\"q\\\" \\\\ \\101\\044\\44 \\x \\?\"");
    assert_int_equal(v.type, ADS_STRING);
    assert_int_equal(v.u.s.len, strlen("a\tb\n\"q\" \\ A$$ x ?"));
    assert_memory_equal(v.u.s.p, "a\tb\n\"q\" \\ A$$ x ?", v.u.s.len);
    v = value_of("\"\\400\""); /* a third octal digit only after 0-3 */
    assert_int_equal(v.u.s.len, 2);
    assert_memory_equal(v.u.s.p, " 0", 2);
    v = value_of("\"\\1234\"");
    assert_memory_equal(v.u.s.p, "S4", 2);
    refused("\"\\0\"", 1, 2, "'\\0' (a NUL character) is not allowed in a string");
    refused("\"a\\000b\"", 1, 3, "'\\0' (a NUL character) is not allowed in a string");
    refused("\"unterminated", 1, 1, "unterminated string");
    refused("\"trailing\\", 1, 1, "unterminated string");
    const char nul[] = "\"a\0b\"";
    const ads_expr *e;
    ads_error err;
    assert_int_equal(ads_expr_parse(&e, arena, nul, sizeof nul - 1, &err), ADS_ESYNTAX);
    assert_string_equal(err.message, "a NUL byte is not allowed in a string");
    assert_int_equal(err.column, 3);
}

static void lexer__adjacent_strings_join_across_white_space_only(void **state)
{
    (void)state;
    ads_value v = value_of("\"ab\" \"cd\"\n\t\"ef\"");
    assert_int_equal(v.u.s.len, 6);
    assert_memory_equal(v.u.s.p, "abcdef", 6);
    refused("\"a\" /* x */ \"b\"", 1, 13, "expected an operator or the end of the expression, "
                                         "found a string");
}

static void lexer__comments_and_lines(void **state)
{
    (void)state;
    assert_int_equal(value_of("/* c */ 1 // trailing").u.i, 1);
    assert_int_equal(value_of("1 /* multi\nline */ + 2").u.i, 3);
    refused("1 + /* open", 1, 5, "unterminated comment");
    refused("1 +\n\n  @", 3, 3, "unexpected character '@'");
    refused("1 +\n \x01", 2, 2, "unexpected byte 0x01");
}

static void lexer__quoted_names(void **state)
{
    (void)state;
    const ads_record *r;
    ads_value v;
    const char *text = "['send time' = 5; 'it\\'s' = 6]";
    assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), NULL), 0);
    assert_int_equal(ads_record_eval_attr(&v, r, "send time", 9, arena), 0);
    assert_int_equal(v.u.i, 5);
    assert_int_equal(ads_record_eval_attr(&v, r, "it's", 4, arena), 0);
    assert_int_equal(v.u.i, 6);
    refused("''", 1, 1, "empty quoted name");
    refused("'abc", 1, 1, "unterminated quoted name");
    refused("x +\n  'abc\n\ndef", 2, 3, "unterminated quoted name");
    refused("x +\n \"abc\n\ndef\\", 2, 2, "unterminated string");
}

static void lexer__keywords_ignore_case(void **state)
{
    (void)state;
    assert_int_equal(value_of("TRUE").type, ADS_BOOLEAN);
    assert_int_equal(value_of("False").u.b, 0);
    assert_int_equal(value_of("UNDEFINED").type, ADS_UNDEFINED);
    assert_int_equal(value_of("Error").type, ADS_ERROR);
    assert_true(value_of("1 IS 1").u.b);
    assert_true(value_of("1 In {1}").u.b);
}

static void lexer__times_in_backticks(void **state)
{
    (void)state;
    ads_value v = value_of("`2011-12-13T12:00:00-05:00`");
    assert_int_equal(v.type, ADS_ABSTIME);
    assert_true(v.u.abs.secs == 1323795600.0);
    assert_int_equal(v.u.abs.offset, -5 * 3600);
    v = value_of("`2011-12-13T12:00:00Z`");
    assert_int_equal(v.u.abs.offset, 0);
    v = value_of("`1d2h3m4.5s`");
    assert_int_equal(v.type, ADS_RELTIME);
    assert_true(v.u.rel == 93784.5);
    assert_true(value_of("`90`").u.rel == 90);
    assert_true(value_of("`1+02:03:04.5`").u.rel == 93784.5);
    assert_true(value_of("`-1:30`").u.rel == -90);
    refused("`next tuesday`", 1, 2, "'next tuesday' is neither an absolute time "
                                    "(2011-12-13T12:00:00Z) nor a relative time (1d2h3m4s, 90)");
    refused("`1d", 1, 1, "unterminated time literal");
}

/* issue 11 item 5: years beyond 0000..9999 in ISO 8601's expanded form,
 * which is how they are written; a local mean time is taken to the minute */
static void lexer__times_with_expanded_years(void **state)
{
    (void)state;
    ads_value v = value_of("`+10000-01-01T00:00:00Z`");
    assert_int_equal(v.type, ADS_ABSTIME);
    assert_true(v.u.abs.secs == 253402300800.0);
    v = value_of("`-0001-12-31T23:59:59+01:00`");
    assert_true(v.u.abs.secs == -62167219201.0 - 3600);
    assert_int_equal(v.u.abs.offset, 3600);
    assert_true(value_of("`+285000000-01-01T00:00:00Z`").u.abs.secs > 8.9e15);
    const char *bad[] = {"`+2011-12-13T12:00:00Z`", "`+1000001-01T00:00:00Z`",
                         "`-001-01-01T00:00:00Z`", "`+1234567890-01-01T00:00:00Z`",
                         "`10000-01-01T00:00:00Z`"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const ads_expr *e;
        if (ads_expr_parse(&e, arena, bad[i], strlen(bad[i]), NULL) != ADS_ESYNTAX)
            fail_msg("%s accepted", bad[i]);
    }
    /* New York kept local mean time (-04:56:02) until 1883 */
    setenv("TZ", "America/New_York", 1);
    tzset();
    v = value_of("`1850-06-01T12:00:00`");
    setenv("TZ", "UTC", 1);
    tzset();
    /* -04:56 (or 0 where the zone data is not installed), never -17762 s */
    assert_int_equal(v.u.abs.offset % 60, 0);
    assert_true(v.u.abs.offset == -17760 || v.u.abs.offset == 0);
}

/* issue 11 item 6: `in`, `is` and `isnt` after an operand are operators,
 * anywhere else names */
static void lexer__in_is_isnt_are_names_where_no_operand_precedes(void **state)
{
    (void)state;
    assert_true(value_of("1 in { 1 }").u.b);
    assert_true(value_of("1 is 1").u.b);
    assert_true(value_of("1 isnt 2").u.b);
    assert_int_equal(value_of("In").type, ADS_UNDEFINED);
    assert_int_equal(value_of("IS").type, ADS_UNDEFINED);
    assert_int_equal(value_of("isnt").type, ADS_UNDEFINED);
    assert_true(value_of("[ in = 2 ].in - 1 == 1").u.b);
    assert_true(value_of("[ Is = 2; x = Is * Is ].x is 4").u.b);
    /* after a name, a keyword-name, ')' ']' '}' or a literal: the operator */
    assert_true(value_of("(1) in { 1 } && { 1 }[0] in { 1 } && [ a = 1 ].a is 1").u.b);
    refused("in in", 1, 6, "expected an expression, found end of input");
    refused("[ a = in in ]", 1, 13, "expected an expression, found ']'");
}

static void lexer__identifiers(void **state)
{
    (void)state;
    ads_value v = value_of("#571eed18-0031-000000000002-1");
    assert_int_equal(v.type, ADS_IDENT);
    assert_int_equal(v.u.id.hi, 0x0571eed180000031ULL);
    assert_int_equal(value_of("#1495").u.id.lo, 1495);
    refused("#0a1b2c3d-4e5f6a7b", 1, 19, "identifier: 2 groups; expected 1 (increment), 4 "
                                        "(ordered) or 5 (random)");
    refused("#571eed18-0031-1000000000002-1", 1, 28, "identifier: node group has 13 digits, "
                                                    "at most 12 allowed");
    refused("#1.5", 1, 3, "identifier: unexpected '.'; expected a hex digit or '-'");
}

/* refused() for text that holds NUL bytes: len bytes of text. */
static void refused_bytes(const char *text, size_t len, int line, int column,
                          const char *message)
{
    const ads_expr *e;
    ads_error err;
    int rc = ads_expr_parse(&e, arena, text, len, &err);
    if (rc != ADS_ESYNTAX || err.line != line || err.column != column ||
        strcmp(err.message, message) != 0)
        fail_msg("%zu bytes: rc %d at %d:%d '%s'; expected %d:%d '%s'", len, rc, err.line,
                 err.column, err.message, line, column, message);
}

#define REFUSED_BYTES(lit, line, column, message)                                           \
    refused_bytes(lit, sizeof lit - 1, line, column, message)

static void lexer__backslash_then_nul_is_refused_like_a_raw_nul(void **state)
{
    (void)state;
    /* the escape would put the NUL in the value: the same error, at the
     * NUL byte, as a raw one */
    REFUSED_BYTES("\"a\0b\"", 1, 3, "a NUL byte is not allowed in a string");
    REFUSED_BYTES("\"a\\\0b\"", 1, 4, "a NUL byte is not allowed in a string");
    REFUSED_BYTES("'a\0b'", 1, 3, "a NUL byte is not allowed in a quoted name");
    REFUSED_BYTES("'a\\\0b'", 1, 4, "a NUL byte is not allowed in a quoted name");
    /* at the very end of the text: still the NUL, not an unterminated string */
    REFUSED_BYTES("\"\\\0", 1, 3, "a NUL byte is not allowed in a string");
    /* in a joined string, on a later line */
    REFUSED_BYTES("x +\n\"ok\" \"a\\\0\"", 2, 9, "a NUL byte is not allowed in a string");
}

static void lexer__escaped_line_break_in_a_string_counts_a_line(void **state)
{
    (void)state;
    /* the escaped line break is kept in the value... */
    ads_value v = value_of("\"a\\\nb\"");
    assert_int_equal(v.type, ADS_STRING);
    assert_int_equal(v.u.s.len, 3);
    assert_memory_equal(v.u.s.p, "a\nb", 3);
    /* ...and counted: an error after it reports the line and column it is on */
    refused("\"a\\\nb\" + @", 2, 6, "unexpected character '@'");
    refused("\"\\\n\\\n\" + @", 3, 5, "unexpected character '@'");
    refused("'a\\\nb' + @", 2, 6, "unexpected character '@'");
    refused("\"a\\\n\" \"b\\\nc\" + @", 3, 6, "unexpected character '@'");
    /* an error inside the string, after the break */
    refused("\"a\\\nb\\0\"", 2, 2, "'\\0' (a NUL character) is not allowed in a string");
    /* a raw line break counts the same */
    refused("\"a\nb\" + @", 2, 6, "unexpected character '@'");
}

/* ---- the lexer's fast paths (keywords by length and letters, plain
 * integers, plain strings, operators by first byte): each case against
 * what the general path gives ---- */

/* word with the letters whose bit is set in mask made capitals */
static void spell(char *out, const char *word, unsigned mask)
{
    size_t n = strlen(word);
    for (size_t i = 0; i < n; i++)
        out[i] = (mask >> i & 1) ? (char)(word[i] - 'a' + 'A') : word[i];
    out[n] = '\0';
}

static void lexer__keywords_in_every_case_spelling(void **state)
{
    (void)state;
    static const struct {
        const char *word;
        ads_vtype type;
    } literals[] = {{"true", ADS_BOOLEAN}, {"false", ADS_BOOLEAN},
                    {"undefined", ADS_UNDEFINED}, {"error", ADS_ERROR}};
    char w[16], text[64];
    for (size_t k = 0; k < sizeof literals / sizeof literals[0]; k++) {
        size_t n = strlen(literals[k].word);
        for (unsigned mask = 0; mask < 1u << n; mask++) {
            spell(w, literals[k].word, mask);
            /* a literal, not a name (an undefined name reads as undefined too) */
            const ads_expr *e;
            assert_int_equal(ads_expr_parse(&e, arena, w, n, NULL), 0);
            if (ads_expr_kind_of(e) != ADS_X_LITERAL)
                fail_msg("'%s' is not a literal", w);
            ads_value v = value_of(w);
            if (v.type != literals[k].type)
                fail_msg("'%s' reads as type %d", w, (int)v.type);
            if (v.type == ADS_BOOLEAN)
                assert_int_equal(v.u.b, literals[k].word[0] == 't');
            /* the same at the end of a longer text and before an operator
             * (true && x is x for each of them) */
            snprintf(text, sizeof text, "true && %s", w);
            assert_int_equal(value_of(text).type, literals[k].type);
            snprintf(text, sizeof text, "(%s)", w);
            assert_int_equal(value_of(text).type, literals[k].type);
        }
    }
    /* the operator words after an operand, in every spelling */
    static const struct {
        const char *word, *expr;
    } ops[] = {{"is", "1 %s 1"}, {"isnt", "1 %s 2"}, {"in", "1 %s {1}"}};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t n = strlen(ops[k].word);
        for (unsigned mask = 0; mask < 1u << n; mask++) {
            spell(w, ops[k].word, mask);
            snprintf(text, sizeof text, ops[k].expr, w);
            ads_value v = value_of(text);
            if (v.type != ADS_BOOLEAN || !v.u.b)
                fail_msg("'%s' is not true", text);
        }
    }
}

/* Names that share letters, a prefix or a length with a keyword are names:
 * [N = 41; r = N + 1] gives r = 42 (a keyword would give error or fail). */
static void lexer__names_that_share_a_prefix_with_a_keyword_are_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "t",     "tr",         "tru",        "truex",     "true_",    "true1",  "True2",
        "untrue", "trUeTrue",  "trve",       "f",         "fals",     "falsey", "False_",
        "false0", "falsf",     "u",          "undefine",  "undefinedX", "Undefined9",
        "undefinee", "undefinedundefined", "e", "err",    "erro",     "errors", "Error_",
        "error5", "errot",     "i",          "isn",       "isnt_",    "isNtX",  "in2",
        "Inn",    "_in",       "is_",        "ISNTS",     "ix",       "it",     "ins",
        "iss",    "isn0",      "_true",      "TRUE_",     "eRRoR_",   "abcd",   "abcde",
        "abcdefghi", "x1234567", "isnt1",     "ia",        "io",
    };
    char text[128];
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const ads_record *r;
        ads_value v;
        snprintf(text, sizeof text, "[%s = 41; r = %s + 1]", names[k], names[k]);
        if (ads_record_parse(&r, arena, text, strlen(text), NULL))
            fail_msg("'%s' does not parse", text);
        assert_int_equal(ads_record_eval_attr(&v, r, "r", 1, arena), 0);
        if (v.type != ADS_INTEGER || v.u.i != 42)
            fail_msg("'%s': r is not 42", text);
        /* alone, a name (with no record to look in, undefined) */
        const ads_expr *e;
        assert_int_equal(ads_expr_parse(&e, arena, names[k], strlen(names[k]), NULL), 0);
        assert_int_equal(ads_expr_kind_of(e), ADS_X_ATTR);
        assert_int_equal(value_of(names[k]).type, ADS_UNDEFINED);
    }
}

/* The digits' value computed apart from the lexer. */
static int64_t decimal(const char *digits)
{
    return (int64_t)strtoll(digits, NULL, 10);
}

static void lexer__decimal_integers_of_every_length(void **state)
{
    (void)state;
    char digits[32], text[64];
    /* 1, 12, 123, ... 10^k, 10^k - 1 and the same negated, for 1 to 18
     * digits (the plain path) and 19 (strtoll's range check) */
    for (int n = 1; n <= 19; n++) {
        const char *const kinds[] = {"123456789012345678901", "1000000000000000000000",
                                     "9999999999999999999999", "5"};
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            if (k == 3) {
                memset(digits, '0' + n % 10, (size_t)n);
                digits[0] = (char)('1' + n % 9);
            } else {
                memcpy(digits, kinds[k], (size_t)n);
            }
            digits[n] = '\0';
            if (n == 19 && digits[0] == '9') {
                refused(digits, 1, 1, "integer literal does not fit 64 bits");
                snprintf(text, sizeof text, "-%s", digits);
                refused(text, 1, 1, "integer literal does not fit 64 bits");
                continue;
            }
            ads_value v = value_of(digits);
            assert_int_equal(v.type, ADS_INTEGER);
            if (v.u.i != decimal(digits))
                fail_msg("'%s' reads as %lld", digits, (long long)v.u.i);
            snprintf(text, sizeof text, "-%s", digits);
            assert_int_equal(value_of(text).u.i, -decimal(digits));
            /* before an operator, and after one at the end of the text */
            snprintf(text, sizeof text, "%s+0", digits);
            assert_int_equal(value_of(text).u.i, decimal(digits));
            snprintf(text, sizeof text, "0+%s", digits);
            assert_int_equal(value_of(text).u.i, decimal(digits));
            snprintf(text, sizeof text, "1 - %s", digits);
            assert_int_equal(value_of(text).u.i, 1 - decimal(digits));
        }
    }
    assert_int_equal(value_of("999999999999999999").u.i, 999999999999999999LL);
    assert_int_equal(value_of("-999999999999999999").u.i, -999999999999999999LL);
    assert_int_equal(value_of("1000000000000000000").u.i, 1000000000000000000LL);
    assert_int_equal(value_of("-1000000000000000000").u.i, -1000000000000000000LL);
    assert_int_equal(value_of("9223372036854775807").u.i, INT64_MAX);
    refused("9999999999999999999", 1, 1, "integer literal does not fit 64 bits");
    refused("-9999999999999999999", 1, 1, "integer literal does not fit 64 bits");
    /* a leading zero is octal at any length */
    assert_int_equal(value_of("0").u.i, 0);
    assert_int_equal(value_of("00").u.i, 0);
    assert_int_equal(value_of("010").u.i, 8);
    assert_int_equal(value_of("000000000000000000007").u.i, 7);
    refused("0009", 1, 4, "'9' is not an octal digit");
    /* what follows the digits decides */
    assert_int_equal(value_of("12e1").type, ADS_REAL);
    assert_true(value_of("12e1").u.r == 120.0);
    assert_true(value_of("12E+1").u.r == 120.0);
    assert_true(value_of("12.5").u.r == 12.5);
    assert_int_equal(value_of("12.5.x").type, ADS_ERROR);
    refused("12x", 1, 3, "unexpected 'x' in a number");
    refused("12_", 1, 3, "unexpected '_' in a number");
    refused("12Z", 1, 3, "unexpected 'Z' in a number");
    refused("12@", 1, 3, "unexpected character '@'");
    refused("12.", 1, 3, "expected a digit after '.' in a number");
    refused("12.x", 1, 3, "expected a digit after '.' in a number");
    refused("123456789012345678x", 1, 19, "unexpected 'x' in a number");
    assert_int_equal(value_of("(12)").u.i, 12);
    assert_int_equal(value_of("{12}[0]").u.i, 12);
}

/* Parse exactly the bytes of text from a buffer of their size, in place
 * (ADS_PARSE_NOCOPY): nothing follows the last token, not even a NUL, so
 * a read past the end is an AddressSanitizer error. */
static int parse_exact(const char *text, char **buf, ads_value *v, ads_error *err)
{
    size_t len = strlen(text), end;
    const ads_expr *e;
    *buf = malloc(len ? len : 1);
    assert_non_null(*buf);
    memcpy(*buf, text, len);
    int rc = ads_expr_parse_prefix(&e, arena, *buf, len, 0, ADS_PARSE_NOCOPY, &end, err);
    if (rc == 0) {
        if (end != len)
            fail_msg("'%s': parsed %zu of %zu bytes", text, end, len);
        assert_int_equal(ads_expr_eval(v, e, NULL, arena), 0);
    }
    return rc;
}

static void lexer__tokens_at_the_very_end_of_the_text(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        ads_vtype type;
        long long i; /* for integers and booleans */
    } good[] = {
        {"x", ADS_UNDEFINED, 0},        {"abcdefgh", ADS_UNDEFINED, 0},
        {"true", ADS_BOOLEAN, 1},       {"TRUE", ADS_BOOLEAN, 1},
        {"isnt", ADS_UNDEFINED, 0},     {"in", ADS_UNDEFINED, 0},
        {"undefined", ADS_UNDEFINED, 0}, {"error", ADS_ERROR, 0},
        {"1", ADS_INTEGER, 1},          {"123456789012345678", ADS_INTEGER, 123456789012345678},
        {"-5", ADS_INTEGER, -5},        {"0x1f", ADS_INTEGER, 31},
        {"017", ADS_INTEGER, 15},       {".5", ADS_REAL, 0},
        {"1e3", ADS_REAL, 0},           {"\"abc\"", ADS_STRING, 0},
        {"\"\"", ADS_STRING, 0},        {"\"a\" \"b\"", ADS_STRING, 0},
        {"\"a\\tb\"", ADS_STRING, 0},   {"`90`", ADS_RELTIME, 0},
        {"2>=1", ADS_BOOLEAN, 1},       {"16>>>2", ADS_INTEGER, 4},
        {"16>>2", ADS_INTEGER, 4},      {"1<<2", ADS_INTEGER, 4},
        {"1=?=1", ADS_BOOLEAN, 1},      {"1=!=1", ADS_BOOLEAN, 0},
        {"1===1", ADS_BOOLEAN, 1},      {"1==1", ADS_BOOLEAN, 1},
        {"1!=1", ADS_BOOLEAN, 0},       {"1&&1", ADS_BOOLEAN, 1},
        {"0||1", ADS_BOOLEAN, 1},       {"undefined?:2", ADS_INTEGER, 2},
        {"true?1:2", ADS_INTEGER, 1},   {"x.y", ADS_UNDEFINED, 0},
        {"{1,2}[1]", ADS_INTEGER, 2},   {"[a=1].a", ADS_INTEGER, 1},
        {"5%3", ADS_INTEGER, 2},        {"6&3", ADS_INTEGER, 2},
        {"6|3", ADS_INTEGER, 7},        {"6^3", ADS_INTEGER, 5},
        {"x // comment", ADS_UNDEFINED, 0}, {"1 ", ADS_INTEGER, 1},
    };
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        char *buf;
        ads_value v;
        ads_error err;
        if (parse_exact(good[k].text, &buf, &v, &err))
            fail_msg("'%s' does not parse: %s", good[k].text, err.message);
        if (v.type != good[k].type)
            fail_msg("'%s' is of type %d", good[k].text, (int)v.type);
        if (v.type == ADS_INTEGER)
            assert_int_equal(v.u.i, good[k].i);
        if (v.type == ADS_BOOLEAN)
            assert_int_equal(v.u.b, good[k].i);
        free(buf);
    }
    static const struct {
        const char *text;
        int column;
        const char *message;
    } bad[] = {
        {"a>", 3, "expected an expression, found end of input"},
        {"a>>", 4, "expected an expression, found end of input"},
        {"a>>>", 5, "expected an expression, found end of input"},
        {"a<", 3, "expected an expression, found end of input"},
        {"a==", 4, "expected an expression, found end of input"},
        {"a&", 3, "expected an expression, found end of input"},
        {"a?:", 4, "expected an expression, found end of input"},
        {"-", 2, "expected an expression, found end of input"},
        {"\"ab", 1, "unterminated string"},
        {"\"abc\\", 1, "unterminated string"},
        {"'q", 1, "unterminated quoted name"},
        {"`9", 1, "unterminated time literal"},
        {"1.", 2, "expected a digit after '.' in a number"},
        {"0x", 3, "expected hex digits after '0x'"},
        {"1e", 2, "expected digits in the exponent"},
        {"1e+", 2, "expected digits in the exponent"},
        {"12x", 3, "unexpected 'x' in a number"},
        {"/*", 1, "unterminated comment"},
        {"$", 1, "unexpected character '$'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char *buf;
        ads_value v;
        ads_error err;
        int rc = parse_exact(bad[k].text, &buf, &v, &err);
        if (rc != ADS_ESYNTAX || err.line != 1 || err.column != bad[k].column ||
            strcmp(err.message, bad[k].message) != 0)
            fail_msg("'%s': rc %d at %d:%d '%s'; expected 1:%d '%s'", bad[k].text, rc,
                     err.line, err.column, err.message, bad[k].column, bad[k].message);
        free(buf);
    }
}

static void lexer__plain_strings_and_those_that_need_decoding(void **state)
{
    (void)state;
    static const struct {
        const char *text, *value;
        size_t len;
    } cases[] = {
        {"\"abc\"", "abc", 3},
        {"\"\"", "", 0},
        {"\"\" \"\"", "", 0},
        {"\"abc\"   ", "abc", 3},
        {"\"a b\\\"c\"", "a b\"c", 5},
        {"\"x\"\n\"y\"", "xy", 2},
        {"\"x\" \t\"y\" \"z\"", "xyz", 3},
        {"\"a\nb\"", "a\nb", 3},
        {"\"it's\"", "it's", 4},
        {"\"\\101bc\"", "Abc", 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ads_value v = value_of(cases[k].text);
        assert_int_equal(v.type, ADS_STRING);
        if (v.u.s.len != cases[k].len || memcmp(v.u.s.p, cases[k].value, v.u.s.len) != 0)
            fail_msg("'%s' reads as '%.*s'", cases[k].text, (int)v.u.s.len, v.u.s.p);
        assert_int_equal(v.u.s.p[v.u.s.len], '\0');
    }
    assert_true(value_of("\"a\" == \"A\"").u.b);
    assert_false(value_of("\"a\" == \"b\"").u.b);
    assert_true(value_of("strcat(\"ab\", \"cd\") == \"abcd\"").u.b);
    /* positions after a string, on its line and after a line break in it */
    refused("\"abc\" $", 1, 7, "unexpected character '$'");
    refused("\"a\nb\" $", 2, 4, "unexpected character '$'");
    refused("\"x\"\n\"y\" $", 2, 5, "unexpected character '$'");
    refused("\"abc\" \"", 1, 7, "unterminated string");
}

static void lexer__every_operator_longest_first(void **state)
{
    (void)state;
    static const struct {
        const char *text, *op;
    } cases[] = {
        {"a>>>b", ">>>"}, {"a>>b", ">>"}, {"a>=b", ">="}, {"a>b", ">"},
        {"a<<b", "<<"},   {"a<=b", "<="}, {"a<b", "<"},   {"a===b", "==="},
        {"a=?=b", "is"},  {"a=!=b", "isnt"}, {"a==b", "=="}, {"a!=b", "!="},
        {"a&&b", "&&"},   {"a&b", "&"},   {"a||b", "||"}, {"a|b", "|"},
        {"a^b", "^"},     {"a+b", "+"},   {"a-b", "-"},   {"a*b", "*"},
        {"a/b", "/"},     {"a%b", "%"},   {"a is b", "is"}, {"a isnt b", "isnt"},
        {"a in b", "in"}, {"a>> >b", NULL}, {"a= =b", NULL}, {"a=?b", NULL},
        {"a> >=b", NULL}, {"a & &b", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const ads_expr *e;
        ads_error err;
        int rc = ads_expr_parse(&e, arena, cases[k].text, strlen(cases[k].text), &err);
        if (!cases[k].op) {
            if (rc != ADS_ESYNTAX)
                fail_msg("'%s' parses", cases[k].text);
            continue;
        }
        if (rc)
            fail_msg("'%s' does not parse: %s", cases[k].text, err.message);
        if (strcmp(ads_expr_op(e), cases[k].op) != 0)
            fail_msg("'%s' reads as '%s'", cases[k].text, ads_expr_op(e));
    }
    assert_int_equal(value_of("-16>>>60").u.i, 15);
    assert_int_equal(value_of("-16>>60").u.i, -1);
    assert_true(value_of("!false").u.b);
    assert_int_equal(value_of("~0").u.i, -1);
    assert_int_equal(value_of("undefined ?: 3").u.i, 3);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(lexer__integers_in_every_base),
        T(lexer__integer_overflow_and_bad_digits_are_errors),
        T(lexer__reals),
        T(lexer__minus_joins_a_number_unless_a_value_precedes),
        T(lexer__string_escapes),
        T(lexer__adjacent_strings_join_across_white_space_only),
        T(lexer__comments_and_lines),
        T(lexer__quoted_names),
        T(lexer__keywords_ignore_case),
        T(lexer__times_in_backticks),
        T(lexer__identifiers),
        T(lexer__times_with_expanded_years),
        T(lexer__in_is_isnt_are_names_where_no_operand_precedes),
        T(lexer__backslash_then_nul_is_refused_like_a_raw_nul),
        T(lexer__escaped_line_break_in_a_string_counts_a_line),
        T(lexer__keywords_in_every_case_spelling),
        T(lexer__names_that_share_a_prefix_with_a_keyword_are_names),
        T(lexer__decimal_integers_of_every_length),
        T(lexer__tokens_at_the_very_end_of_the_text),
        T(lexer__plain_strings_and_those_that_need_decoding),
        T(lexer__every_operator_longest_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
