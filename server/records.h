/*
 * server/records.h: reading records from a request body and storing them
 * (server/records.c).
 */
#ifndef ADS_SERVER_RECORDS_H
#define ADS_SERVER_RECORDS_H

#include "engine/engine.h"

typedef enum body_format { BODY_CLASSAD, BODY_JSON, BODY_LONG, BODY_XML } body_format;

/* The format named name (?format=), else the one the Content-Type ctype
 * names (may be NULL), else classad. ADS_EINVAL for an unknown name. */
int body_format_parse(body_format *out, const char *name, const char *ctype, ads_error *err);

/* A reader of one format over len bytes of text (text outlives it). */
typedef struct body_reader {
    body_format f;
    void *any;
} body_reader;

int body_reader_open(body_reader *r, body_format f, const char *text, size_t len,
                     ads_error *err);
/* 1 and *out (in arena a), 0 at the end, or an error with line and column. */
int body_reader_next(const ads_record **out, body_reader *r, ads_arena *a, ads_error *err);
void body_reader_close(body_reader *r);

/* Store every record of the body in one transaction: all or nothing.
 * *stored counts records that appended a row, *unchanged the others. */
int records_store(ads_db *db, body_format f, const char *text, size_t len, uint64_t *stored,
                  uint64_t *unchanged, ads_error *err);
/* Load the body through the bulk loader: batches commit as they fill; on
 * error the batches before the failing one stay. */
int records_import(ads_db *db, body_format f, const char *text, size_t len, uint64_t *stored,
                   uint64_t *unchanged, ads_error *err);

#endif
