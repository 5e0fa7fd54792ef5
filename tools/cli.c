/*
 * tools/cli.c: option scanning, messages, number parsing, opening the store,
 * and the help texts of the adstore program (`adstore help [command]`).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

void cli_args_init(cli_args *a, int argc, char **argv, char **ops)
{
    a->argc = argc;
    a->argv = argv;
    a->i = 0;
    a->ops = ops;
    a->nops = 0;
    a->only_ops = false;
}

const char *cli_args_next(cli_args *a)
{
    while (a->i < a->argc) {
        char *s = a->argv[a->i++];
        if (!a->only_ops && strcmp(s, "--") == 0) {
            a->only_ops = true;
            continue;
        }
        /* "-" alone is an operand (stdin); so is anything not starting '-'.
         * A negative number is an option-like operand: let the command reject it. */
        if (a->only_ops || s[0] != '-' || s[1] == '\0') {
            a->ops[a->nops++] = s;
            continue;
        }
        return s;
    }
    return NULL;
}

const char *cli_args_value(cli_args *a, cli_ctx *c, const char *opt)
{
    const char *eq = strchr(opt, '=');
    if (opt[1] == '-' && eq)
        return eq + 1;
    if (opt[1] != '-' && opt[2] != '\0')
        return opt + 2; /* -n5 */
    if (a->i < a->argc)
        return a->argv[a->i++];
    cli_fail(c, EXIT_USAGE, "option %s needs a value", opt);
    return NULL;
}

bool cli_is_opt(const char *opt, const char *s, const char *l)
{
    size_t n = strlen(l);
    return (s && strcmp(opt, s) == 0) || strcmp(opt, l) == 0 ||
           (strncmp(opt, l, n) == 0 && opt[n] == '=');
}

int cli_common_opt(cli_args *a, cli_ctx *c, const char *opt)
{
    if (cli_is_opt(opt, "-d", "--db")) {
        const char *v = cli_args_value(a, c, opt);
        if (!v)
            return -1;
        c->db_dir = v;
        return 1;
    }
    return 0;
}

int cli_fail(const cli_ctx *c, int status, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s %s: ", c->prog, c->command);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (status == EXIT_USAGE)
        fprintf(stderr, "Try '%s help %s'.\n", c->prog, c->command);
    return status;
}

int cli_fail_err(const cli_ctx *c, const ads_error *err)
{
    return cli_fail(c, EXIT_INPUT, "%s", err->message[0] ? err->message
                                                         : ads_strerror(err->code));
}

int cli_fail_arg(const cli_ctx *c, const char *arg, const ads_error *err)
{
    const char *msg = err->message[0] ? err->message : ads_strerror(err->code);
    if (err->column > 0)
        return cli_fail(c, EXIT_INPUT, "'%s': column %d: %s", arg, err->column, msg);
    return cli_fail(c, EXIT_INPUT, "'%s': %s", arg, msg);
}

int cli_finish_output(const cli_ctx *c, int status)
{
    /* stdio keeps what a failed write inside printf could not write and tries
     * again at the flush, so the flush's errno usually names the cause even
     * of an earlier failure; after a failed explicit fflush it does not, and
     * the cause is unknown */
    bool failed = ferror(stdout) != 0;
    errno = 0;
    int e = 0;
    if (fflush(stdout) != 0) {
        failed = true;
        e = errno;
    }
    errno = 0;
    if (fclose(stdout) != 0) {
        failed = true;
        if (!e)
            e = errno;
    }
    if (!failed)
        return status;
    fprintf(stderr, "%s%s%s: cannot write output: %s\n", c->prog, c->command[0] ? " " : "",
            c->command, e ? strerror(e) : "an earlier write to it failed");
    return status == EXIT_OK || status == EXIT_SALVAGED ? EXIT_INPUT : status;
}

bool cli_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (v > max)
        return false;
    *out = v;
    return true;
}

const char *cli_db_dir(const cli_ctx *c)
{
    const char *dir = c->db_dir;
    if (!dir)
        dir = getenv("ADSTORE_DB");
    return dir && *dir ? dir : "./adstore.db";
}

int cli_open_db(cli_ctx *c, bool create, ads_db **out)
{
    ads_error err;
    if (ads_db_open(out, cli_db_dir(c), create ? ADS_DB_CREATE : ADS_DB_READONLY, &err))
        return cli_fail_err(c, &err);
    return 0;
}

int cli_dispatch(cli_ctx *c, int argc, char **argv, const cli_sub *subs, size_t n,
                 const char *help)
{
    if (argc == 0) {
        cli_print_help(help);
        return EXIT_USAGE;
    }
    if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)
        return cli_print_help(help);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(argv[0], subs[i].name) != 0)
            continue;
        char **ops = calloc((size_t)argc, sizeof *ops);
        cli_args a;
        if (!ops)
            return cli_fail(c, EXIT_INPUT, "out of memory");
        c->command = subs[i].full;
        cli_args_init(&a, argc - 1, argv + 1, ops);
        int rc = subs[i].run(c, &a);
        free(ops);
        return rc;
    }
    char names[128] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                 i == 0 ? "" : i + 1 == n ? " or " : ", ", subs[i].name);
    return cli_fail(c, EXIT_USAGE, "unknown subcommand '%s'; expected %s", argv[0], names);
}

/* ---- help ---- */

#ifndef ADS_VERSION
#error "ADS_VERSION (the release, from CMake's project version) must be defined"
#endif

typedef struct help_entry {
    const char *command;
    const char *text;
} help_entry;

static const help_entry help_entries[] = {
    {"", "Usage: adstore [-d DIR] COMMAND [ARGS]\n"
         "\n"
         "An embedded ClassAd record datastore.\n"
         "\n"
         "Commands:\n"
         "  execute run statements: SELECT, UPDATE, DELETE, PURGE, STORE, BEGIN/COMMIT\n"
         "  shell   an interactive prompt for statements\n"
         "  eval    evaluate a ClassAd expression in the context of a record\n"
         "  id      make and read 128-bit identifiers (ordered, random, increment)\n"
         "  fluid   make, encode and decode FLUIDs (Flux RFC 19 64-bit ids)\n"
         "  kid     make, encode and decode k-ordered 64/96-bit ids\n"
         "  import  bulk-load records (long form, ClassAds, JSON, XML, dumps); resumable\n"
         "  dump    write the whole store, history included, to a file\n"
         "  restore rebuild a store from a dump\n"
         "  backup  consistent compacted copy of a live store\n"
         "  verify  check the whole store; exit 1 and list what is wrong where\n"
         "  stats   types, record and row counts, sizes, map usage\n"
         "  compact apply history retention, then rewrite the store into the smallest file\n"
         "  serve   serve the store over HTTP: a JSON API and a web page\n"
         "  help    show this text, or a command's: adstore help COMMAND\n"
         "  version print the version: adstore " ADS_VERSION "\n"
         "\n"
         "Options for every command:\n"
         "  -d DIR, --db DIR  the store (a directory); else $ADSTORE_DB, else ./adstore.db.\n"
         "                    Commands that only read open it read-only; a store is\n"
         "                    created on first write.\n"
         "  -h, --help        help for the command\n"
         "  --version         print the version and exit\n"
         "\n"
         "Exit status: 0 success, 1 bad input or a failed operation, 2 bad usage.\n"
         "Documentation: man adstore; docs/ in the source tree (docs/identifiers.md\n"
         "for ids).\n"},
    {"id", "Usage: adstore id new [ordered|random|increment] [-n N]\n"
           "       adstore id parse ID...\n"
           "       adstore id next SEQUENCE\n"
           "\n"
           "new    print N (default 1) new identifiers, one per line, in '#' form.\n"
           "       ordered (default): OUIDs from the store's generator and clock\n"
           "       sequence; random: version-4 UUIDs (no store needed);\n"
           "       increment: the store's built-in counter, from 1.\n"
           "       -n N, --count N   how many (1..10000000)\n"
           "parse  print each id's fields as 'name = value' lines: kind; for ordered\n"
           "       ids time, counter, version, backfill, node, clockseq; then hex.\n"
           "       Several ids: records separated by a blank line. The '#' is\n"
           "       optional. Accepted forms: #T-CV-N-S (ordered, also the legacy\n"
           "       #T-CV-N1-N2-S), #xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (random),\n"
           "       #1495 (increment). An invalid id: exit 1, a message on stderr,\n"
           "       nothing on stdout.\n"
           "next   print the next value of a named sequence and commit it: random\n"
           "       (a UUID), ordered (an OUID), type:NAME (the sequence behind type\n"
           "       NAME's generated keys), or the Name of a Sequence record, whose\n"
           "       Method (increment, ordered, random) and ValueType (id, string,\n"
           "       integer) say what it gives. An unknown sequence: exit 1.\n"},
    {"fluid", "Usage: adstore fluid new [-g GEN] [-n N] [--to ENC]\n"
              "       adstore fluid encode [--to ENC] VALUE...\n"
              "       adstore fluid decode [--from ENC] STRING...\n"
              "\n"
              "FLUIDs are 64-bit ids: 40 bits of ms since adstore's FLUID epoch,\n"
              "2020-01-01T00:00:00Z (the Unix epoch cannot fit 40 bits of ms today),\n"
              "14 bits of generator id, 10 bits of sequence (1024 ids per ms per\n"
              "generator).\n"
              "\n"
              "new     print N (default 1) new FLUIDs from generator GEN (0..16383,\n"
              "        default 0); the store keeps the generator's last timestamp so\n"
              "        ids never repeat across runs. --to ENC picks the encoding\n"
              "        (default dec).\n"
              "encode  print decimal VALUE (0..18446744073709551615) in encoding ENC,\n"
              "        one line; without --to, every encoding as 'enc = value' lines\n"
              "        (several values: records separated by a blank line).\n"
              "decode  print the decimal value of STRING in any encoding, chosen by\n"
              "        its shape: contains '.' dothex; contains '-' words; starts\n"
              "        with 'ƒ' or 'f' F58; starts with an emoji emoji; starts with\n"
              "        '0x' hex; else decimal. White space around it is ignored.\n"
              "        --from ENC decodes as that one encoding instead (f58 and\n"
              "        f58plain accept either prefix). An invalid string: exit 1, a\n"
              "        message on stderr, nothing on stdout.\n"
              "\n"
              "Encodings (ENC): dec 6731191091817518, hex 0x17e9fb8df16c2e,\n"
              "  dothex 0017.e9fb.8df1.6c2e, f58 ƒuZZybuNNy, f58plain fuZZybuNNy,\n"
              "  words reform-remote-galileo--heart-package-academy, emoji 👩💅📓😸👑🚓\n"},
    {"kid", "Usage: adstore kid new [--global] [-I N] [-n N]\n"
            "       adstore kid encode [--global] [-I N] a=A b=B c=C seq=S [node=HEX]\n"
            "       adstore kid decode [-I N] TEXT...\n"
            "\n"
            "k-ordered ids (the uid scheme): local ids are 64 bits\n"
            "(A:20 | B:20 | C>>10:10 | seq:14), global ids 96 bits with a 32-bit node\n"
            "placed after the first 20-I bits of B, so ids from one node sort\n"
            "together within a neighbourhood of 2^I seconds. A = megaseconds,\n"
            "B = seconds within the megasecond, C = microseconds within the second.\n"
            "Text: 11 (local) or 16 (global) characters of an order-preserving\n"
            "alphabet, so text order is time order.\n"
            "\n"
            "new     print N (default 1) new ids from the store's generator; global\n"
            "        ids carry the store's 32-bit node fingerprint.\n"
            "encode  print the text of the id with these fields (node= or --global\n"
            "        makes a global id; node is 8 hex digits).\n"
            "decode  print each id's fields as 'name = value' lines: kind, a, b, c,\n"
            "        seq, time; for global ids node and interval; then hex.\n"
            "-I N    the neighbourhood interval for global ids, 5..10 (default 8);\n"
            "        decode needs the I the id was made with.\n"},
    {"execute",
     "Usage: adstore execute [options] STATEMENT\n"
     "       adstore execute [options] --file FILE\n"
     "       adstore execute [options] -\n"
     "\n"
     "Run one statement (the operands joined by spaces), or every statement of\n"
     "FILE (--file) or of standard input ('-'), each ending with ';' as in the\n"
     "shell (a blank line ends nothing). A lone operand naming a file is\n"
     "refused with a hint to use --file. Results go to stdout (or -o FILE); a\n"
     "line such as '3 rows' or 'stored 2 records' to\n"
     "stderr ('stored 1 record, 1 unchanged': a record equal to its latest row\n"
     "appends no row, unless its Type says KeepUnchangedRows = true). A SELECT\n"
     "opens the store read-only; any other statement, once it\n"
     "parses, opens it for writing and creates it if missing. A SELECT with no\n"
     "FROM that names no attribute is one row: SELECT 1 + 1 AS two.\n"
     "\n"
     "  -format F, --format F, -f F  text (default: `Name = value` lines, a blank\n"
     "                               line between rows), native (one [ ... ] per\n"
     "                               line), json (an array, one object per line),\n"
     "                               jsonl (JSON Lines; also ndjson), csv (RFC\n"
     "                               4180, valid UTF-8), tabular (aligned by\n"
     "                               display width), values (-af), xml\n"
     "  -af                          -f values: as condor_q -af, values separated\n"
     "                               by spaces, strings unquoted, one row a line\n"
     "  --noheader                   csv and tabular without the header line(s)\n"
     "  -o FILE, --output FILE       results to FILE instead of stdout\n"
     "  --file FILE                  run the statements of FILE\n"
     "  --param NAME=EXPR            the value of :NAME in the statements (EXPR is a\n"
     "                               ClassAd expression: --param 'who=\"ann\"')\n"
     "  --param EXPR                 the value of the next ? (in the order given)\n"
     "  --hidden                     SELECT * also shows attributes starting with '_'\n"
     "  --max-memory MiB             what one statement may hold in memory (default\n"
     "                               512; 0: no limit)\n"
     "  --max-time S                 how long one statement may run, in seconds\n"
     "                               (default 3600; 0: no limit)\n"
     "\n"
     "Statements:\n"
     "  SELECT items FROM Type [T] [[INNER|OUTER] JOIN Type2 T2 ON expr]...\n"
     "         [WHERE expr] [GROUP BY exprs] [ORDER BY expr [ASC|DESC], ...] [LIMIT n]\n"
     "    [OUTER] JOIN ALL Type2 T2 ON expr   (every match, not the first)\n"
     "  SELECT items USING datasource ...    (types, sequences)\n"
     "  SELECT avg@(sum(Memory)) AS M FROM Machine WHERE @duration(`1d`)\n"
     "         GROUP BY Platform, @intervals(`1h`)    (hourly over the last day)\n"
     "  UPDATE Type SET Attr = expr, ... [WHERE expr]\n"
     "  DELETE FROM Type [WHERE expr]        (a deleted row joins the timeline)\n"
     "  PURGE FROM Type [WHERE expr]         (every row of the records is removed)\n"
     "  PURGE HISTORY FROM Type [WHERE [expr &&] _Timestamp < T]\n"
     "         (rows before the row in effect at T go; T: now - HistoryRetention)\n"
     "  STORE [ AdType = \"Type\"; ... ], ...  (merged over the record in effect)\n"
     "  BEGIN; ...; COMMIT;   (or ROLLBACK) one transaction for the statements between;\n"
     "         a failing statement, or the end of input, inside it rolls it back\n"
     "Parameters: ? or :name where an operand may start, and LIMIT ?; values are\n"
     "bound as values, never as text (--param). After an operand, ? and : keep\n"
     "their ClassAd meaning: a ? b : c.\n"
     "  EXPLAIN SELECT ... (or UPDATE, DELETE, PURGE)  (the plan: scan, key lookup,\n"
     "         index...; nothing is written)\n"
     "  EXPLAIN ANALYZE SELECT ... (or UPDATE, DELETE, PURGE)  (runs it, writes\n"
     "         included; the plan with what each step read, kept and wrote)\n"
     "Indexes: Indexed = true on an Attribute record (ForType, ForName) keeps one;\n"
     "IndexWith = { \"B\", ... } on it keeps a composite index (ForName, B, ...);\n"
     "docs/indexes.md.\n"
     "\n"
     "Aggregates: count(*), count, sum, avg, min, max, count_distinct, list,\n"
     "distinct; timeline: avg@, sum@, min@, max@ over @intervals. A syntax error\n"
     "says 'line L, column C: what'; exit 1 on any failed statement, 2 on bad usage.\n"
     "Examples:\n"
     "  adstore execute 'SELECT Name, Memory FROM Machine WHERE Memory > 1024'\n"
     "  adstore execute -format csv 'SELECT Arch, count(*) AS N FROM Machine GROUP BY Arch'\n"
     "Reference: docs/query.md.\n"},
    {"shell",
     "Usage: adstore shell [-format F] [--noheader] [-o FILE] [--hidden]\n"
     "                     [--max-memory MiB] [--max-time S]\n"
     "\n"
     "An interactive prompt with line editing and history (kept in\n"
     "$ADSTORE_HISTORY, else ~/.adstore_history). Statements end with ';' and may\n"
     "span lines; each runs as 'adstore execute' would run it. Ctrl-C cancels\n"
     "the statement being typed or run, never the shell; Ctrl-D leaves.\n"
     "Commands: .format [F], .headers on|off, .hidden, .tables, .schema TYPE,\n"
     ".read FILE, .timer on|off, .explain [analyze] SELECT, .help, .quit. Without a\n"
     "terminal it reads statements from standard input, one after another.\n"},
    {"eval", "Usage: adstore eval [-c RECORD] EXPR\n"
             "\n"
             "Evaluate the ClassAd expression EXPR in the context of RECORD (new ClassAd\n"
             "syntax, default []) and print the value in new ClassAd syntax, one line.\n"
             "No store is needed.\n"
             "\n"
             "  -c RECORD, --context RECORD   the record EXPR is evaluated in\n"
             "\n"
             "A syntax error in EXPR or RECORD: exit 1 and a message with the line and\n"
             "column on stderr. Evaluation itself never fails: a bad operation is the\n"
             "value error, printed as `error`. Examples:\n"
             "  adstore eval '1 + 2 * 3'                       7\n"
             "  adstore eval -c '[Memory = 2048]' 'Memory > 1024'   true\n"
             "  adstore eval '{1, 2}[5]'                       error\n"
             "Language reference: docs/classad.md.\n"},
    {"import",
     "Usage: adstore import [--format F] [--type T] [--batch N] [--backfill]\n"
     "                      [--time-attr NAME] [--keep-going] [--skip N] [--restart]\n"
     "                      [--replace] [--sync] [--sort | --no-sort] [--no-compact]\n"
     "                      FILE...\n"
     "\n"
     "Bulk-load the records of each FILE ('-' is standard input) into the store\n"
     "(created if missing). Each record's AdType names its type, which must be\n"
     "declared (Type records may come first in the same input); a record without\n"
     "AdType takes --type T, else its MyType (as HTCondor writes it).\n"
     "\n"
     "  -f F, --format F   long, classad, json, xml or dump (-format F is the same,\n"
     "                     as for execute and dump); by default from the\n"
     "                     file name (.json .jsonl .ndjson .xml .classad .long\n"
     "                     .dump), else from the first bytes\n"
     "  -t T, --type T     give records without AdType the type T (before MyType)\n"
     "  -b N, --batch N    records per transaction (default 10000); each batch\n"
     "                     commits whole, with the import's progress\n"
     "  --backfill         date records by their own _Timestamp (required on each:\n"
     "                     an AbsTime, seconds since 1970 or ISO 8601 text);\n"
     "                     generated ordered ids come from the backfill clock\n"
     "                     sequence, one batch = one backfill range\n"
     "  --time-attr NAME   date each row by its attribute NAME (required on each),\n"
     "                     e.g. LastHeardFrom, EnteredCurrentStatus, CompletionDate:\n"
     "                     epoch seconds, an AbsTime or ISO 8601 text\n"
     "  -k, --keep-going   list bad records at the end instead of stopping; exit 3\n"
     "                     if any was skipped (the rest is loaded)\n"
     "  --skip N           ignore recorded progress; pass over the first N input\n"
     "                     records (counted across the files, bad ones included)\n"
     "  --restart          ignore recorded progress; import every file from its start\n"
     "  --replace          each record replaces the row in effect instead of being\n"
     "                     laid over it (always so for dumps)\n"
     "  --sync             the input is the whole current set of its types (and of\n"
     "                     --type): once all is loaded, their records it lacks are\n"
     "                     deleted, dated now or (--backfill) at its latest\n"
     "                     _Timestamp; reads every file from its start\n"
     "  --sort             store each file's records in key order, whatever order\n"
     "                     they come in: they are read, sorted in runs of 16 MiB\n"
     "                     spilled to temporary files in the store's directory\n"
     "                     (about the size of the rows; removed however the\n"
     "                     import ends), then merged into the store front to back\n"
     "                     (the default for files of 16 MiB or more)\n"
     "  --no-sort          store the records batch by batch as they come\n"
     "  --no-compact       do not compact the store after an import that stored most\n"
     "                     of its rows out of key order (by default it does, unless\n"
     "                     another process has the store open)\n"
     "\n"
     "Formats: long is `Name = value` lines with blank lines between records\n"
     "(condor_q -long; condor_history files, whose \"*** ...\" banner lines end\n"
     "records); classad is [ ... ] records, optionally in { ... }; json is\n"
     "an array of objects or one object per line (condor_q -json); xml is HTCondor's\n"
     "<classads>; dump is adstore's own (its rows, with their _Timestamp).\n"
     "\n"
     "A bad record stops the import with FILE:LINE[:COLUMN]: what is wrong; nothing\n"
     "of its batch is stored (a sorted load stores what it read before a record it\n"
     "cannot read, and stops its merge at a record the store refuses). Progress is\n"
     "kept in the store per file: running the same command again goes on after the\n"
     "last committed batch and never loads a batch twice (a sorted load reads the\n"
     "file again and goes on with its merge); a file imported completely is\n"
     "skipped. A summary line goes to\n"
     "stderr. Exit status: 0 all loaded, 1 failed or stopped, 2 bad usage, 3 loaded\n"
     "with bad records skipped (-k). Examples:\n"
     "  condor_q -json | adstore import --type Job -\n"
     "  condor_status -any -long | adstore import --time-attr LastHeardFrom -\n"
     "  adstore import --type Job --backfill --time-attr CompletionDate history\n"},
    {"dump",
     "Usage: adstore dump [--format msgpack|text] [--type T]... [--exclude-type T]...\n"
     "                    [--salvage] [-o FILE]\n"
     "\n"
     "Write the whole store, history included, from one consistent snapshot\n"
     "(writers may go on): a header, the store's metadata (node, generator and\n"
     "sequence state, types), every row of every record in key order, and a trailer\n"
     "with counts and a checksum. Two dumps of the same store are byte-identical.\n"
     "\n"
     "  -o FILE, --output FILE  write to FILE (written beside it, renamed when\n"
     "                          complete); default standard output\n"
     "  -f F, --format F        msgpack (default; compact, restores fastest) or text\n"
     "                          (new ClassAd syntax, one item per line, for diff);\n"
     "                          -format F is the same (execute's spelling)\n"
     "  -t T, --type T          only records of type T (repeatable); Type, Attribute\n"
     "                          and Sequence records always come along\n"
     "  --exclude-type T        leave type T out (repeatable)\n"
     "  --salvage               leave out rows that fail their checks, listing each\n"
     "                          on stderr, and exit 3 if any was left out\n"
     "\n"
     "Every row's checksum and structure are checked as it is written: a bad row\n"
     "stops the dump (exit 1, naming its type and key) and no FILE is written.\n"
     "Exit status: 0 a whole dump, 1 failed, 2 bad usage, 3 salvaged (--salvage\n"
     "left bad rows out: the dump restores, but is not the whole store).\n"
     "\n"
     "Format: docs/formats.md, \"Dump format\". Example:\n"
     "  adstore -d jobs.db dump -o jobs.dump && adstore -d copy.db restore jobs.dump\n"},
    {"restore",
     "Usage: adstore restore [--new-node] FILE\n"
     "\n"
     "Rebuild the store (-d DIR) from a dump made by adstore dump ('-' reads\n"
     "standard input), in either format. DIR must not exist, be empty, or hold a\n"
     "store without rows. The store is built beside DIR and moved into place only\n"
     "when the dump's trailer counts and checksum match and every row passes its\n"
     "checks: a truncated or corrupt dump, one carrying a corrupt row, or one of an\n"
     "unknown format version, is refused with a message and DIR is left as it was.\n"
     "The store is synced before it is renamed into place; what a killed restore or\n"
     "backup of DIR left beside it is removed.\n"
     "\n"
     "  --new-node   give the restored store a new node id and fresh ordered-id\n"
     "               generator (for a copy that will write beside the original)\n"},
    {"backup",
     "Usage: adstore backup DIR\n"
     "\n"
     "Copy the live store (-d) into DIR, consistent and compacted (free pages left\n"
     "out), while writers go on. DIR must not exist, be empty, or hold an empty\n"
     "store. The copy is built in DIR.backup-PID beside DIR, synced, verified (as\n"
     "adstore verify checks a store) and only then renamed into place, so DIR is\n"
     "never half a store; a copy that fails its check is not kept (exit 1, naming\n"
     "the first problem). What a killed backup or restore of DIR left beside it is\n"
     "removed.\n"},
    {"verify", "Usage: adstore verify\n"
               "\n"
               "Check the whole store: every row's checksum and structure, exactly one latest\n"
               "row per record and none older than its history, keys agreeing with the rows'\n"
               "key attributes, every record of a declared type, record counts agreeing with\n"
               "the rows, and the generators ahead of every identifier they issued. Each\n"
               "problem is a line on stdout saying what is wrong and where (type and key);\n"
               "a summary line goes to stderr. Exit 0 if the store is sound, 1 if not.\n"
               "The store is opened read-only; writers may keep working meanwhile.\n"},
    {"stats", "Usage: adstore stats\n"
              "\n"
              "Print a line per type (records, deleted records, history rows, bytes of\n"
              "latest and of history rows), then the store's format, node id, map size\n"
              "and use, reader slots, and the free pages of the file: what 'adstore\n"
              "compact' would give back at least (it also fills partly empty pages).\n"
              "A summary line goes to stderr.\n"},
    {"compact",
     "Usage: adstore compact [--wait SECONDS]\n"
     "\n"
     "Apply every type's HistoryRetention (as PURGE HISTORY FROM each type), then\n"
     "rewrite the store in place into the smallest file: a copy with every table\n"
     "in key order and every page full is built beside it (DIR.compact-PID),\n"
     "synced, verified, and renamed over DIR/data.mdb,\n"
     "so a crash at any point leaves the old store or the new one, whole. No other\n"
     "process may have the store open: compact refuses (exit 1, naming one), or\n"
     "with --wait waits up to SECONDS for them to close it; a process opening the\n"
     "store meanwhile waits until compact is done. A summary line goes to stderr.\n"},
    {"serve",
     "Usage: adstore serve [--listen ADDR:PORT] [--tls-cert F --tls-key F]\n"
     "                     [--tokens FILE] [--insecure] [--port-file F]\n"
     "       adstore serve --tokens FILE --add-token NAME [--role read|write]\n"
     "\n"
     "Serve the store (-d) over HTTP in the foreground: a JSON API under /api/\n"
     "(statements, records, history, import, types, sequences, ids, health,\n"
     "stats) and a web page at /. One log line per request goes to stderr\n"
     "(written in batches: when no request is in flight, or at most a second late).\n"
     "SIGTERM or SIGINT stops it: no new connections, requests in flight finish,\n"
     "the store is closed. docs/server.md has the routes and curl examples.\n"
     "\n"
     "  --listen ADDR:PORT  where to listen (default 127.0.0.1:8642; [::1]:PORT for\n"
     "                      IPv6; port 0 picks a free one)\n"
     "  --tls-cert F, --tls-key F  PEM certificate and key: serve HTTPS\n"
     "  --tokens FILE       require a bearer token from FILE (hashed, with a role)\n"
     "  --insecure          allow an address beyond loopback without TLS and tokens\n"
     "  --port-file F       write the port listened on to F once listening\n"
     "  --add-token NAME    make a token for NAME, add its hash to --tokens FILE\n"
     "                      and print it (only this once); --role read (default:\n"
     "                      SELECT only) or write\n"},
    {"help", "Usage: adstore help [COMMAND]\n"
             "\n"
             "Show the list of commands, or the help of one command.\n"},
};

const char *cli_help_text(const char *command)
{
    for (size_t i = 0; i < sizeof help_entries / sizeof help_entries[0]; i++)
        if (strcmp(help_entries[i].command, command) == 0)
            return help_entries[i].text;
    return NULL;
}

int cli_print_help(const char *command)
{
    const char *text = cli_help_text(command ? command : "");
    if (!text) {
        fprintf(stderr, "adstore help: no command '%s'; 'adstore help' lists them\n", command);
        return EXIT_USAGE;
    }
    fputs(text, stdout);
    return EXIT_OK;
}
