/*
 * tools/cmd_eval.c: `adstore eval [-c RECORD] EXPR`: evaluate a ClassAd
 * expression in the context of a record and print the value in new ClassAd
 * syntax, one line. Parse errors give line and column; evaluation itself
 * cannot fail (error is a value). No store is opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classad/classad.h"
#include "tools/cli.h"

static int parse_failure(cli_ctx *c, const char *what, const ads_error *err)
{
    if (err->line > 0)
        return cli_fail(c, EXIT_INPUT, "%s: line %d, column %d: %s", what, err->line,
                        err->column, err->message);
    return cli_fail(c, EXIT_INPUT, "%s: %s", what, err->message);
}

int cmd_eval(cli_ctx *c, int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    const char *record_text = "[]";
    cli_args a;
    const char *opt;
    int rc = EXIT_OK;
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args_init(&a, argc, argv, ops);
    while ((opt = cli_args_next(&a))) {
        if (strcmp(opt, "-c") == 0 || strcmp(opt, "--context") == 0 ||
            strncmp(opt, "--context=", 10) == 0) {
            if (!(record_text = cli_args_value(&a, c, opt))) {
                free(ops);
                return EXIT_USAGE;
            }
        } else if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            free(ops);
            return cli_print_help("eval");
        } else {
            /* "-1" or "-x": an expression that starts with a minus */
            a.ops[a.nops++] = (char *)opt;
        }
    }
    if (a.nops != 1) {
        free(ops);
        return cli_fail(c, EXIT_USAGE, "expected one expression (quote it), got %d", a.nops);
    }
    const char *expr_text = a.ops[0];
    free(ops);

    ads_arena *arena = ads_arena_new();
    ads_buf out = ADS_BUF_INIT;
    ads_error err;
    const ads_record *ctx;
    const ads_expr *e;
    ads_value v;
    if (!arena)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    if (ads_record_parse(&ctx, arena, record_text, strlen(record_text), &err)) {
        rc = parse_failure(c, "record (-c)", &err);
        goto done;
    }
    if (ads_expr_parse(&e, arena, expr_text, strlen(expr_text), &err)) {
        rc = parse_failure(c, "expression", &err);
        goto done;
    }
    ads_view view = ads_record_view(ctx, NULL);
    if (ads_expr_eval(&v, e, &view, arena)) {
        rc = cli_fail(c, EXIT_INPUT, "out of memory");
        goto done;
    }
    ads_value_unparse(&out, &v);
    if (out.failed) {
        rc = cli_fail(c, EXIT_INPUT, "out of memory");
        goto done;
    }
    fwrite(out.p, 1, out.len, stdout);
    putchar('\n');
done:
    ads_buf_free(&out);
    ads_arena_free(arena);
    return rc;
}
