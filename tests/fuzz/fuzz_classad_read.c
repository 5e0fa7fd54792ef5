/*
 * tests/fuzz/fuzz_classad_read.c: the new-ClassAd-syntax stream reader on
 * any bytes, from a buffer and from a FILE * over the same bytes.
 * Properties: both readers return the same records and the same errors; an
 * error has a code, a message and a position inside the input; every record
 * read unparses (ads_record_unparse) to text that reads back as the same
 * record.
 */
#include <string.h>

#include "classad/formats.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes, so ASan sees any over-read */
    char *s = malloc(size ? size : 1);
    ads_arena *a = ads_arena_new(), *b = ads_arena_new();
    FILE *f = fmemopen((void *)data, size, "rb");
    ads_classad_reader *r = NULL, *rf = NULL;
    ads_error err, errf;
    if (!s || !a || !b || (size && !f))
        goto done;
    memcpy(s, data, size);
    fuzz_check(ads_classad_reader_new(&r, s, size, &err) == 0);
    if (f)
        fuzz_check(ads_classad_reader_new_file(&rf, f, &errf) == 0);
    for (int n = 0; n < 64; n++) {
        const ads_record *rec = NULL, *recf = NULL;
        int line = 0, linef = 0;
        int rc = ads_classad_reader_next(&rec, &line, r, a, &err);
        if (rf) {
            int rcf = ads_classad_reader_next(&recf, &linef, rf, a, &errf);
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
            continue;
        }
        fuzz_check(line >= 1);
        ads_buf text = ADS_BUF_INIT;
        ads_record_unparse(&text, rec);
        ads_classad_reader *back;
        const ads_record *again = NULL;
        fuzz_check(ads_classad_reader_new(&back, text.p, text.len, &err) == 0);
        int rc2 = ads_classad_reader_next(&again, NULL, back, b, &err);
        if (rc2 != 1)
            fprintf(stderr, "re-read failed: %s\n--- text ---\n%s", err.message, text.p);
        fuzz_check(rc2 == 1);
        if (!fuzz_same_record(rec, again))
            fprintf(stderr, "--- text ---\n%s", text.p);
        fuzz_check(fuzz_same_record(rec, again));
        fuzz_check(ads_classad_reader_next(&again, NULL, back, b, &err) == 0);
        ads_classad_reader_free(back);
        ads_buf_free(&text);
        ads_arena_reset(b);
    }
done:
    ads_classad_reader_free(r);
    ads_classad_reader_free(rf);
    if (f)
        fclose(f);
    ads_arena_free(a);
    ads_arena_free(b);
    free(s);
    return 0;
}
