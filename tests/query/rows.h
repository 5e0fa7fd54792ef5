/*
 * tests/query/rows.h: what the statement tests share: run a statement and
 * compare the rows it gives, one `[ ... ]` line each, with what is wanted.
 * Include after cmocka.h; the caller frees rows_got at teardown.
 */
#ifndef ADS_TESTS_QUERY_ROWS_H
#define ADS_TESTS_QUERY_ROWS_H

#include <string.h>

#include "query/query.h"

static ads_buf rows_got;

static int rows_begin(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    (void)ctx, (void)cols, (void)ncols, (void)err;
    return 0;
}

static int rows_row(void *ctx, const ads_record *row, ads_error *err)
{
    (void)ctx, (void)err;
    ads_record_unparse(&rows_got, row);
    ads_buf_addc(&rows_got, '\n');
    return 0;
}

static int rows_end(void *ctx, ads_error *err)
{
    (void)ctx, (void)err;
    return 0;
}

/* The statement's rows on q must be exactly want. */
static void rows_expect(ads_query *q, const char *stmt, const char *want)
{
    ads_sink sink = {rows_begin, rows_row, rows_end, NULL};
    ads_exec_info info;
    ads_error err;
    ads_buf_clear(&rows_got);
    if (ads_query_exec(q, stmt, strlen(stmt), &sink, NULL, &info, &err))
        fail_msg("%s\n  failed: %s", stmt, err.message);
    if (strcmp(ads_buf_cstr(&rows_got), want) != 0)
        fail_msg("%s\n  got:\n%s  want:\n%s", stmt, ads_buf_cstr(&rows_got), want);
}

#endif
