/*
 * tests/fuzz/fuzz.h: what the fuzz targets share. Each target defines
 * LLVMFuzzerTestOneInput and checks properties of its parser, not only that
 * it survives: a violated property calls fuzz_fail, which aborts (libFuzzer
 * keeps the input; the replay test reports it).
 */
#ifndef ADS_TESTS_FUZZ_H
#define ADS_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_check(cond)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond);       \
            abort();                                                                          \
        }                                                                                     \
    } while (0)

#endif
