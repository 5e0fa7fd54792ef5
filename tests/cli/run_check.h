/*
 * tests/cli/run_check.h: the assertions every command-line test makes about
 * a run of the real program (cmocka must be included first). A run that
 * exits otherwise than wanted fails with its stdout and stderr; so does one
 * where a sanitizer spoke on stderr.
 */
#ifndef ADS_TESTS_CLI_RUN_CHECK_H
#define ADS_TESTS_CLI_RUN_CHECK_H

#include <string.h>

#include "tests/cli/run.h"

/* Run with stdin `in` (NULL: empty) and require exit status `want`; the
 * caller frees r with run_free. */
#define RUN_IN(r, in, want, ...)                                                                   \
    do {                                                                                           \
        const char *argv_[] = {__VA_ARGS__, NULL};                                                 \
        assert_int_equal(run_adstore(&(r), argv_, (in)), 0);                                       \
        if ((r).status != (want))                                                                  \
            fail_msg("exit %d, expected %d; stdout '%s' stderr '%s'", (r).status, (want), (r).out, \
                     (r).err);                                                                     \
        if (strstr((r).err, "Sanitizer") || strstr((r).err, "runtime error:"))                     \
            fail_msg("the sanitizers found something:\n%s", (r).err);                              \
    } while (0)
#define RUN(r, want, ...) RUN_IN(r, NULL, want, __VA_ARGS__)

/* Run, require the exit status, forget the output. */
#define DO(want, ...)                                                                              \
    do {                                                                                           \
        run_result r_;                                                                             \
        RUN(r_, want, __VA_ARGS__);                                                                \
        run_free(&r_);                                                                             \
    } while (0)

/* Run, require exit want, and compare stdout and stderr exactly. */
#define EXPECT(in, want, out_, err_, ...)                                                          \
    do {                                                                                           \
        run_result r_;                                                                             \
        RUN_IN(r_, in, want, __VA_ARGS__);                                                         \
        if (strcmp(r_.out, (out_)) || strcmp(r_.err, (err_)))                                      \
            fail_msg("stdout:\n%s---\nwant:\n%s---\nstderr:\n%s---\nwant:\n%s---", r_.out, (out_), \
                     r_.err, (err_));                                                              \
        run_free(&r_);                                                                             \
    } while (0)


#endif
