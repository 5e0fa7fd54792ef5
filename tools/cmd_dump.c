/*
 * tools/cmd_dump.c: `adstore dump`, `adstore restore` and `adstore backup`
 * (shared/spec/tools.md, "Dump and restore"; docs/tools.md). The work is the
 * engine's (engine/dump.c); these parse options, open files, show progress
 * and print the summary.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli.h"

static const char *db_dir(const cli_ctx *c)
{
    const char *dir = c->db_dir ? c->db_dir : getenv("ADSTORE_DB");
    return dir && *dir ? dir : "./adstore.db";
}

int cmd_dump(cli_ctx *c, int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    const char **types = calloc((size_t)argc + 1, sizeof *types);
    const char **exclude = calloc((size_t)argc + 1, sizeof *exclude);
    size_t ntypes = 0, nexclude = 0;
    const char *out = NULL, *opt, *v;
    int format = ADS_DUMP_MSGPACK, rc = EXIT_OK;
    cli_args a;
    if (!ops || !types || !exclude) {
        rc = cli_fail(c, EXIT_INPUT, "out of memory");
        goto done;
    }
    cli_args_init(&a, argc, argv, ops);
    while ((opt = cli_args_next(&a))) {
        int cr = cli_common_opt(&a, c, opt);
        if (cr < 0) {
            rc = EXIT_USAGE;
            goto done;
        }
        if (cr > 0)
            continue;
        if (cli_is_opt(opt, "-h", "--help")) {
            rc = cli_print_help("dump");
            goto done;
        } else if (cli_is_opt(opt, "-o", "--output")) {
            if (!(out = cli_args_value(&a, c, opt))) {
                rc = EXIT_USAGE;
                goto done;
            }
        } else if (cli_is_opt(opt, "-f", "--format")) {
            if (!(v = cli_args_value(&a, c, opt))) {
                rc = EXIT_USAGE;
                goto done;
            }
            if (strcasecmp(v, "msgpack") == 0)
                format = ADS_DUMP_MSGPACK;
            else if (strcasecmp(v, "text") == 0)
                format = ADS_DUMP_TEXT;
            else {
                rc = cli_fail(c, EXIT_USAGE, "unknown dump format '%s'; expected msgpack or text",
                              v);
                goto done;
            }
        } else if (cli_is_opt(opt, "-t", "--type")) {
            if (!(types[ntypes++] = cli_args_value(&a, c, opt))) {
                rc = EXIT_USAGE;
                goto done;
            }
        } else if (cli_is_opt(opt, NULL, "--exclude-type")) {
            if (!(exclude[nexclude++] = cli_args_value(&a, c, opt))) {
                rc = EXIT_USAGE;
                goto done;
            }
        } else {
            rc = cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
            goto done;
        }
    }
    if (a.nops) {
        rc = cli_fail(c, EXIT_USAGE, "unexpected argument '%s' (the output file is -o FILE)",
                      a.ops[0]);
        goto done;
    }
    if (!out && isatty(STDOUT_FILENO) && format == ADS_DUMP_MSGPACK) {
        rc = cli_fail(c, EXIT_USAGE,
                      "will not write a binary dump to a terminal: use -o FILE, a pipe, or "
                      "--format text");
        goto done;
    }
    ads_db *db;
    if ((rc = cli_open_db(c, false, &db)))
        goto done;
    /* into FILE.partial-PID, renamed into place when complete */
    char tmp[4200];
    FILE *f = stdout;
    if (out && strcmp(out, "-") != 0) {
        if (snprintf(tmp, sizeof tmp, "%s.partial-%ld", out, (long)getpid()) >= (int)sizeof tmp) {
            ads_db_close(db);
            rc = cli_fail(c, EXIT_USAGE, "the output file name is too long");
            goto done;
        }
        mode_t old = umask(077);
        f = fopen(tmp, "wb");
        umask(old);
        if (!f) {
            ads_db_close(db);
            rc = cli_fail(c, EXIT_INPUT, "cannot write %s: %s", tmp, strerror(errno));
            goto done;
        }
    } else {
        out = NULL;
    }
    progress bar;
    progress_init(&bar, "dump");
    ads_dump_options o = {format, types, ntypes, exclude, nexclude, progress_cb, &bar};
    ads_dump_result res;
    ads_error err;
    int drc = ads_db_dump(db, f, &o, &res, &err);
    progress_done(&bar);
    ads_db_close(db);
    if (out) {
        int crc = fclose(f);
        if (!drc && crc != 0)
            drc = ads_error_set(&err, ADS_EIO, "writing %s: %s", tmp, strerror(errno));
        if (!drc && rename(tmp, out) != 0)
            drc = ads_error_set(&err, ADS_EIO, "cannot rename %s to %s: %s", tmp, out,
                                strerror(errno));
        if (drc)
            unlink(tmp);
    } else if (!drc && fflush(stdout) != 0) {
        drc = ads_error_set(&err, ADS_EIO, "writing standard output: %s", strerror(errno));
    }
    if (drc) {
        rc = cli_fail_err(c, &err);
        goto done;
    }
    double secs = progress_elapsed(&bar);
    fprintf(stderr, "dump: %llu rows, %llu meta entries, %llu bytes, %.2f s (%.0f rows/s)\n",
            (unsigned long long)res.rows, (unsigned long long)res.meta,
            (unsigned long long)res.bytes, secs, secs > 0 ? (double)res.rows / secs : 0.0);
done:
    free(ops);
    free(types);
    free(exclude);
    return rc;
}

int cmd_restore(cli_ctx *c, int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    bool new_node = false;
    const char *opt;
    int rc = EXIT_OK;
    cli_args a;
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args_init(&a, argc, argv, ops);
    while ((opt = cli_args_next(&a))) {
        int cr = cli_common_opt(&a, c, opt);
        if (cr < 0) {
            free(ops);
            return EXIT_USAGE;
        }
        if (cr > 0)
            continue;
        if (cli_is_opt(opt, "-h", "--help")) {
            free(ops);
            return cli_print_help("restore");
        } else if (cli_is_opt(opt, NULL, "--new-node")) {
            new_node = true;
        } else {
            free(ops);
            return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
        }
    }
    if (a.nops != 1) {
        rc = cli_fail(c, EXIT_USAGE, a.nops ? "one dump FILE only, not %d" : "no dump FILE%.0d",
                      a.nops);
        free(ops);
        return rc;
    }
    const char *path = a.ops[0];
    FILE *f = stdin;
    if (strcmp(path, "-") != 0 && !(f = fopen(path, "rb"))) {
        rc = cli_fail(c, EXIT_INPUT, "%s: %s", path, strerror(errno));
        free(ops);
        return rc;
    }
    progress bar;
    progress_init(&bar, "restore");
    ads_restore_options o = {new_node, progress_cb, &bar};
    ads_dump_result res;
    ads_error err;
    const char *dir = db_dir(c);
    int rrc = ads_restore(dir, f, &o, &res, &err);
    progress_done(&bar);
    if (f != stdin)
        fclose(f);
    if (rrc) {
        rc = cli_fail(c, EXIT_INPUT, "%s: %s; %s is unchanged",
                      strcmp(path, "-") ? path : "<stdin>", err.message, dir);
        free(ops);
        return rc;
    }
    double secs = progress_elapsed(&bar);
    fprintf(stderr,
            "restore: %llu rows, %llu meta entries, %llu bytes into %s, %.2f s (%.0f rows/s)\n",
            (unsigned long long)res.rows, (unsigned long long)res.meta,
            (unsigned long long)res.bytes, dir, secs, secs > 0 ? (double)res.rows / secs : 0.0);
    free(ops);
    return EXIT_OK;
}

int cmd_backup(cli_ctx *c, int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    const char *opt;
    int rc;
    cli_args a;
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args_init(&a, argc, argv, ops);
    while ((opt = cli_args_next(&a))) {
        int cr = cli_common_opt(&a, c, opt);
        if (cr < 0) {
            free(ops);
            return EXIT_USAGE;
        }
        if (cr > 0)
            continue;
        if (cli_is_opt(opt, "-h", "--help")) {
            free(ops);
            return cli_print_help("backup");
        }
        free(ops);
        return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
    }
    if (a.nops != 1) {
        rc = cli_fail(c, EXIT_USAGE, "backup needs one DIR, the directory of the copy");
        free(ops);
        return rc;
    }
    const char *to = a.ops[0];
    ads_db *db;
    if ((rc = cli_open_db(c, false, &db))) {
        free(ops);
        return rc;
    }
    progress bar;
    progress_init(&bar, "backup");
    ads_error err;
    int brc = ads_db_backup(db, to, &err);
    ads_db_close(db);
    if (brc) {
        rc = cli_fail_err(c, &err);
        free(ops);
        return rc;
    }
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/data.mdb", to);
    double secs = progress_elapsed(&bar);
    fprintf(stderr, "backup: %s, %llu bytes, %.2f s\n", to,
            stat(path, &st) == 0 ? (unsigned long long)st.st_size : 0ULL, secs);
    free(ops);
    return EXIT_OK;
}
