/*
 * server/records.c: records sent to the server. A body in any of the text
 * forms the import reads (classad/formats.h: json, classad, long, xml) is
 * read one record at a time and stored in one transaction (POST
 * /api/records: all or nothing) or through the bulk loader (POST
 * /api/import: batches, as `adstore import` does).
 */
#include <string.h>
#include <strings.h>

#include "classad/formats.h"
#include "server/server_int.h"
#include "server/records.h"

int body_format_parse(body_format *out, const char *name, const char *ctype, ads_error *err)
{
    if (name == NULL) {
        if (ctype != NULL && (strncasecmp(ctype, "application/json", 16) == 0 ||
                              strncasecmp(ctype, "application/x-ndjson", 20) == 0))
            *out = BODY_JSON;
        else if (ctype != NULL && (strncasecmp(ctype, "application/xml", 15) == 0 ||
                                   strncasecmp(ctype, "text/xml", 8) == 0))
            *out = BODY_XML;
        else
            *out = BODY_CLASSAD;
        return 0;
    }
    static const struct {
        const char *name;
        body_format f;
    } names[] = {{"json", BODY_JSON},       {"jsonl", BODY_JSON}, {"classad", BODY_CLASSAD},
                 {"native", BODY_CLASSAD},  {"long", BODY_LONG},  {"xml", BODY_XML}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0) {
            *out = names[i].f;
            return 0;
        }
    return ads_error_set(err, ADS_EINVAL,
                         "unknown record format '%s'; the formats are json, jsonl, classad, "
                         "native, long and xml", name);
}

int body_reader_open(body_reader *r, body_format f, const char *text, size_t len,
                     ads_error *err)
{
    r->f = f;
    r->any = NULL;
    switch (f) {
    case BODY_JSON:
        return ads_json_reader_new((ads_json_reader **)&r->any, text, len, err);
    case BODY_LONG:
        return ads_long_reader_new((ads_long_reader **)&r->any, text, len, err);
    case BODY_XML:
        return ads_xml_reader_new((ads_xml_reader **)&r->any, text, len, err);
    default:
        return ads_classad_reader_new((ads_classad_reader **)&r->any, text, len, err);
    }
}

int body_reader_next(const ads_record **out, body_reader *r, ads_arena *a, ads_error *err)
{
    switch (r->f) {
    case BODY_JSON:
        return ads_json_reader_next(out, NULL, r->any, a, err);
    case BODY_LONG:
        return ads_long_reader_next(out, NULL, r->any, a, err);
    case BODY_XML:
        return ads_xml_reader_next(out, NULL, r->any, a, err);
    default:
        return ads_classad_reader_next(out, NULL, r->any, a, err);
    }
}

void body_reader_close(body_reader *r)
{
    switch (r->f) {
    case BODY_JSON:
        ads_json_reader_free(r->any);
        break;
    case BODY_LONG:
        ads_long_reader_free(r->any);
        break;
    case BODY_XML:
        ads_xml_reader_free(r->any);
        break;
    default:
        ads_classad_reader_free(r->any);
    }
    r->any = NULL;
}

typedef struct store_ctx {
    body_format f;
    const char *text;
    size_t len;
    ads_arena *a;
    uint64_t stored, unchanged;
} store_ctx;

/* Each record of the body, in one write transaction (run again from the
 * start if the engine grows the map). */
static int store_all(ads_txn *txn, void *arg, ads_error *err)
{
    store_ctx *sc = arg;
    body_reader r;
    sc->stored = sc->unchanged = 0;
    int rc = body_reader_open(&r, sc->f, sc->text, sc->len, err);
    if (rc < 0)
        return rc;
    for (;;) {
        const ads_record *rec;
        ads_arena_reset(sc->a);
        rc = body_reader_next(&rec, &r, sc->a, err);
        if (rc <= 0)
            break;
        ads_write_info info;
        rc = ads_txn_store(txn, rec, &info, err);
        if (rc < 0)
            break;
        if (info.changed)
            sc->stored++;
        else
            sc->unchanged++;
    }
    body_reader_close(&r);
    return rc;
}

int records_store(ads_db *db, body_format f, const char *text, size_t len, uint64_t *stored,
                  uint64_t *unchanged, ads_error *err)
{
    store_ctx sc = {.f = f, .text = text, .len = len, .a = ads_arena_new()};
    if (sc.a == NULL)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = ads_db_write(db, store_all, &sc, err);
    ads_arena_free(sc.a);
    *stored = sc.stored;
    *unchanged = sc.unchanged;
    return rc;
}

static int import_records(ads_bulk *b, body_reader *r, ads_arena *a, ads_error *err)
{
    for (;;) {
        const ads_record *rec;
        ads_arena_reset(a);
        int rc = body_reader_next(&rec, r, a, err);
        if (rc <= 0)
            return rc;
        rc = ads_bulk_add(b, rec, err);
        if (rc < 0)
            return rc;
    }
}

int records_import(ads_db *db, body_format f, const char *text, size_t len, uint64_t *stored,
                   uint64_t *unchanged, ads_error *err)
{
    body_reader r;
    ads_bulk *b = NULL;
    ads_bulk_options opt = ADS_BULK_OPTIONS_INIT;
    ads_arena *a = ads_arena_new();
    *stored = *unchanged = 0;
    if (a == NULL)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = body_reader_open(&r, f, text, len, err);
    if (rc < 0)
        goto cleanup;
    rc = ads_bulk_begin(&b, db, &opt, err);
    if (rc == 0)
        rc = import_records(b, &r, a, err);
    if (rc < 0 && b != NULL)
        ads_bulk_discard(b);
    else if (rc == 0)
        rc = ads_bulk_flush(b, err);
    if (b != NULL) {
        *stored = ads_bulk_committed(b) - ads_bulk_unchanged(b);
        *unchanged = ads_bulk_unchanged(b);
        ads_error e2;
        int rc2 = ads_bulk_end(b, rc < 0 ? &e2 : err);
        if (rc == 0)
            rc = rc2;
    }
    body_reader_close(&r);
cleanup:
    ads_arena_free(a);
    return rc;
}
