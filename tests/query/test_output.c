/*
 * tests/query/test_output.c: the six output formats of query/format.c byte
 * for byte, for one small fixed result set whose values need every kind of
 * care (a string with a comma, a quote, a newline and non-ASCII letters;
 * reals; booleans; undefined; a list; a record; an AbsTime; a RelTime; an
 * identifier; an unevaluated expression): with the select list's columns,
 * with SELECT * (csv and tabular then take the type's attributes, in name
 * order), with no rows at all, and for a statement that
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
    /* SELECT * FROM a type: the type's attributes (its Attribute records),
     * in name order, known before the rows, so the rows stream */
    expect_output(ADS_FORMAT_CSV, STAR,
                  "AdType,At,B,Ex,Id,K,L,N,R,Rec,Rt,S\r\n"
                  "T,`2024-01-02T03:04:05Z`,true,,#1495,1,\"{ 1, \"\"x\"\", { } }\",-3,2.5,"
                  "\"[ a = 1; b = \"\"y\"\" ]\",,\"a,b \"\"q\"\"\nline2 \xc3\xa9t\xc3\xa9\"\r\n"
                  "T,,false,K + 1,,2,,,1e+100,,`1h30m`,\" padded \"\r\n"
                  "T,,,,,10,,7,0.1,,,\xc3\xbc\r\n");
    /* no rows: the header alone (the columns are known) */
    expect_output(ADS_FORMAT_CSV, NONE_COLS, "K,the s\r\n");
    expect_output(ADS_FORMAT_CSV, NONE_STAR, "AdType,At,B,Ex,Id,K,L,N,R,Rec,Rt,S\r\n");
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
    /* SELECT *: the type's attributes in name order, those no row shown
     * has included */
    expect_output(ADS_FORMAT_TABULAR, "SELECT * FROM T WHERE K > 1",
                  "AdType  At  B      Ex     Id   K  L  N       R  Rec  Rt       S\n"
                  "------  --  -----  -----  --  --  -  -  ------  ---  -------  --------\n"
                  "T           false  K + 1       2        1e+100       `1h30m`   padded\n"
                  "T                             10     7     0.1                \xc3\xbc\n");
    expect_output(ADS_FORMAT_TABULAR, NONE_COLS, "K  the s\n-  -----\n");
    expect_output(ADS_FORMAT_TABULAR, "SELECT * FROM T WHERE false",
                  "AdType  At  B  Ex  Id  K  L  N  R  Rec  Rt  S\n"
                  "------  --  -  --  --  -  -  -  -  ---  --  -\n");
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
                        "unknown format 'yaml'; expected text, native, json, jsonl, csv, "
                        "tabular, values or xml");
    assert_int_equal(ads_format_parse(&f, NULL, &err), ADS_EINVAL);
}

/* ---- jsonl and values ---- */

static void jsonl__one_object_per_line_and_nothing_else(void **state)
{
    (void)state;
    expect_output(ADS_FORMAT_JSONL, "SELECT K, S, U FROM T WHERE K > 1 ORDER BY K",
                  "{\"K\":2,\"S\":\" padded \",\"U\":null}\n"
                  "{\"K\":10,\"S\":\"\xc3\xbc\",\"U\":null}\n");
    expect_output(ADS_FORMAT_JSONL, NONE_STAR, "");
    ads_format f;
    ads_error err;
    assert_int_equal(ads_format_parse(&f, "ndjson", &err), 0);
    assert_int_equal(f, ADS_FORMAT_JSONL);
}

static void values__condor_af_spaces_between_values(void **state)
{
    (void)state;
    /* strings raw, undefined spelled out, the rest in ClassAd syntax */
    expect_output(ADS_FORMAT_VALUES, "SELECT K, S, U, Rt, N * 2 FROM T WHERE K > 1 ORDER BY K",
                  "2  padded  undefined `1h30m` undefined\n"
                  "10 \xc3\xbc undefined undefined 14\n");
    /* SELECT *: every attribute of the type, absent ones undefined */
    expect_output(ADS_FORMAT_VALUES, "SELECT * FROM T WHERE K == 10",
                  "T undefined undefined undefined undefined 10 undefined 7 0.1 undefined "
                  "undefined \xc3\xbc\n");
    expect_output(ADS_FORMAT_VALUES, NONE_COLS, "");
}

/* ---- headers, UTF-8 and display width, through the sink itself ---- */

/* A writer fed rows of one string attribute S by hand. */
static char *feed(ads_format f, bool header, const char *const *strs, size_t n, size_t *peak)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    ads_writer *w;
    ads_error err;
    assert_int_equal(ads_writer_new(&w, f, mem, &err), 0);
    ads_writer_set_header(w, header);
    ads_sink sink = ads_writer_sink(w);
    ads_str col = {"S", 1};
    assert_int_equal(sink.begin(sink.ctx, &col, 1, &err), 0);
    ads_arena *a = ads_arena_new();
    for (size_t i = 0; i < n; i++) {
        ads_record_builder *b;
        ads_arena_reset(a);
        ads_value v = ads_string(strs[i], strlen(strs[i]));
        assert_int_equal(ads_record_builder_new(&b, a, &err), 0);
        assert_int_equal(ads_record_builder_add_value(b, "S", 1, &v, &err), 0);
        assert_int_equal(sink.row(sink.ctx, ads_record_builder_finish(b), &err), 0);
    }
    assert_int_equal(sink.end(sink.ctx, &err), 0);
    ads_arena_free(a);
    *peak = ads_writer_peak_rows(w);
    ads_writer_free(w);
    fclose(mem);
    return text;
}

static void expect_fed(ads_format f, bool header, const char *const *strs, size_t n,
                       const char *want)
{
    size_t peak;
    char *got = feed(f, header, strs, n, &peak);
    if (strcmp(got, want) != 0)
        fail_msg("%s\n--- got:\n%s--- want:\n%s---", ads_format_name(f), got, want);
    free(got);
}

static void csv__bytes_that_are_not_utf8_become_u_fffd(void **state)
{
    (void)state;
    /* a lone continuation byte, a cut-short sequence, an overlong '/', a
     * surrogate: each bad byte one U+FFFD; good text untouched */
    const char *strs[] = {"a\x80z", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82\xac ok"};
    expect_fed(ADS_FORMAT_CSV, true, strs, 5,
               "S\r\n"
               "a\xef\xbf\xbdz\r\n"
               "\xef\xbf\xbd\r\n"
               "\xef\xbf\xbd\xef\xbf\xbd\r\n"
               "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\r\n"
               "\xe2\x82\xac ok\r\n");
}

static void tabular__aligns_by_display_width(void **state)
{
    (void)state;
    /* CJK ideographs and fullwidth letters take two columns, a combining
     * accent none, so the next column starts at the same place on each line */
    const char *strs[] = {"\xe6\x97\xa5\xe6\x9c\xac", /* two ideographs: 4 columns */
                          "e\xcc\x81", /* e + combining acute: 1 column */
                          "\xef\xbc\xa1", /* fullwidth A: 2 columns */
                          "abcd"};
    expect_fed(ADS_FORMAT_TABULAR, true, strs, 4,
               "S\n"
               "----\n"
               "\xe6\x97\xa5\xe6\x9c\xac\n"
               "e\xcc\x81\n"
               "\xef\xbc\xa1\n"
               "abcd\n");
    /* two columns make the padding visible */
    expect_output(ADS_FORMAT_TABULAR, "SELECT \"\xe6\x97\xa5\" AS A, 1 AS B FROM T WHERE K == 1",
                  "A   B\n"
                  "--  -\n"
                  "\xe6\x97\xa5  1\n");
}

static void formats__no_header_for_scripts(void **state)
{
    (void)state;
    const char *strs[] = {"x", "y,z"};
    expect_fed(ADS_FORMAT_CSV, false, strs, 2, "x\r\n\"y,z\"\r\n");
    expect_fed(ADS_FORMAT_TABULAR, false, strs, 2, "x\ny,z\n");
    expect_fed(ADS_FORMAT_CSV, false, strs, 0, "");
}

/* Memory bounded by rows held, not rows written: csv with known columns
 * holds none; tabular holds its measuring sample and then streams, a later
 * wider value written whole, past the alignment. */
static void formats__rows_held_stay_bounded(void **state)
{
    (void)state;
    enum { N = 3 * ADS_WRITER_SAMPLE_ROWS };
    const char **strs = calloc(N, sizeof *strs);
    assert_non_null(strs);
    for (size_t i = 0; i < N; i++)
        strs[i] = i == N - 1 ? "wider" : "ab";
    size_t peak;
    char *got = feed(ADS_FORMAT_CSV, true, strs, N, &peak);
    assert_int_equal(peak, 0);
    free(got);
    got = feed(ADS_FORMAT_TABULAR, true, strs, N, &peak);
    assert_int_equal(peak, ADS_WRITER_SAMPLE_ROWS);
    assert_int_equal(strncmp(got, "S\n--\nab\nab\n", 11), 0);
    size_t len = strlen(got);
    assert_true(len > 8);
    assert_string_equal(got + len - 9, "ab\nwider\n");
    free(got);
    free(strs);
}

/* SELECT * through the store: csv streams (the type's columns come first);
 * over all types (no FROM) it holds its sample and then streams. */
static void formats__select_star_streams_over_many_rows(void **state)
{
    (void)state;
    ads_error err;
    ts_declare(db, "Big", "K", NULL);
    ads_buf stmt = ADS_BUF_INIT;
    ads_buf_adds(&stmt, "STORE ");
    for (int i = 0; i < 2500; i++)
        ads_buf_printf(&stmt, "%s[ AdType = \"Big\"; K = %d; V = %d ]", i ? ", " : "", i, i * 2);
    assert_false(stmt.failed);
    assert_int_equal(ads_query_exec(q, stmt.p, stmt.len, NULL, NULL, NULL, &err), 0);
    ads_buf_free(&stmt);
    static const struct {
        ads_format f;
        const char *stmt;
        size_t peak;
    } cases[] = {
        {ADS_FORMAT_CSV, "SELECT * FROM Big", 0},
        {ADS_FORMAT_CSV, "SELECT K, V FROM Big", 0},
        {ADS_FORMAT_TABULAR, "SELECT * FROM Big", ADS_WRITER_SAMPLE_ROWS},
        {ADS_FORMAT_CSV, "SELECT * WHERE AdType == \"Big\"", ADS_WRITER_SAMPLE_ROWS},
        {ADS_FORMAT_JSON, "SELECT * FROM Big", 0},
        {ADS_FORMAT_VALUES, "SELECT * FROM Big", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        ads_writer *w;
        assert_int_equal(ads_writer_new(&w, cases[i].f, mem, &err), 0);
        ads_sink sink = ads_writer_sink(w);
        ads_exec_info info;
        if (ads_query_exec(q, cases[i].stmt, strlen(cases[i].stmt), &sink, NULL, &info, &err))
            fail_msg("%s: %s", cases[i].stmt, err.message);
        assert_int_equal(info.rows, 2500);
        assert_int_equal(ads_writer_peak_rows(w), cases[i].peak);
        ads_writer_free(w);
        fclose(mem);
        size_t lines = 0;
        for (size_t k = 0; k < len; k++)
            lines += text[k] == '\n';
        if (cases[i].f == ADS_FORMAT_CSV) {
            assert_int_equal(lines, 2501);
            const char *head = strstr(cases[i].stmt, "*") ? "AdType,K,V\r\nBig,0,0\r\n"
                                                           : "K,V\r\n0,0\r\n";
            assert_int_equal(strncmp(text, head, strlen(head)), 0);
        }
        free(text);
    }
}

/* One writer, statement after statement: each gets its own output. */
static void formats__one_writer_serves_several_statements(void **state)
{
    (void)state;
    static const struct {
        ads_format f;
        const char *want;
    } cases[] = {
        {ADS_FORMAT_JSON, "[\n{\"K\":1}\n]\n[\n{\"K\":2}\n]\n"},
        {ADS_FORMAT_CSV, "K\r\n1\r\nK\r\n2\r\n"},
        {ADS_FORMAT_TABULAR, "K\n-\n1\nK\n-\n2\n"},
        {ADS_FORMAT_XML, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        ads_writer *w;
        ads_error err;
        assert_int_equal(ads_writer_new(&w, cases[i].f, mem, &err), 0);
        ads_sink sink = ads_writer_sink(w);
        const char *s1 = "SELECT K FROM T WHERE K == 1", *s2 = "SELECT K FROM T WHERE K == 2";
        assert_int_equal(ads_query_exec(q, s1, strlen(s1), &sink, NULL, NULL, &err), 0);
        assert_int_equal(ads_query_exec(q, s2, strlen(s2), &sink, NULL, NULL, &err), 0);
        ads_writer_free(w);
        fclose(mem);
        if (cases[i].want)
            assert_string_equal(text, cases[i].want);
        else /* xml: two whole documents */
            assert_non_null(strstr(strstr(text, "</classads>"), "<classads>"));
        free(text);
    }
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
        T(jsonl__one_object_per_line_and_nothing_else),
        T(values__condor_af_spaces_between_values),
        T(csv__bytes_that_are_not_utf8_become_u_fffd),
        T(tabular__aligns_by_display_width),
        T(formats__no_header_for_scripts),
        T(formats__rows_held_stay_bounded),
        T(formats__select_star_streams_over_many_rows),
        T(formats__one_writer_serves_several_statements),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
