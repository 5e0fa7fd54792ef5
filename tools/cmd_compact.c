/*
 * tools/cmd_compact.c: `adstore compact`: apply every type's
 * HistoryRetention, then rewrite the store in place into the smallest file
 * (engine/compact.c says how it stays safe). Refuses while another process
 * has the store open, or waits for it with --wait SECONDS.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/cli.h"

/* A test hook: with ADSTORE_TEST_STALL=compact:STAGE the process kills
 * itself (SIGKILL, as a crash would) when compaction reaches STAGE
 * ("copied": the copy is built; "renamed": it has replaced the data file). */
static void stage(void *ctx, const char *what)
{
    (void)ctx;
    const char *stall = getenv("ADSTORE_TEST_STALL");
    if (stall && strncmp(stall, "compact:", 8) == 0 && strcmp(stall + 8, what) == 0)
        kill(getpid(), SIGKILL);
}

int cmd_compact(cli_ctx *c, int argc, char **argv)
{
    char *ops[64];
    cli_args a;
    const char *opt;
    double wait = 0;
    int rc;
    if (argc > 64)
        return cli_fail(c, EXIT_USAGE, "too many arguments");
    cli_args_init(&a, argc, argv, ops);
    while ((opt = cli_args_next(&a))) {
        if ((rc = cli_common_opt(&a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (cli_is_opt(opt, "-h", "--help")) {
            cli_print_help("compact");
            return EXIT_OK;
        } else if (cli_is_opt(opt, NULL, "--wait")) {
            const char *v = cli_args_value(&a, c, opt);
            uint64_t secs;
            if (!v)
                return EXIT_USAGE;
            if (!cli_parse_u64(v, 86400 * 366, &secs))
                return cli_fail(c, EXIT_USAGE, "--wait needs a number of seconds, not '%s'", v);
            wait = (double)secs;
        } else {
            return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
        }
    }
    if (a.nops)
        return cli_fail(c, EXIT_USAGE, "unexpected argument '%s'", a.ops[0]);
    ads_compact_options o = {wait, stage, NULL};
    ads_compact_result res;
    ads_error err;
    progress bar;
    progress_init(&bar, "compact");
    if (ads_db_compact(cli_db_dir(c), &o, &res, &err))
        return cli_fail_err(c, &err);
    char before[32], after[32];
    human_bytes(before, sizeof before, (double)res.bytes_before);
    human_bytes(after, sizeof after, (double)res.bytes_after);
    fprintf(stderr,
            "compact: retention removed %llu history row%s and %llu deleted record%s; %s -> %s, "
            "%.2f s\n",
            (unsigned long long)res.retention.rows, res.retention.rows == 1 ? "" : "s",
            (unsigned long long)res.retention.records, res.retention.records == 1 ? "" : "s",
            before, after, progress_elapsed(&bar));
    return EXIT_OK;
}
