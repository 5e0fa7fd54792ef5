/*
 * tools/cmd_dump.c: `adstore dump`, `adstore restore` and `adstore backup`
 * (shared/spec/tools.md, "Dump and restore"; docs/tools.md). The work is the
 * engine's (engine/dump.c, dump_read.c, restore.c, backup.c); these parse
 * options, open files, show progress and print the summary.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli.h"

/* The directory holding path and path's last name. */
static void split_path(const char *path, char *parent, size_t pcap, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(parent, pcap, ".");
        *base = path;
    } else {
        snprintf(parent, pcap, "%.*s", slash == path ? 1 : (int)(slash - path), path);
        *base = slash + 1;
    }
}

/* fsync the directory holding path, so a rename into it is durable. */
static int sync_dir_of(const char *path, ads_error *err)
{
    char parent[4200];
    const char *base;
    split_path(path, parent, sizeof parent, &base);
    int fd = open(parent, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ads_error_set(err, ADS_EIO, "cannot open %s to sync it: %s", parent,
                             strerror(errno));
    int rc = 0;
    if (fsync(fd) != 0)
        rc = ads_error_set(err, ADS_EIO, "cannot sync %s: %s", parent, strerror(errno));
    close(fd);
    return rc;
}

/* Remove FILE.partial-PID files that killed dumps to FILE left, when their
 * process is gone (a running dump's is left alone). */
static void sweep_partials(const char *out)
{
    char parent[4200], p[8500];
    const char *base;
    split_path(out, parent, sizeof parent, &base);
    size_t bl = strlen(base);
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *num = e->d_name + bl;
        if (strncmp(e->d_name, base, bl) != 0 || strncmp(num, ".partial-", 9) != 0)
            continue;
        num += 9;
        char *end;
        errno = 0;
        long pid = strtol(num, &end, 10);
        if (num[0] < '0' || num[0] > '9' || *end || errno || pid <= 0 ||
            pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if (snprintf(p, sizeof p, "%s/%s", parent, e->d_name) < (int)sizeof p)
            unlink(p);
    }
    closedir(d);
}

/* A bad row left out by --salvage: one line on stderr each. */
static void salvage_note(void *ctx, const char *what)
{
    progress *bar = ctx;
    if (bar->tty)
        fputs("\r\033[K", stderr);
    fprintf(stderr, "adstore dump: skipped %s\n", what);
}

int cmd_dump(cli_ctx *c, int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    const char **types = calloc((size_t)argc + 1, sizeof *types);
    const char **exclude = calloc((size_t)argc + 1, sizeof *exclude);
    size_t ntypes = 0, nexclude = 0;
    const char *out = NULL, *opt, *v;
    int format = ADS_DUMP_MSGPACK, rc = EXIT_OK;
    bool salvage = false;
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
        } else if (cli_is_opt(opt, "-f", "--format") || cli_is_opt(opt, NULL, "-format")) {
            /* -format F: execute's older spelling, kept alike in every command */
            v = strcmp(opt, "-format") == 0     ? (a.i < a.argc ? a.argv[a.i++] : NULL)
                : strncmp(opt, "-format=", 8) == 0 ? opt + 8
                                                   : cli_args_value(&a, c, opt);
            if (!v && strcmp(opt, "-format") == 0)
                cli_fail(c, EXIT_USAGE, "option %s needs a value", opt);
            if (!v) {
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
        } else if (cli_is_opt(opt, NULL, "--salvage")) {
            salvage = true;
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
        sweep_partials(out);
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
    ads_dump_options o = {format,      types, ntypes,  exclude,     nexclude,
                          progress_cb, &bar,  salvage, salvage_note};
    ads_dump_result res;
    ads_error err;
    int drc = ads_db_dump(db, f, &o, &res, &err);
    progress_done(&bar);
    ads_db_close(db);
    if (out) {
        /* durable before it has its name: the data synced, then renamed, then
         * the rename synced */
        if (!drc && (fflush(f) != 0 || fsync(fileno(f)) != 0))
            drc = ads_error_set(&err, ADS_EIO, "writing %s: %s", tmp, strerror(errno));
        int crc = fclose(f);
        if (!drc && crc != 0)
            drc = ads_error_set(&err, ADS_EIO, "writing %s: %s", tmp, strerror(errno));
        if (!drc && rename(tmp, out) != 0)
            drc = ads_error_set(&err, ADS_EIO, "cannot rename %s to %s: %s", tmp, out,
                                strerror(errno));
        if (drc)
            unlink(tmp);
        else
            drc = sync_dir_of(out, &err);
    } else if (!drc && fflush(stdout) != 0) {
        drc = ads_error_set(&err, ADS_EIO, "writing standard output: %s", strerror(errno));
    }
    if (drc == ADS_ECORRUPT) {
        rc = cli_fail(c, EXIT_INPUT,
                      "%s; %s ('adstore verify' lists every problem; "
                      "'adstore dump --salvage' dumps the rest)",
                      err.message, out ? "no dump written" : "the output is not a dump");
        goto done;
    }
    if (drc) {
        rc = cli_fail_err(c, &err);
        goto done;
    }
    double secs = progress_elapsed(&bar);
    fprintf(stderr, "dump: %llu rows, %llu meta entries, %llu bytes, %.2f s (%.0f rows/s)",
            (unsigned long long)res.rows, (unsigned long long)res.meta,
            (unsigned long long)res.bytes, secs, secs > 0 ? (double)res.rows / secs : 0.0);
    if (res.skipped) {
        /* a salvage is not a clean dump: its own status, so no script takes
         * one for the other */
        fprintf(stderr, ", %llu bad row%s skipped (salvaged: not a whole store)\n",
                (unsigned long long)res.skipped, res.skipped == 1 ? "" : "s");
        rc = EXIT_SALVAGED;
        goto done;
    }
    fputc('\n', stderr);
done:
    free(ops);
    free(types);
    free(exclude);
    return rc;
}

/* The options of restore (--new-node, when new_node is not NULL) and backup:
 * 0 to go on, -1 after printing the help, or an exit status. */
static int scan_options(cli_ctx *c, cli_args *a, const char *help, bool *new_node)
{
    const char *opt;
    while ((opt = cli_args_next(a))) {
        int cr = cli_common_opt(a, c, opt);
        if (cr < 0)
            return EXIT_USAGE;
        if (cr > 0)
            continue;
        if (cli_is_opt(opt, "-h", "--help")) {
            cli_print_help(help);
            return -1;
        }
        if (new_node && cli_is_opt(opt, NULL, "--new-node"))
            *new_node = true;
        else
            return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
    }
    return 0;
}

static int restore(cli_ctx *c, cli_args *a)
{
    bool new_node = false;
    int rc = scan_options(c, a, "restore", &new_node);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (a->nops != 1)
        return cli_fail(c, EXIT_USAGE, a->nops ? "one dump FILE only, not %d" : "no dump FILE%.0d",
                        a->nops);
    const char *path = a->ops[0], *name = strcmp(path, "-") ? path : "<stdin>";
    FILE *f = stdin;
    if (strcmp(path, "-") != 0 && !(f = fopen(path, "rb")))
        return cli_fail(c, EXIT_INPUT, "%s: %s", path, strerror(errno));
    progress bar;
    progress_init(&bar, "restore");
    ads_restore_options o = {new_node, progress_cb, &bar};
    ads_dump_result res;
    ads_error err;
    const char *dir = cli_db_dir(c);
    rc = ads_restore(dir, f, &o, &res, &err);
    progress_done(&bar);
    if (f != stdin)
        fclose(f);
    if (rc)
        return cli_fail(c, EXIT_INPUT, "%s: %s; %s is unchanged", name, err.message, dir);
    double secs = progress_elapsed(&bar);
    fprintf(stderr,
            "restore: %llu rows, %llu meta entries, %llu bytes into %s, %.2f s (%.0f rows/s)\n",
            (unsigned long long)res.rows, (unsigned long long)res.meta,
            (unsigned long long)res.bytes, dir, secs, secs > 0 ? (double)res.rows / secs : 0.0);
    return EXIT_OK;
}

static int backup(cli_ctx *c, cli_args *a)
{
    int rc = scan_options(c, a, "backup", NULL);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (a->nops != 1)
        return cli_fail(c, EXIT_USAGE, "backup needs one DIR, the directory of the copy");
    const char *to = a->ops[0];
    ads_db *db;
    if ((rc = cli_open_db(c, false, &db)))
        return rc;
    progress bar;
    progress_init(&bar, "backup");
    ads_error err;
    rc = ads_db_backup_ex(db, to, progress_cb, &bar, &err);
    progress_done(&bar);
    ads_db_close(db);
    if (rc)
        return cli_fail_err(c, &err);
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/data.mdb", to);
    double secs = progress_elapsed(&bar);
    fprintf(stderr, "backup: %s, %llu bytes, %.2f s\n", to,
            stat(path, &st) == 0 ? (unsigned long long)st.st_size : 0ULL, secs);
    return EXIT_OK;
}

/* Run fn over argv's options and operands (ops allocated for them). */
static int with_args(cli_ctx *c, int argc, char **argv, int (*fn)(cli_ctx *, cli_args *))
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args a;
    cli_args_init(&a, argc, argv, ops);
    int rc = fn(c, &a);
    free(ops);
    return rc;
}

int cmd_restore(cli_ctx *c, int argc, char **argv)
{
    return with_args(c, argc, argv, restore);
}

int cmd_backup(cli_ctx *c, int argc, char **argv)
{
    return with_args(c, argc, argv, backup);
}
