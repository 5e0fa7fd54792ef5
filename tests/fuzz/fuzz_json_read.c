/*
 * tests/fuzz/fuzz_json_read.c: the JSON reader on any bytes, from a buffer
 * and from a FILE * over the same bytes. Properties: both readers return the
 * same records and the same error; an error has a code, a message and a
 * position inside the input, and is final; every record read writes back
 * (ads_json_write, compact and pretty) and that text reads back as the same
 * record.
 */
#include <string.h>

#include "classad/formats.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_record.h"

static void write_and_read_back(const ads_record *rec, int flags, ads_arena *b)
{
    ads_buf text = ADS_BUF_INIT;
    ads_error err;
    fuzz_check(ads_json_write(&text, rec, flags, &err) == 0);
    ads_json_reader *back;
    const ads_record *again = NULL;
    fuzz_check(ads_json_reader_new(&back, text.p, text.len, &err) == 0);
    int rc = ads_json_reader_next(&again, NULL, back, b, &err);
    if (rc != 1)
        fprintf(stderr, "re-read failed: %s\n--- text ---\n%s\n", err.message, text.p);
    fuzz_check(rc == 1);
    if (!fuzz_same_record(rec, again))
        fprintf(stderr, "--- text ---\n%s\n", text.p);
    fuzz_check(fuzz_same_record(rec, again));
    fuzz_check(ads_json_reader_next(&again, NULL, back, b, &err) == 0);
    ads_json_reader_free(back);
    ads_buf_free(&text);
    ads_arena_reset(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);
    ads_arena *a = ads_arena_new(), *b = ads_arena_new();
    FILE *f = fmemopen((void *)data, size, "rb");
    ads_json_reader *r = NULL, *rf = NULL;
    ads_error err, errf;
    if (!s || !a || !b || (size && !f))
        goto done;
    memcpy(s, data, size);
    fuzz_check(ads_json_reader_new(&r, s, size, &err) == 0);
    if (f)
        fuzz_check(ads_json_reader_new_file(&rf, f, &errf) == 0);
    for (int n = 0; n < 64; n++) {
        const ads_record *rec = NULL, *recf = NULL;
        int line = 0, linef = 0;
        int rc = ads_json_reader_next(&rec, &line, r, a, &err);
        if (rf) {
            int rcf = ads_json_reader_next(&recf, &linef, rf, a, &errf);
            fuzz_check(rc == rcf);
            if (rc < 0)
                fuzz_check(err.line == errf.line && err.column == errf.column &&
                           strcmp(err.message, errf.message) == 0);
            else if (rc == 1)
                fuzz_check(line == linef && fuzz_same_record(rec, recf));
        }
        if (rc == 0)
            break;
        if (rc < 0) {
            fuzz_check(rc == ADS_ESYNTAX || rc == ADS_ELIMIT);
            fuzz_check(err.code == rc && err.message[0] != '\0');
            fuzz_check(err.line >= 1 && err.column >= 1 && (size_t)err.column <= size + 1);
            /* final */
            fuzz_check(ads_json_reader_next(&rec, &line, r, a, &errf) == rc);
            break;
        }
        fuzz_check(line >= 1);
        write_and_read_back(rec, ADS_JSON_COMPACT, b);
        write_and_read_back(rec, ADS_JSON_PRETTY, b);
    }
done:
    ads_json_reader_free(r);
    ads_json_reader_free(rf);
    if (f)
        fclose(f);
    ads_arena_free(a);
    ads_arena_free(b);
    free(s);
    return 0;
}
