/*
 * tests/fuzz/fuzz_kid_decode.c: k-ordered id text of any bytes. Properties:
 * accepted text is canonical (encoding its bytes gives the same text back);
 * unpacked fields pack back to the same bytes for every interval that
 * accepts them; refusals carry a message and a column.
 */
#include <string.h>

#include "idgen/idgen.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);
    uint8_t bytes[ADS_KID_GLOBAL_BYTES], again[ADS_KID_GLOBAL_BYTES];
    size_t n;
    ads_error err;
    if (!s)
        return 0;
    memcpy(s, data, size);
    if (ads_kid_decode(bytes, &n, s, size, &err) == 0) {
        char text[32];
        fuzz_check(n == ADS_KID_LOCAL_BYTES || n == ADS_KID_GLOBAL_BYTES);
        int len = ads_kid_encode(text, sizeof text, bytes, n, NULL);
        fuzz_check(len > 0 && (size_t)len == size && memcmp(text, s, size) == 0);
        ads_kid_fields f;
        if (n == ADS_KID_LOCAL_BYTES) {
            if (ads_kid_unpack_local(&f, bytes, NULL) == 0) {
                fuzz_check(ads_kid_pack_local(again, &f, NULL) == 0);
                fuzz_check(memcmp(again, bytes, n) == 0);
            }
        } else {
            for (unsigned iv = 5; iv <= 10; iv++)
                if (ads_kid_unpack_global(&f, bytes, iv, NULL) == 0) {
                    fuzz_check(ads_kid_pack_global(again, &f, iv, NULL) == 0);
                    fuzz_check(memcmp(again, bytes, n) == 0);
                }
        }
    } else {
        fuzz_check(err.message[0] != '\0');
    }
    free(s);
    return 0;
}
