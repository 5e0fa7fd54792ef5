/*
 * tests/fuzz/fuzz_fluid_decode.c: FLUID decoding of any bytes, by shape and
 * as each named encoding. Properties: an accepted string's value encodes in
 * the chosen encoding to text that decodes to the same value; every value
 * survives all seven encodings; refusals carry a message and a column.
 */
#include <string.h>

#include "idgen/idgen.h"
#include "tests/fuzz/fuzz.h"

static void round_trip(uint64_t v)
{
    for (int e = 0; e < ADS_FLUID_ENC_COUNT; e++) {
        char text[ADS_FLUID_TEXT_MAX + 1];
        uint64_t back;
        ads_fluid_enc got;
        int n = ads_fluid_encode(text, sizeof text, v, (ads_fluid_enc)e, NULL);
        fuzz_check(n > 0 && (size_t)n == strlen(text));
        fuzz_check(ads_fluid_decode(&back, &got, text, (size_t)n, NULL) == 0);
        fuzz_check(back == v);
        fuzz_check(ads_fluid_decode_as(&back, (ads_fluid_enc)e, text, (size_t)n, NULL) == 0);
        fuzz_check(back == v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);
    uint64_t v;
    ads_fluid_enc enc;
    ads_error err;
    if (!s)
        return 0;
    memcpy(s, data, size);
    int rc = ads_fluid_decode(&v, &enc, s, size, &err);
    if (rc == 0)
        round_trip(v);
    else
        fuzz_check(err.message[0] != '\0' && err.column >= 1 &&
                   (size_t)err.column <= size + 1);
    for (int e = 0; e < ADS_FLUID_ENC_COUNT; e++) {
        rc = ads_fluid_decode_as(&v, (ads_fluid_enc)e, s, size, &err);
        if (rc == 0)
            round_trip(v);
        else
            fuzz_check(err.message[0] != '\0');
    }
    if (size >= 8) { /* the raw bytes as a value too */
        memcpy(&v, data, 8);
        round_trip(v);
    }
    free(s);
    return 0;
}
