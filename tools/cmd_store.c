/*
 * tools/cmd_store.c: `adstore verify` and `adstore stats`, the commands that
 * look at a whole store (shared/spec/tools.md). Both open the store
 * read-only, show a progress bar on a terminal, and end with a one-line
 * summary on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

/* The options of a command that takes none but the common ones. */
static int only_common(cli_ctx *c, int argc, char **argv, const char *help)
{
    char *ops[64];
    cli_args a;
    const char *opt;
    int rc;
    if (argc > 64)
        return cli_fail(c, EXIT_USAGE, "too many arguments");
    cli_args_init(&a, argc, argv, ops);
    while ((opt = cli_args_next(&a))) {
        if ((rc = cli_common_opt(&a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (cli_is_opt(opt, "-h", "--help")) {
            cli_print_help(help);
            return -1;
        } else {
            return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
        }
    }
    if (a.nops)
        return cli_fail(c, EXIT_USAGE, "unexpected argument '%s'", a.ops[0]);
    return 0;
}

typedef struct vctx {
    progress bar;
} vctx;

static void print_problem(void *ctx, const char *problem)
{
    vctx *v = ctx;
    if (v->bar.tty && v->bar.last > 0)
        fprintf(stderr, "\r\033[K");
    printf("%s\n", problem);
    fflush(stdout);
}

int cmd_verify(cli_ctx *c, int argc, char **argv)
{
    int rc = only_common(c, argc, argv, "verify");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    ads_db *db;
    if ((rc = cli_open_db(c, false, &db)))
        return rc;
    vctx v;
    ads_verify_result res;
    ads_error err;
    progress_init(&v.bar, "verify");
    rc = ads_db_verify_ex(&res, db, print_problem, progress_cb, &v, &err);
    progress_done(&v.bar);
    ads_db_close(db);
    if (rc)
        return cli_fail_err(c, &err);
    double secs = progress_elapsed(&v.bar);
    fprintf(stderr, "verify: %llu records, %llu rows, %llu problem%s, %.2f s (%.0f rows/s)\n",
            (unsigned long long)res.records, (unsigned long long)res.rows,
            (unsigned long long)res.problems, res.problems == 1 ? "" : "s", secs,
            secs > 0 ? (double)res.rows / secs : 0.0);
    return res.problems ? EXIT_INPUT : EXIT_OK;
}

typedef struct sctx {
    progress bar;
    bool header;
    uint64_t records, rows;
} sctx;

static int print_type(void *ctx, const ads_type_stats *s)
{
    sctx *x = ctx;
    char lb[32], hb[32];
    if (!x->header) {
        progress_done(&x->bar);
        printf("%-24s %12s %10s %12s %12s %12s\n", "type", "records", "deleted", "history",
               "latest size", "history size");
        x->header = true;
    }
    human_bytes(lb, sizeof lb, (double)s->latest_bytes);
    human_bytes(hb, sizeof hb, (double)s->history_bytes);
    printf("%-24s %12llu %10llu %12llu %12s %12s\n", s->name,
           (unsigned long long)s->counts.records, (unsigned long long)s->counts.deleted,
           (unsigned long long)s->counts.history, lb, hb);
    x->records += s->counts.records;
    x->rows += s->counts.records + s->counts.history;
    return 0;
}

static int print_index(void *ctx, const ads_index_stats *s)
{
    bool *header = ctx;
    char b[32], name[420];
    if (!*header) {
        printf("\n%-37s %12s %12s\n", "index (type.attribute)", "entries", "size");
        *header = true;
    }
    human_bytes(b, sizeof b, (double)s->bytes);
    snprintf(name, sizeof name, "%s.%s", s->type, s->attr);
    printf("%-37s %12llu %12s\n", name, (unsigned long long)s->entries, b);
    return 0;
}

/* "layout of latest rows: 12345 sampled in 200 pages, 97% full, 99% in file order" */
static void print_layout(const char *table, const ads_table_layout *t)
{
    if (!t->entries)
        return;
    printf("layout of %s rows: %llu sampled in %llu page%s, %.0f%% full, %.0f%% in file "
           "order%s\n",
           table, (unsigned long long)t->entries, (unsigned long long)t->leaf_pages,
           t->leaf_pages == 1 ? "" : "s", 100.0 * t->fill, 100.0 * t->in_order,
           ads_table_layout_scattered(t) ? " (adstore compact lays them out afresh)" : "");
}

int cmd_stats(cli_ctx *c, int argc, char **argv)
{
    int rc = only_common(c, argc, argv, "stats");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    ads_db *db;
    if ((rc = cli_open_db(c, false, &db)))
        return rc;
    ads_db_info info;
    ads_error err;
    sctx x = {{0}, false, 0, 0};
    progress_init(&x.bar, "stats");
    if ((rc = ads_db_info_get(&info, db, &err)) ||
        (rc = ads_db_type_stats(db, print_type, progress_cb, &x, &err))) {
        progress_done(&x.bar);
        ads_db_close(db);
        return cli_fail_err(c, &err);
    }
    bool ix_header = false;
    if ((rc = ads_db_index_stats(db, print_index, &ix_header, &err))) {
        ads_db_close(db);
        return cli_fail_err(c, &err);
    }
    char ms[32], us[32];
    human_bytes(ms, sizeof ms, (double)info.map_size);
    human_bytes(us, sizeof us, (double)info.used_bytes);
    unsigned format;
    if ((rc = ads_db_format(&format, db, &err))) {
        ads_db_close(db);
        return cli_fail_err(c, &err);
    }
    printf("\nstore format %u, node %012llx\n", format, (unsigned long long)ads_db_node(db));
    printf("map: %s reserved, %s used (%.1f%%), pages of %zu bytes\n", ms, us,
           info.map_size ? 100.0 * (double)info.used_bytes / (double)info.map_size : 0.0,
           info.page_size);
    printf("readers: %u of %u slots in use\n", info.readers, info.max_readers);
    ads_db_space sp;
    if (ads_db_space_get(&sp, db, &err) == 0) {
        char fs[32], gs[32];
        human_bytes(fs, sizeof fs, (double)sp.file_bytes);
        human_bytes(gs, sizeof gs, (double)sp.gain_bytes);
        printf("file: %s, %llu of %llu pages free; adstore compact would give back at least %s\n",
               fs, (unsigned long long)sp.free_pages, (unsigned long long)sp.used_pages, gs);
    }
    ads_db_layout lay;
    if (ads_db_layout_get(&lay, db, &err) == 0) {
        print_layout("latest", &lay.latest);
        print_layout("history", &lay.history);
    }
    ads_db_close(db);
    double secs = progress_elapsed(&x.bar);
    fprintf(stderr, "stats: %llu records, %llu rows, %s, %.2f s\n",
            (unsigned long long)x.records, (unsigned long long)x.rows, us, secs);
    return EXIT_OK;
}
