/*
 * tests/fuzz/fuzz_id_parse.c: ads_id_parse on any bytes. Properties: it never
 * reads past len; an accepted id writes back in canonical form and that text
 * parses to the same id; a refused one fills a message and a column inside
 * the input (or one past it, for "missing" errors).
 */
#include <string.h>

#include "idgen/idgen.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes, so ASan sees any over-read */
    char *s = malloc(size ? size : 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    for (int flags = 0; flags <= 1; flags++) {
        ads_id id, back;
        ads_error err;
        int rc = ads_id_parse(&id, s, size, flags, &err);
        if (rc == 0) {
            char text[ADS_ID_TEXT_MAX + 1];
            size_t n = ads_id_format(text, id);
            fuzz_check(n <= ADS_ID_TEXT_MAX && n == strlen(text));
            fuzz_check(ads_id_parse(&back, text, n, ADS_ID_PARSE_HASH_REQUIRED, NULL) == 0);
            fuzz_check(ads_id_eq(id, back));
        } else {
            fuzz_check(rc == ADS_ESYNTAX || rc == ADS_ERANGE);
            fuzz_check(err.code == rc && err.message[0] != '\0');
            fuzz_check(err.column >= 1 && (size_t)err.column <= size + 1);
        }
    }
    free(s);
    return 0;
}
