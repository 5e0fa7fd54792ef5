/*
 * tools/cmd_ids.c: `adstore id`, `adstore fluid` and `adstore kid`: making
 * identifiers from the store's generators, and encoding, decoding and
 * explaining them. Every input is checked before anything is printed, so a
 * bad argument prints nothing on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/cli.h"

#define COUNT_MAX 10000000u
#define CHUNK 4096u

#define is_opt cli_is_opt
#define common_opt cli_common_opt

static int parse_count(cli_ctx *c, const char *v, uint64_t *n)
{
    if (!v)
        return EXIT_USAGE;
    if (!cli_parse_u64(v, COUNT_MAX, n) || *n == 0)
        return cli_fail(c, EXIT_USAGE, "count '%s' must be a number from 1 to %u", v,
                        COUNT_MAX);
    return 0;
}

static void print_time(uint64_t secs, long usec, bool with_usec)
{
    struct tm tm;
    time_t t = (time_t)secs;
    char buf[64];
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    if (with_usec)
        printf("time = %s.%06ldZ\n", buf, usec);
    else
        printf("time = %sZ\n", buf);
}

/*
 * What a `new` subcommand makes: make fills buf with k items inside txn (NULL
 * when no store is needed), print writes them out after the commit, so only
 * committed ids are ever printed.
 */
typedef struct maker {
    size_t size; /* bytes per item */
    int (*make)(ads_txn *txn, void *buf, size_t k, void *ctx, ads_error *err);
    int (*print)(const void *buf, size_t k, void *ctx, ads_error *err);
    void *ctx;
} maker;

/* Make n items in chunks of CHUNK, one transaction each. */
static int make_in_chunks(cli_ctx *c, bool need_store, uint64_t n, const maker *m)
{
    void *buf = malloc(CHUNK * m->size);
    ads_db *db = NULL;
    ads_error err;
    int rc = EXIT_OK;
    if (!buf)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    if (need_store && (rc = cli_open_db(c, true, &db)))
        goto cleanup;
    for (uint64_t done = 0; done < n;) {
        size_t k = (size_t)(n - done < CHUNK ? n - done : CHUNK);
        ads_txn *txn = NULL;
        if (db && ads_txn_begin(&txn, db, 0, &err)) {
            rc = cli_fail_err(c, &err);
            goto cleanup;
        }
        if (m->make(txn, buf, k, m->ctx, &err)) {
            ads_txn_abort(txn);
            rc = cli_fail_err(c, &err);
            goto cleanup;
        }
        if ((txn && ads_txn_commit(txn, &err)) || m->print(buf, k, m->ctx, &err)) {
            rc = cli_fail_err(c, &err);
            goto cleanup;
        }
        done += k;
    }
cleanup:
    ads_db_close(db);
    free(buf);
    return rc;
}

/* ---- id ---- */

static int make_ids(ads_txn *txn, void *buf, size_t k, void *ctx, ads_error *err)
{
    ads_id_kind kind = *(const ads_id_kind *)ctx;
    int event = 0;
    if (kind == ADS_ID_RANDOM)
        return ads_uuid_new_n(buf, k, err);
    int rc = ads_txn_new_ids(buf, k, &event, txn, kind, err);
    if (event == ADS_IDGEN_CLOCK_STEPPED_BACK)
        fprintf(stderr, "adstore id new: the clock went backwards; a new clock sequence keeps "
                        "ids unique\n");
    return rc;
}

static int print_ids(const void *buf, size_t k, void *ctx, ads_error *err)
{
    const ads_id *ids = buf;
    char text[ADS_ID_TEXT_MAX + 1];
    (void)ctx;
    (void)err;
    for (size_t i = 0; i < k; i++) {
        size_t len = ads_id_format(text, ids[i]);
        text[len] = '\n';
        fwrite(text, 1, len + 1, stdout);
    }
    return 0;
}

static int id_new(cli_ctx *c, cli_args *a)
{
    uint64_t n = 1;
    const char *opt;
    int rc;
    while ((opt = cli_args_next(a))) {
        if ((rc = common_opt(a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (is_opt(opt, "-n", "--count")) {
            if ((rc = parse_count(c, cli_args_value(a, c, opt), &n)))
                return rc;
        } else if (is_opt(opt, "-h", "--help")) {
            return cli_print_help("id");
        } else {
            return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
        }
    }
    ads_id_kind kind = ADS_ID_ORDERED;
    if (a->nops > 1)
        return cli_fail(c, EXIT_USAGE, "expected one kind, got %d operands", a->nops);
    if (a->nops == 1) {
        if (strcmp(a->ops[0], "ordered") == 0)
            kind = ADS_ID_ORDERED;
        else if (strcmp(a->ops[0], "random") == 0)
            kind = ADS_ID_RANDOM;
        else if (strcmp(a->ops[0], "increment") == 0)
            kind = ADS_ID_INCREMENT;
        else
            return cli_fail(c, EXIT_USAGE,
                            "unknown kind '%s'; expected ordered, random or increment",
                            a->ops[0]);
    }

    maker m = {sizeof(ads_id), make_ids, print_ids, &kind};
    return make_in_chunks(c, kind != ADS_ID_RANDOM, n, &m);
}

static void print_id(ads_id id)
{
    ads_id_kind kind = ads_id_kind_of(id);
    printf("kind = %s\n", ads_id_kind_name(kind));
    if (kind == ADS_ID_ORDERED) {
        ads_ouid_fields f;
        ads_ouid_unpack(&f, id);
        print_time(f.time, 0, false);
        printf("counter = %lu\n", (unsigned long)f.counter);
        printf("version = %u\n", (unsigned)f.version);
        printf("backfill = %s\n", f.backfill ? "true" : "false");
        printf("node = %012llx\n", (unsigned long long)f.node);
        printf("clockseq = %u\n", (unsigned)f.clockseq);
    }
    printf("hex = %016llx%016llx\n", (unsigned long long)id.hi, (unsigned long long)id.lo);
}

static int id_parse(cli_ctx *c, cli_args *a)
{
    const char *opt;
    int rc;
    while ((opt = cli_args_next(a))) {
        if ((rc = common_opt(a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (is_opt(opt, "-h", "--help")) {
            return cli_print_help("id");
        } else {
            /* "-1" or similar: not an option of ours, so an (invalid) id */
            a->ops[a->nops++] = (char *)opt;
        }
    }
    if (a->nops == 0)
        return cli_fail(c, EXIT_USAGE, "expected at least one identifier");
    ads_id *ids = malloc((size_t)a->nops * sizeof *ids);
    if (!ids)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    for (int i = 0; i < a->nops; i++) {
        ads_error err;
        if (ads_id_parse(&ids[i], a->ops[i], strlen(a->ops[i]), ADS_ID_PARSE_HASH_OPTIONAL,
                         &err)) {
            free(ids);
            return cli_fail_arg(c, a->ops[i], &err);
        }
    }
    for (int i = 0; i < a->nops; i++) {
        if (i)
            putchar('\n');
        print_id(ids[i]);
    }
    free(ids);
    return EXIT_OK;
}

/* id next SEQUENCE: one value of a named sequence, committed. */
typedef struct next_job {
    const char *name;
    ads_value v;
    ads_arena *a;
} next_job;

static int next_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    next_job *j = ctx;
    ads_arena_reset(j->a);
    return ads_txn_next_value(&j->v, txn, j->name, strlen(j->name), j->a, err);
}

static int id_next(cli_ctx *c, cli_args *a)
{
    const char *opt;
    int rc;
    while ((opt = cli_args_next(a))) {
        if ((rc = common_opt(a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (is_opt(opt, "-h", "--help")) {
            return cli_print_help("id");
        } else {
            return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
        }
    }
    if (a->nops != 1)
        return cli_fail(c, EXIT_USAGE, "expected one sequence name, got %d operands", a->nops);
    ads_db *db;
    if ((rc = cli_open_db(c, true, &db)))
        return rc;
    next_job j = {a->ops[0], ads_undefined(), ads_arena_new()};
    ads_error err;
    if (!j.a) {
        ads_db_close(db);
        return cli_fail(c, EXIT_INPUT, "out of memory");
    }
    rc = ads_db_write(db, next_fn, &j, &err);
    if (rc) {
        rc = cli_fail_err(c, &err);
    } else if (j.v.type == ADS_STRING) {
        printf("%.*s\n", (int)j.v.u.s.len, j.v.u.s.p);
    } else {
        ads_buf b = ADS_BUF_INIT;
        ads_value_unparse(&b, &j.v);
        printf("%s\n", ads_buf_cstr(&b));
        ads_buf_free(&b);
    }
    ads_arena_free(j.a);
    ads_db_close(db);
    return rc ? rc : EXIT_OK;
}

int cmd_id(cli_ctx *c, int argc, char **argv)
{
    static const cli_sub subs[] = {
        {"new", "id new", id_new},
        {"parse", "id parse", id_parse},
        {"next", "id next", id_next},
    };
    return cli_dispatch(c, argc, argv, subs, sizeof subs / sizeof subs[0], "id");
}

/* ---- fluid ---- */

static int parse_enc(cli_ctx *c, const char *v, ads_fluid_enc *enc)
{
    ads_error err;
    if (!v)
        return EXIT_USAGE;
    if (ads_fluid_enc_parse(enc, v, &err))
        return cli_fail(c, EXIT_USAGE, "%s", err.message);
    return 0;
}

typedef struct fluid_job {
    uint32_t generator;
    ads_fluid_enc enc;
} fluid_job;

static int make_fluids(ads_txn *txn, void *buf, size_t k, void *ctx, ads_error *err)
{
    return ads_txn_new_fluids(buf, k, txn, ((const fluid_job *)ctx)->generator, err);
}

static int print_fluids(const void *buf, size_t k, void *ctx, ads_error *err)
{
    const uint64_t *v = buf;
    char text[ADS_FLUID_TEXT_MAX + 1];
    for (size_t i = 0; i < k; i++) {
        if (ads_fluid_encode(text, sizeof text, v[i], ((const fluid_job *)ctx)->enc, err) < 0)
            return -1;
        puts(text);
    }
    return 0;
}

static int fluid_new(cli_ctx *c, cli_args *a)
{
    uint64_t n = 1, gen = 0;
    ads_fluid_enc enc = ADS_FLUID_DEC;
    const char *opt;
    int rc;
    while ((opt = cli_args_next(a))) {
        if ((rc = common_opt(a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (is_opt(opt, "-n", "--count")) {
            if ((rc = parse_count(c, cli_args_value(a, c, opt), &n)))
                return rc;
        } else if (is_opt(opt, "-g", "--generator")) {
            const char *v = cli_args_value(a, c, opt);
            if (!v)
                return EXIT_USAGE;
            if (!cli_parse_u64(v, ADS_FLUID_GENERATOR_MAX, &gen))
                return cli_fail(c, EXIT_USAGE, "generator '%s' must be a number from 0 to %u",
                                v, ADS_FLUID_GENERATOR_MAX);
        } else if (is_opt(opt, NULL, "--to")) {
            if ((rc = parse_enc(c, cli_args_value(a, c, opt), &enc)))
                return rc;
        } else if (is_opt(opt, "-h", "--help")) {
            return cli_print_help("fluid");
        } else {
            return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
        }
    }
    if (a->nops)
        return cli_fail(c, EXIT_USAGE, "unexpected operand '%s'", a->ops[0]);

    fluid_job job = {(uint32_t)gen, enc};
    maker m = {sizeof(uint64_t), make_fluids, print_fluids, &job};
    return make_in_chunks(c, true, n, &m);
}

static int fluid_encode(cli_ctx *c, cli_args *a)
{
    ads_fluid_enc enc = ADS_FLUID_DEC;
    bool one = false;
    const char *opt;
    int rc;
    while ((opt = cli_args_next(a))) {
        if ((rc = common_opt(a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (is_opt(opt, NULL, "--to")) {
            if ((rc = parse_enc(c, cli_args_value(a, c, opt), &enc)))
                return rc;
            one = true;
        } else if (is_opt(opt, "-h", "--help")) {
            return cli_print_help("fluid");
        } else {
            a->ops[a->nops++] = (char *)opt; /* "-1": an invalid value */
        }
    }
    if (a->nops == 0)
        return cli_fail(c, EXIT_USAGE, "expected at least one decimal value");
    uint64_t *vals = malloc((size_t)a->nops * sizeof *vals);
    if (!vals)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    for (int i = 0; i < a->nops; i++) {
        if (!cli_parse_u64(a->ops[i], UINT64_MAX, &vals[i])) {
            free(vals);
            return cli_fail(c, EXIT_INPUT,
                            "'%s' is not a decimal number from 0 to 18446744073709551615",
                            a->ops[i]);
        }
    }
    char text[ADS_FLUID_TEXT_MAX + 1];
    for (int i = 0; i < a->nops; i++) {
        if (one) {
            ads_fluid_encode(text, sizeof text, vals[i], enc, NULL);
            puts(text);
            continue;
        }
        if (i)
            putchar('\n');
        for (int e = 0; e < ADS_FLUID_ENC_COUNT; e++) {
            ads_fluid_encode(text, sizeof text, vals[i], (ads_fluid_enc)e, NULL);
            printf("%s = %s\n", ads_fluid_enc_name((ads_fluid_enc)e), text);
        }
    }
    free(vals);
    return EXIT_OK;
}

static int fluid_decode(cli_ctx *c, cli_args *a)
{
    const char *opt;
    int rc, from = -1; /* -1: choose the encoding by shape */
    while ((opt = cli_args_next(a))) {
        if ((rc = common_opt(a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (is_opt(opt, NULL, "--from")) {
            ads_fluid_enc enc;
            if ((rc = parse_enc(c, cli_args_value(a, c, opt), &enc)))
                return rc;
            from = (int)enc;
        } else if (is_opt(opt, "-h", "--help")) {
            return cli_print_help("fluid");
        } else {
            a->ops[a->nops++] = (char *)opt; /* "-1", "--x": decoded (and refused) */
        }
    }
    if (a->nops == 0)
        return cli_fail(c, EXIT_USAGE, "expected at least one FLUID");
    uint64_t *vals = malloc((size_t)a->nops * sizeof *vals);
    if (!vals)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    for (int i = 0; i < a->nops; i++) {
        ads_error err;
        size_t len = strlen(a->ops[i]);
        if (from < 0 ? ads_fluid_decode(&vals[i], NULL, a->ops[i], len, &err)
                     : ads_fluid_decode_as(&vals[i], (ads_fluid_enc)from, a->ops[i], len, &err)) {
            free(vals);
            return cli_fail_arg(c, a->ops[i], &err);
        }
    }
    for (int i = 0; i < a->nops; i++)
        printf("%llu\n", (unsigned long long)vals[i]);
    free(vals);
    return EXIT_OK;
}

int cmd_fluid(cli_ctx *c, int argc, char **argv)
{
    static const cli_sub subs[] = {
        {"new", "fluid new", fluid_new},
        {"encode", "fluid encode", fluid_encode},
        {"decode", "fluid decode", fluid_decode},
    };
    return cli_dispatch(c, argc, argv, subs, sizeof subs / sizeof subs[0], "fluid");
}

/* ---- kid ---- */

typedef struct kid_opts {
    bool global;
    unsigned interval;
    uint64_t n;
} kid_opts;

static int kid_options(cli_ctx *c, cli_args *a, kid_opts *o, bool allow_n)
{
    const char *opt;
    int rc;
    while ((opt = cli_args_next(a))) {
        if ((rc = common_opt(a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (is_opt(opt, NULL, "--global")) {
            o->global = true;
        } else if (is_opt(opt, "-I", "--interval")) {
            const char *v = cli_args_value(a, c, opt);
            uint64_t iv;
            if (!v)
                return EXIT_USAGE;
            if (!cli_parse_u64(v, 10, &iv) || iv < 5)
                return cli_fail(c, EXIT_USAGE, "interval '%s' must be a number from 5 to 10",
                                v);
            o->interval = (unsigned)iv;
        } else if (allow_n && is_opt(opt, "-n", "--count")) {
            if ((rc = parse_count(c, cli_args_value(a, c, opt), &o->n)))
                return rc;
        } else if (is_opt(opt, "-h", "--help")) {
            cli_print_help("kid");
            return -1;
        } else {
            return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
        }
    }
    return 0;
}

static int kid_text(char *out, size_t cap, const ads_kid_fields *f, bool global,
                    unsigned interval, ads_error *err)
{
    uint8_t bytes[ADS_KID_GLOBAL_BYTES];
    int rc;
    if (global)
        rc = ads_kid_pack_global(bytes, f, interval, err);
    else
        rc = ads_kid_pack_local(bytes, f, err);
    if (rc)
        return rc;
    return ads_kid_encode(out, cap, bytes, global ? ADS_KID_GLOBAL_BYTES : ADS_KID_LOCAL_BYTES,
                          err);
}

static int make_kids(ads_txn *txn, void *buf, size_t k, void *ctx, ads_error *err)
{
    (void)ctx;
    return ads_txn_new_kids(buf, k, txn, err);
}

static int print_kids(const void *buf, size_t k, void *ctx, ads_error *err)
{
    const ads_kid_fields *f = buf;
    const kid_opts *o = ctx;
    char text[32];
    for (size_t i = 0; i < k; i++) {
        if (kid_text(text, sizeof text, &f[i], o->global, o->interval, err) < 0)
            return -1;
        puts(text);
    }
    return 0;
}

static int kid_new(cli_ctx *c, cli_args *a)
{
    kid_opts o = {false, ADS_KID_INTERVAL_DEFAULT, 1};
    int rc = kid_options(c, a, &o, true);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (a->nops)
        return cli_fail(c, EXIT_USAGE, "unexpected operand '%s'", a->ops[0]);

    maker m = {sizeof(ads_kid_fields), make_kids, print_kids, &o};
    return make_in_chunks(c, true, o.n, &m);
}

static int kid_encode(cli_ctx *c, cli_args *a)
{
    kid_opts o = {false, ADS_KID_INTERVAL_DEFAULT, 1};
    int rc = kid_options(c, a, &o, false);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    ads_kid_fields f = {0, 0, 0, 0, 0};
    bool seen[5] = {false, false, false, false, false};
    static const char *const names[5] = {"a", "b", "c", "seq", "node"};
    for (int i = 0; i < a->nops; i++) {
        const char *s = a->ops[i], *eq = strchr(s, '=');
        int k = -1;
        for (int j = 0; eq && j < 5; j++)
            if (strlen(names[j]) == (size_t)(eq - s) && strncmp(s, names[j], (size_t)(eq - s)) == 0)
                k = j;
        if (k < 0)
            return cli_fail(c, EXIT_USAGE, "'%s': expected a=, b=, c=, seq= or node=", s);
        uint64_t v = 0;
        const char *val = eq + 1;
        if (k == 4) {
            char *end;
            size_t len = strlen(val);
            if (len == 0 || len > 8 || strspn(val, "0123456789abcdefABCDEF") != len)
                return cli_fail(c, EXIT_INPUT, "node '%s' must be 1 to 8 hex digits", val);
            v = strtoull(val, &end, 16);
        } else if (!cli_parse_u64(val, UINT32_MAX, &v)) {
            return cli_fail(c, EXIT_INPUT, "%s '%s' is not a decimal number", names[k], val);
        }
        seen[k] = true;
        switch (k) {
        case 0: f.a = (uint32_t)v; break;
        case 1: f.b = (uint32_t)v; break;
        case 2: f.c = (uint32_t)v; break;
        case 3: f.seq = (uint32_t)v; break;
        default: f.node = (uint32_t)v; break;
        }
    }
    for (int j = 0; j < 4; j++)
        if (!seen[j])
            return cli_fail(c, EXIT_USAGE, "missing %s=", names[j]);
    if (seen[4])
        o.global = true;
    else if (o.global)
        return cli_fail(c, EXIT_USAGE, "a global id needs node=HEX");

    char text[32];
    ads_error err;
    if (kid_text(text, sizeof text, &f, o.global, o.interval, &err) < 0)
        return cli_fail_err(c, &err);
    puts(text);
    return EXIT_OK;
}

static int kid_decode(cli_ctx *c, cli_args *a)
{
    kid_opts o = {false, ADS_KID_INTERVAL_DEFAULT, 1};
    int rc = kid_options(c, a, &o, false);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (a->nops == 0)
        return cli_fail(c, EXIT_USAGE, "expected at least one k-ordered id");
    typedef struct decoded {
        ads_kid_fields f;
        uint8_t bytes[ADS_KID_GLOBAL_BYTES];
        size_t n;
    } decoded;
    decoded *d = malloc((size_t)a->nops * sizeof *d);
    if (!d)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    for (int i = 0; i < a->nops; i++) {
        ads_error err;
        const char *s = a->ops[i];
        rc = ads_kid_decode(d[i].bytes, &d[i].n, s, strlen(s), &err);
        if (!rc)
            rc = d[i].n == ADS_KID_LOCAL_BYTES
                     ? ads_kid_unpack_local(&d[i].f, d[i].bytes, &err)
                     : ads_kid_unpack_global(&d[i].f, d[i].bytes, o.interval, &err);
        if (rc) {
            free(d);
            return cli_fail_arg(c, s, &err);
        }
    }
    for (int i = 0; i < a->nops; i++) {
        const ads_kid_fields *f = &d[i].f;
        bool global = d[i].n == ADS_KID_GLOBAL_BYTES;
        if (i)
            putchar('\n');
        printf("kind = %s\n", global ? "global" : "local");
        printf("a = %lu\nb = %lu\nc = %lu\nseq = %lu\n", (unsigned long)f->a,
               (unsigned long)f->b, (unsigned long)f->c, (unsigned long)f->seq);
        print_time((uint64_t)f->a * 1000000u + f->b, (long)f->c, true);
        if (global)
            printf("node = %08lx\ninterval = %u\n", (unsigned long)f->node, o.interval);
        printf("hex = ");
        for (size_t k = 0; k < d[i].n; k++)
            printf("%02x", d[i].bytes[k]);
        putchar('\n');
    }
    free(d);
    return EXIT_OK;
}

int cmd_kid(cli_ctx *c, int argc, char **argv)
{
    static const cli_sub subs[] = {
        {"new", "kid new", kid_new},
        {"encode", "kid encode", kid_encode},
        {"decode", "kid decode", kid_decode},
    };
    return cli_dispatch(c, argc, argv, subs, sizeof subs / sizeof subs[0], "kid");
}
