/*
 * tools/main.c: the adstore program's entry point. Reads the options that
 * come before the command (-d/--db, --help, --version), answers 'help' and
 * 'version', and hands the rest to the command's function (tools/cmd_*.c),
 * then checks that everything written to standard output reached it
 * (cli_finish_output).
 */
#include <stdio.h>
#include <string.h>

#include "query/query.h"
#include "tools/cli.h"

typedef struct command {
    const char *name;
    int (*run)(cli_ctx *c, int argc, char **argv);
} command;

static const command commands[] = {
    {"id", cmd_id},
    {"fluid", cmd_fluid},
    {"kid", cmd_kid},
    {"eval", cmd_eval},
    {"execute", cmd_execute},
    {"shell", cmd_shell},
    {"verify", cmd_verify},
    {"stats", cmd_stats},
    {"import", cmd_import},
    {"dump", cmd_dump},
    {"restore", cmd_restore},
    {"backup", cmd_backup},
    {"compact", cmd_compact},
    {"serve", cmd_serve},
};

#ifndef ADS_VERSION
#error "ADS_VERSION (the release, from CMake's project version) must be defined"
#endif

/* --version and 'adstore version': the release and the on-disk format it writes. */
static int print_version(void)
{
    printf("adstore %s (store format %d)\n", ADS_VERSION, ADS_DB_FORMAT_VERSION);
    return EXIT_OK;
}

/* The command's status, before standard output is checked. */
static int run(cli_ctx *c, int argc, char **argv)
{
    int i = 1;

    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-d") == 0 || strcmp(a, "--db") == 0) {
            if (++i == argc)
                return cli_fail(c, EXIT_USAGE, "option %s needs a value", a);
            c->db_dir = argv[i];
        } else if (strncmp(a, "--db=", 5) == 0) {
            c->db_dir = a + 5;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            return cli_print_help(NULL);
        } else if (strcmp(a, "--version") == 0) {
            return print_version();
        } else {
            fprintf(stderr, "adstore: unknown option '%s'; 'adstore help' lists the options\n",
                    a);
            return EXIT_USAGE;
        }
    }
    if (i == argc) {
        cli_print_help(NULL);
        return EXIT_USAGE;
    }
    const char *name = argv[i];
    if (strcmp(name, "help") == 0)
        return cli_print_help(i + 1 < argc ? argv[i + 1] : NULL);
    if (strcmp(name, "version") == 0) {
        if (i + 1 < argc)
            return cli_fail(c, EXIT_USAGE, "version takes no arguments");
        return print_version();
    }
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
        if (strcmp(commands[k].name, name) == 0) {
            c->command = name;
            return commands[k].run(c, argc - i - 1, argv + i + 1);
        }
    }
    fprintf(stderr, "adstore: unknown command '%s'; 'adstore help' lists the commands\n", name);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    cli_ctx c = {"adstore", "", NULL};
    int status = run(&c, argc, argv);
    /* every command's output is checked here, once: a result that did not
     * reach its reader is a failure */
    return cli_finish_output(&c, status);
}
