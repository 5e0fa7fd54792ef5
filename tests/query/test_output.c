/*
 * tests/query/test_output.c: the six output formats of query/format.c byte
 * for byte, for one small fixed result set whose values need every kind of
 * care (a string with a comma, a quote, a newline and non-ASCII letters;
 * reals; booleans; undefined; a list; a record; an AbsTime; a RelTime; an
 * identifier; an unevaluated expression): with the select list's columns,
 * with SELECT * (csv and tabular then take the union of the rows' attribute
 * names in first-seen order), with no rows at all, and for a statement that
 * fails part way (the rows it produced, closed, once the writer is aborted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "query/query.h"
#include "tests/engine/helpers.h"

static tstore ts;
static ads_db *db;
static ads_query *q;

static int setup(void **state)
{
    (void)state;
    db = ts_open(&ts, 1700000000.0);
    ts_declare(db, "T", "K", NULL);
    ads_error err;
    /* stored as written, one record at a time (so Ex stays an expression) */
    static const char *const recs[] = {
        "[ AdType = \"T\"; K = 1; S = \"a,b \\\"q\\\"\\nline2 \xc3\xa9t\xc3\xa9\"; R = 2.5; "
        "B = true; L = { 1, \"x\", { } }; Rec = [ a = 1; b = \"y\" ]; "
        "At = `2024-01-02T03:04:05Z`; Id = #1495; N = -3 ]",
        ("[ AdType = \"T\"; K = 2; S = \" padded \"; R = 1e100; B = false; Rt = `1h30m`; "
         "Ex = K + 1 ]"),
        "[ AdType = \"T\"; K = 10; S = \"\xc3\xbc\"; R = 0.1; N = 7; _Hidden = 1 ]",
    };
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++)
        if (ts_store(db, &err, recs[i]))
            fail_msg("store %s: %s", recs[i], err.message);
    if (ads_query_new(&q, db, &err))
        fail_msg("query: %s", err.message);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ads_query_free(q);
    ts_close(&ts);
    return 0;
}

/* What the writer for format f writes for stmt (malloc'd). */
static char *output(ads_format f, const char *stmt)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    ads_writer *w;
    ads_error err;
    assert_int_equal(ads_writer_new(&w, f, mem, &err), 0);
    ads_sink sink = ads_writer_sink(w);
    if (ads_query_exec(q, stmt, strlen(stmt), &sink, NULL, NULL, &err))
        fail_msg("%s: %s", stmt, err.message);
    ads_writer_free(w);
    fclose(mem);
    assert_int_equal(strlen(text), len); /* no NUL bytes */
    return text;
}

static void expect_output(ads_format f, const char *stmt, const char *want)
{
    char *got = output(f, stmt);
    if (strcmp(got, want) != 0)
        fail_msg("%s as %s\n--- got:\n%s--- want:\n%s---", stmt, ads_format_name(f), got, want);
    free(got);
}

#define COLS "SELECT K, S, R, B, U, L, Rec, At, Id, Rt, Ex, N * 2 AS N2 FROM T ORDER BY K"
#define STAR "SELECT * FROM T"
#define NONE_COLS "SELECT K, S AS 'the s' FROM T WHERE false"
#define NONE_STAR "SELECT * FROM T WHERE false"

/* ---- text ---- */

static void text__long_form_a_blank_line_after_each_row(void **state)
{
    (void)state;
    expect_output(ADS_FORMAT_TEXT, COLS,
                  "K = 1\n"
                  "S := \"a,b \\\"q\\\"\\nline2 \xc3\xa9t\xc3\xa9\"\n"
                  "R = 2.5\n"
                  "B = true\n"
                  "U = undefined\n"
                  "L = { 1, \"x\", { } }\n"
                  "Rec.a = 1\n"
                  "Rec.b = \"y\"\n"
                  "At = `2024-01-02T03:04:05Z`\n"
                  "Id = #1495\n"
                  "Rt = undefined\n"
                  "Ex = undefined\n"
                  "N2 = -6\n"
                  "\n"
                  "K = 2\n"
                  "S = \" padded \"\n"
                  "R = 1e+100\n"
                  "B = false\n"
                  "U = undefined\n"
                  "L = undefined\n"
                  "Rec = undefined\n"
                  "At = undefined\n"
                  "Id = undefined\n"
                  "Rt = `1h30m`\n"
                  "Ex = 3\n"
                  "N2 = undefined\n"
                  "\n"
                  "K = 10\n"
                  "S = \"\xc3\xbc\"\n"
                  "R = 0.1\n"
                  "B = undefined\n"
                  "U = undefined\n"
                  "L = undefined\n"
                  "Rec = undefined\n"
                  "At = undefined\n"
                  "Id = undefined\n"
                  "Rt = undefined\n"
                  "Ex = undefined\n"
                  "N2 = 14\n"
                  "\n");
    expect_output(ADS_FORMAT_TEXT, STAR,
                  "AdType = \"T\"\n"
                  "At = `2024-01-02T03:04:05Z`\n"
                  "B = true\n"
                  "Id = #1495\n"
                  "K = 1\n"
                  "L = { 1, \"x\", { } }\n"
                  "N = -3\n"
                  "R = 2.5\n"
                  "Rec.a = 1\n"
                  "Rec.b = \"y\"\n"
                  "S := \"a,b \\\"q\\\"\\nline2 \xc3\xa9t\xc3\xa9\"\n"
                  "\n"
                  "AdType = \"T\"\n"
                  "B = false\n"
                  "Ex = K + 1\n"
                  "K = 2\n"
                  "R = 1e+100\n"
                  "Rt = `1h30m`\n"
                  "S = \" padded \"\n"
                  "\n"
                  "AdType = \"T\"\n"
                  "K = 10\n"
                  "N = 7\n"
                  "R = 0.1\n"
                  "S = \"\xc3\xbc\"\n"
                  "\n");
    expect_output(ADS_FORMAT_TEXT, NONE_COLS, "");
    expect_output(ADS_FORMAT_TEXT, NONE_STAR, "");
}

/* ---- native ---- */

static void native__one_record_per_line(void **state)
{
    (void)state;
    expect_output(ADS_FORMAT_NATIVE, COLS,
                  "[ K = 1; S = \"a,b \\\"q\\\"\\nline2 \xc3\xa9t\xc3\xa9\"; R = 2.5; B = true; "
                  "U = undefined; L = { 1, \"x\", { } }; Rec = [ a = 1; b = \"y\" ]; "
                  "At = `2024-01-02T03:04:05Z`; Id = #1495; Rt = undefined; Ex = undefined; "
                  "N2 = -6 ]\n"
                  "[ K = 2; S = \" padded \"; R = 1e+100; B = false; U = undefined; "
                  "L = undefined; Rec = undefined; At = undefined; Id = undefined; "
                  "Rt = `1h30m`; Ex = 3; N2 = undefined ]\n"
                  "[ K = 10; S = \"\xc3\xbc\"; R = 0.1; B = undefined; U = undefined; "
                  "L = undefined; Rec = undefined; At = undefined; Id = undefined; "
                  "Rt = undefined; Ex = undefined; N2 = 14 ]\n");
    expect_output(ADS_FORMAT_NATIVE, STAR,
                  "[ AdType = \"T\"; At = `2024-01-02T03:04:05Z`; B = true; Id = #1495; K = 1; "
                  "L = { 1, \"x\", { } }; N = -3; R = 2.5; Rec = [ a = 1; b = \"y\" ]; "
                  "S = \"a,b \\\"q\\\"\\nline2 \xc3\xa9t\xc3\xa9\" ]\n"
                  "[ AdType = \"T\"; B = false; Ex = K + 1; K = 2; R = 1e+100; Rt = `1h30m`; "
                  "S = \" padded \" ]\n"
                  "[ AdType = \"T\"; K = 10; N = 7; R = 0.1; S = \"\xc3\xbc\" ]\n");
    expect_output(ADS_FORMAT_NATIVE, NONE_COLS, "");
    expect_output(ADS_FORMAT_NATIVE, NONE_STAR, "");
}

/* ---- json ---- */

static void json__an_array_of_objects_one_per_line(void **state)
{
    (void)state;
    expect_output(ADS_FORMAT_JSON, COLS,
                  "[\n"
                  "{\"K\":1,\"S\":\"a,b \\\"q\\\"\\nline2 \xc3\xa9t\xc3\xa9\",\"R\":2.5,"
                  "\"B\":true,\"U\":null,\"L\":[1,\"x\",[]],\"Rec\":{\"a\":1,\"b\":\"y\"},"
                  "\"At\":\"\\/Expr(`2024-01-02T03:04:05Z`)\\/\",\"Id\":\"\\/Expr(#1495)\\/\","
                  "\"Rt\":null,\"Ex\":null,\"N2\":-6},\n"
                  "{\"K\":2,\"S\":\" padded \",\"R\":1e+100,\"B\":false,\"U\":null,\"L\":null,"
                  "\"Rec\":null,\"At\":null,\"Id\":null,\"Rt\":\"\\/Expr(`1h30m`)\\/\","
                  "\"Ex\":3,\"N2\":null},\n"
                  "{\"K\":10,\"S\":\"\xc3\xbc\",\"R\":0.1,\"B\":null,\"U\":null,\"L\":null,"
                  "\"Rec\":null,\"At\":null,\"Id\":null,\"Rt\":null,\"Ex\":null,\"N2\":14}\n"
                  "]\n");
    expect_output(ADS_FORMAT_JSON, STAR,
                  "[\n"
                  "{\"AdType\":\"T\",\"At\":\"\\/Expr(`2024-01-02T03:04:05Z`)\\/\",\"B\":true,"
                  "\"Id\":\"\\/Expr(#1495)\\/\",\"K\":1,\"L\":[1,\"x\",[]],\"N\":-3,\"R\":2.5,"
                  "\"Rec\":{\"a\":1,\"b\":\"y\"},"
                  "\"S\":\"a,b \\\"q\\\"\\nline2 \xc3\xa9t\xc3\xa9\"},\n"
                  "{\"AdType\":\"T\",\"B\":false,\"Ex\":\"\\/Expr(K + 1)\\/\",\"K\":2,"
                  "\"R\":1e+100,\"Rt\":\"\\/Expr(`1h30m`)\\/\",\"S\":\" padded \"},\n"
                  "{\"AdType\":\"T\",\"K\":10,\"N\":7,\"R\":0.1,\"S\":\"\xc3\xbc\"}\n"
                  "]\n");
    expect_output(ADS_FORMAT_JSON, NONE_COLS, "[]\n");
    expect_output(ADS_FORMAT_JSON, NONE_STAR, "[]\n");
}

/* ---- csv ---- */

static void csv__rfc4180_with_a_header(void **state)
{
    (void)state;
    expect_output(
        ADS_FORMAT_CSV, COLS,
        "K,S,R,B,U,L,Rec,At,Id,Rt,Ex,N2\r\n"
        "1,\"a,b \"\"q\"\"\nline2 \xc3\xa9t\xc3\xa9\",2.5,true,,\"{ 1, \"\"x\"\", { } }\","
        "\"[ a = 1; b = \"\"y\"\" ]\",`2024-01-02T03:04:05Z`,#1495,,,-6\r\n"
        "2,\" padded \",1e+100,false,,,,,,`1h30m`,3,\r\n"
        "10,\xc3\xbc,0.1,,,,,,,,,14\r\n");
    /* SELECT *: the union of the rows' attributes, in first-seen order */
    expect_output(ADS_FORMAT_CSV, STAR,
                  "AdType,At,B,Id,K,L,N,R,Rec,S,Ex,Rt\r\n"
                  "T,`2024-01-02T03:04:05Z`,true,#1495,1,\"{ 1, \"\"x\"\", { } }\",-3,2.5,"
                  "\"[ a = 1; b = \"\"y\"\" ]\",\"a,b \"\"q\"\"\nline2 \xc3\xa9t\xc3\xa9\",,\r\n"
                  "T,,false,,2,,,1e+100,,\" padded \",K + 1,`1h30m`\r\n"
                  "T,,,,10,,7,0.1,,\xc3\xbc,,\r\n");
    /* no rows: the header alone when the columns are known, else nothing */
    expect_output(ADS_FORMAT_CSV, NONE_COLS, "K,the s\r\n");
    expect_output(ADS_FORMAT_CSV, NONE_STAR, "");
    /* a label that needs quoting */
    expect_output(ADS_FORMAT_CSV, "SELECT K AS 'a,b', K AS ' k' FROM T WHERE K == 2",
                  "\"a,b\",\" k\"\r\n2,2\r\n");
}

/* ---- tabular ---- */

static void tabular__aligned_columns(void **state)
{
    (void)state;
    /* numbers right-aligned (a column of numbers and blanks), the rest left;
     * widths in characters, not bytes; a newline in a cell shown as \n */
    expect_output(ADS_FORMAT_TABULAR,
                  "SELECT K, S, R, B, L, Rec, At, Id, Rt, Ex, N * 2 AS N2 FROM T ORDER BY K",
                  " K  S                        R  B      L                Rec                 "
                  "At                      Id     Rt       Ex  N2\n"
                  "--  ------------------  ------  -----  ---------------  ------------------  "
                  "----------------------  -----  -------  --  --\n"
                  " 1  a,b \"q\"\\nline2 \xc3\xa9t\xc3\xa9     2.5  true   { 1, \"x\", { } }  "
                  "[ a = 1; b = \"y\" ]  `2024-01-02T03:04:05Z`  #1495               -6\n"
                  " 2   padded             1e+100  false                                      "
                  "                                `1h30m`   3\n"
                  "10  \xc3\xbc                      0.1                                        "
                  "                                                  14\n");
    /* SELECT *: the union of the attributes in first-seen order (N comes last) */
    expect_output(ADS_FORMAT_TABULAR, "SELECT * FROM T WHERE K > 1",
                  "AdType  B      Ex      K       R  Rt       S         N\n"
                  "------  -----  -----  --  ------  -------  --------  -\n"
                  "T       false  K + 1   2  1e+100  `1h30m`   padded\n"
                  "T                     10     0.1           \xc3\xbc         7\n");
    expect_output(ADS_FORMAT_TABULAR, NONE_COLS, "K  the s\n-  -----\n");
    expect_output(ADS_FORMAT_TABULAR, NONE_STAR, "");
}

/* ---- xml ---- */

static void xml__the_classads_form(void **state)
{
    (void)state;
    expect_output(ADS_FORMAT_XML, COLS,
                  "<?xml version=\"1.0\"?>\n"
                  "<!DOCTYPE classads SYSTEM \"classads.dtd\">\n"
                  "<classads>\n"
                  "<c>\n"
                  "    <a n=\"K\"><i>1</i></a>\n"
                  "    <a n=\"S\"><s>a,b \"q\"\\nline2 \xc3\xa9t\xc3\xa9</s></a>\n"
                  "    <a n=\"R\"><r>2.5</r></a>\n"
                  "    <a n=\"B\"><b v=\"t\"/></a>\n"
                  "    <a n=\"U\"><un/></a>\n"
                  "    <a n=\"L\"><l><i>1</i><s>x</s><l></l></l></a>\n"
                  "    <a n=\"Rec\"><c><a n=\"a\"><i>1</i></a><a n=\"b\"><s>y</s></a></c></a>\n"
                  "    <a n=\"At\"><at>2024-01-02T03:04:05Z</at></a>\n"
                  "    <a n=\"Id\"><e>#1495</e></a>\n"
                  "    <a n=\"Rt\"><un/></a>\n"
                  "    <a n=\"Ex\"><un/></a>\n"
                  "    <a n=\"N2\"><i>-6</i></a>\n"
                  "</c>\n"
                  "<c>\n"
                  "    <a n=\"K\"><i>2</i></a>\n"
                  "    <a n=\"S\"><s> padded </s></a>\n"
                  "    <a n=\"R\"><r>1e+100</r></a>\n"
                  "    <a n=\"B\"><b v=\"f\"/></a>\n"
                  "    <a n=\"U\"><un/></a>\n"
                  "    <a n=\"L\"><un/></a>\n"
                  "    <a n=\"Rec\"><un/></a>\n"
                  "    <a n=\"At\"><un/></a>\n"
                  "    <a n=\"Id\"><un/></a>\n"
                  "    <a n=\"Rt\"><rt>1h30m</rt></a>\n"
                  "    <a n=\"Ex\"><i>3</i></a>\n"
                  "    <a n=\"N2\"><un/></a>\n"
                  "</c>\n"
                  "<c>\n"
                  "    <a n=\"K\"><i>10</i></a>\n"
                  "    <a n=\"S\"><s>\xc3\xbc</s></a>\n"
                  "    <a n=\"R\"><r>0.1</r></a>\n"
                  "    <a n=\"B\"><un/></a>\n"
                  "    <a n=\"U\"><un/></a>\n"
                  "    <a n=\"L\"><un/></a>\n"
                  "    <a n=\"Rec\"><un/></a>\n"
                  "    <a n=\"At\"><un/></a>\n"
                  "    <a n=\"Id\"><un/></a>\n"
                  "    <a n=\"Rt\"><un/></a>\n"
                  "    <a n=\"Ex\"><un/></a>\n"
                  "    <a n=\"N2\"><i>14</i></a>\n"
                  "</c>\n"
                  "</classads>\n");
    expect_output(ADS_FORMAT_XML, "SELECT * FROM T WHERE K == 2",
                  "<?xml version=\"1.0\"?>\n"
                  "<!DOCTYPE classads SYSTEM \"classads.dtd\">\n"
                  "<classads>\n"
                  "<c>\n"
                  "    <a n=\"AdType\"><s>T</s></a>\n"
                  "    <a n=\"B\"><b v=\"f\"/></a>\n"
                  "    <a n=\"Ex\"><e>K + 1</e></a>\n"
                  "    <a n=\"K\"><i>2</i></a>\n"
                  "    <a n=\"R\"><r>1e+100</r></a>\n"
                  "    <a n=\"Rt\"><rt>1h30m</rt></a>\n"
                  "    <a n=\"S\"><s> padded </s></a>\n"
                  "</c>\n"
                  "</classads>\n");
    const char *empty = "<?xml version=\"1.0\"?>\n"
                        "<!DOCTYPE classads SYSTEM \"classads.dtd\">\n"
                        "<classads>\n"
                        "</classads>\n";
    expect_output(ADS_FORMAT_XML, NONE_COLS, empty);
    expect_output(ADS_FORMAT_XML, NONE_STAR, empty);
}

/* ---- around the formats ---- */

static void formats__hidden_attributes_and_aggregates(void **state)
{
    (void)state;
    /* hidden attributes are shown when named */
    expect_output(ADS_FORMAT_CSV, "SELECT K, _Hidden FROM T WHERE K == 10",
                  "K,_Hidden\r\n10,1\r\n");
    /* an aggregate's label as written */
    expect_output(ADS_FORMAT_TABULAR, "SELECT count(*), sum(R) AS total FROM T",
                  "count(*)   total\n"
                  "--------  ------\n"
                  "       3  1e+100\n");
    expect_output(ADS_FORMAT_JSON, "SELECT count(*), avg(K) FROM T WHERE false",
                  "[\n{\"count(*)\":0,\"avg(K)\":null}\n]\n");
}

/* A datasource of two rows, the first with only a hidden attribute. */
static int two_open(void *ctx, ads_txn *txn, const ads_expr *where, void **cursor, ads_error *err)
{
    (void)ctx, (void)txn, (void)where, (void)err;
    *cursor = calloc(1, sizeof(int));
    return 0;
}

static int two_next(void *cursor, const ads_record **row, ads_arena *a, ads_error *err)
{
    int *i = cursor;
    static const char *const recs[] = {"[ _x = 1 ]", "[ a = 1; b = \"two\" ]"};
    if (*i >= 2)
        return 0;
    const char *t = recs[(*i)++];
    return ads_record_parse(row, a, t, strlen(t), err) ? -1 : 1;
}

static void two_close(void *cursor)
{
    free(cursor);
}

static void formats__a_row_with_no_attributes(void **state)
{
    (void)state;
    ads_datasource ds = {two_open, two_next, two_close, NULL};
    ads_error err;
    assert_int_equal(ads_query_register(q, "two", &ds, &err), 0);
    const char *s = "SELECT * USING two";
    expect_output(ADS_FORMAT_TEXT, s, "\na = 1\nb = \"two\"\n\n");
    expect_output(ADS_FORMAT_NATIVE, s, "[ ]\n[ a = 1; b = \"two\" ]\n");
    expect_output(ADS_FORMAT_JSON, s, "[\n{},\n{\"a\":1,\"b\":\"two\"}\n]\n");
    expect_output(ADS_FORMAT_CSV, s, "a,b\r\n,\r\n1,two\r\n");
    expect_output(ADS_FORMAT_TABULAR, s, "a  b\n-  ---\n\n1  two\n");
    expect_output(ADS_FORMAT_XML, s,
                  "<?xml version=\"1.0\"?>\n"
                  "<!DOCTYPE classads SYSTEM \"classads.dtd\">\n"
                  "<classads>\n"
                  "<c>\n"
                  "</c>\n"
                  "<c>\n"
                  "    <a n=\"a\"><i>1</i></a>\n"
                  "    <a n=\"b\"><s>two</s></a>\n"
                  "</c>\n"
                  "</classads>\n");
}

/* A datasource that gives fail_after rows ([ a = 1 ], [ a = 2 ], ...), then
 * fails. */
static int failing_after;

static int failing_next(void *cursor, const ads_record **row, ads_arena *a, ads_error *err)
{
    int *i = cursor;
    if (*i >= failing_after)
        return ads_error_set(err, ADS_ESTORAGE, "the source broke");
    char t[32];
    snprintf(t, sizeof t, "[ a = %d ]", ++*i);
    return ads_record_parse(row, a, t, strlen(t), err) ? -1 : 1;
}

/* What format f holds after a statement that failed: the writer aborted. */
static char *aborted_output(ads_format f, const char *stmt)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    ads_writer *w;
    ads_error err;
    assert_int_equal(ads_writer_new(&w, f, mem, &err), 0);
    ads_sink sink = ads_writer_sink(w);
    assert_int_equal(ads_query_exec(q, stmt, strlen(stmt), &sink, NULL, NULL, &err), ADS_ESTORAGE);
    assert_string_equal(err.message, "the source broke");
    assert_int_equal(ads_writer_abort(w, &err), 0);
    assert_int_equal(ads_writer_abort(w, &err), 0); /* once is enough */
    ads_writer_free(w);
    fclose(mem);
    return text;
}

static void formats__a_statement_failing_part_way_keeps_its_rows_well_formed(void **state)
{
    (void)state;
    ads_datasource ds = {two_open, failing_next, two_close, NULL};
    ads_error err;
    assert_int_equal(ads_query_register(q, "failing", &ds, &err), 0);
    static const struct {
        ads_format f;
        const char *two, *none;
    } want[] = {
        {ADS_FORMAT_TEXT, "a = 1\n\na = 2\n\n", ""},
        {ADS_FORMAT_NATIVE, "[ a = 1 ]\n[ a = 2 ]\n", ""},
        {ADS_FORMAT_JSON, "[\n{\"a\":1},\n{\"a\":2}\n]\n", ""},
        {ADS_FORMAT_CSV, "a\r\n1\r\n2\r\n", ""},
        {ADS_FORMAT_TABULAR, "a\n-\n1\n2\n", ""},
        {ADS_FORMAT_XML,
         "<?xml version=\"1.0\"?>\n<!DOCTYPE classads SYSTEM \"classads.dtd\">\n<classads>\n"
         "<c>\n    <a n=\"a\"><i>1</i></a>\n</c>\n<c>\n    <a n=\"a\"><i>2</i></a>\n</c>\n"
         "</classads>\n",
         ""},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        /* the rows produced before the failure, then what closes them */
        failing_after = 2;
        char *got = aborted_output(want[i].f, "SELECT a USING failing");
        if (strcmp(got, want[i].two) != 0)
            fail_msg("%s: got\n%s---\nwant\n%s---", ads_format_name(want[i].f), got, want[i].two);
        free(got);
        /* SELECT * (csv holds the rows) */
        got = aborted_output(want[i].f, "SELECT * USING failing");
        if (strcmp(got, want[i].two) != 0)
            fail_msg("%s *: got\n%s---\nwant\n%s---", ads_format_name(want[i].f), got, want[i].two);
        free(got);
        /* no row before the failure: nothing at all (no [] and no header) */
        failing_after = 0;
        got = aborted_output(want[i].f, "SELECT a USING failing");
        assert_string_equal(got, want[i].none);
        free(got);
    }
    /* after a statement that ended normally, abort writes nothing more */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    ads_writer *w;
    assert_int_equal(ads_writer_new(&w, ADS_FORMAT_JSON, mem, &err), 0);
    ads_sink sink = ads_writer_sink(w);
    assert_int_equal(ads_query_exec(q, "SELECT K FROM T WHERE K == 1", 28, &sink, NULL, NULL, &err),
                     0);
    assert_int_equal(ads_writer_abort(w, &err), 0);
    ads_writer_free(w);
    fclose(mem);
    assert_string_equal(text, "[\n{\"K\":1}\n]\n");
    free(text);
}

static void formats__names_parse_and_print(void **state)
{
    (void)state;
    static const char *const names[] = {"text", "native", "json", "csv", "tabular", "xml"};
    for (int i = 0; i < 6; i++) {
        ads_format f;
        ads_error err;
        assert_int_equal(ads_format_parse(&f, names[i], &err), 0);
        assert_int_equal(f, (ads_format)i);
        assert_string_equal(ads_format_name(f), names[i]);
    }
    ads_format f;
    ads_error err;
    assert_int_equal(ads_format_parse(&f, "JSON", &err), 0);
    assert_int_equal(f, ADS_FORMAT_JSON);
    assert_int_equal(ads_format_parse(&f, "yaml", &err), ADS_EINVAL);
    assert_string_equal(err.message,
                        "unknown format 'yaml'; expected text, native, json, csv, tabular or xml");
    assert_int_equal(ads_format_parse(&f, NULL, &err), ADS_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(text__long_form_a_blank_line_after_each_row),
        T(native__one_record_per_line),
        T(json__an_array_of_objects_one_per_line),
        T(csv__rfc4180_with_a_header),
        T(tabular__aligned_columns),
        T(xml__the_classads_form),
        T(formats__hidden_attributes_and_aggregates),
        T(formats__a_row_with_no_attributes),
        T(formats__a_statement_failing_part_way_keeps_its_rows_well_formed),
        T(formats__names_parse_and_print),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
