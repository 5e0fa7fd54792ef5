/*
 * base/error.h: the one error model of the adstore library.
 *
 * Fallible functions return 0 on success or a negative ADS_E* code, and fill
 * an ads_error if the caller passed one (NULL is always allowed). The error
 * holds the code, a message meant for the user, and for text input the line
 * and column (1-based; 0 when not about text). Reporting an error never
 * allocates: the message lives in a fixed buffer inside the struct.
 *
 * ClassAd `undefined` and `error` are values, not C errors; C errors are for
 * syntax, limits, storage and memory.
 */
#ifndef ADS_BASE_ERROR_H
#define ADS_BASE_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes. Keep in step with the table in base/error.c. */
enum {
    ADS_OK = 0,
    ADS_EINVAL = -1,   /* a bad argument from the caller */
    ADS_ESYNTAX = -2,  /* text that does not parse; line and column are set */
    ADS_ERANGE = -3,   /* a value outside what its field can hold */
    ADS_ELIMIT = -4,   /* a size, depth or count limit was reached */
    ADS_ENOMEM = -5,   /* out of memory */
    ADS_EIO = -6,      /* an operating system call failed */
    ADS_ESTORAGE = -7, /* the storage layer (LMDB) failed */
    ADS_ECORRUPT = -8, /* stored or encoded bytes fail their checks */
    ADS_EVERSION = -9, /* a format version this build does not know */
    ADS_ENOTFOUND = -10,
    ADS_EEXIST = -11,
    ADS_EFORK = -12,   /* generator state inherited through fork() */
    ADS_EREADONLY = -13,
    ADS_EMAPFULL = -14, /* the store's map filled up (ads_db_write grows it and retries) */
    ADS_EBUSY = -15,    /* a resource is held by others (e.g. open transactions) */
    ADS_ECODE_MIN = -15
};

#define ADS_ERROR_MESSAGE_MAX 256

typedef struct ads_error {
    int code;    /* ADS_OK or an ADS_E* code */
    int line;    /* 1-based line of text input, 0 if not about text */
    int column;  /* 1-based column (in bytes), 0 if not about text */
    char message[ADS_ERROR_MESSAGE_MAX];
} ads_error;

/* The fixed name of a code ("syntax error", ...); never NULL. */
const char *ads_strerror(int code);

/* Reset err to "no error". NULL is allowed. */
void ads_error_clear(ads_error *err);

/*
 * Fill err (if not NULL) with code and a printf-style message; returns code so
 * a caller can write `return ads_error_set(err, ADS_EINVAL, "...")`.
 * Messages longer than the buffer are cut, never overflowed.
 */
int ads_error_set(ads_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As ads_error_set, with the line and column of text input. */
int ads_error_set_at(ads_error *err, int code, int line, int column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

int ads_error_vset(ads_error *err, int code, int line, int column, const char *fmt,
                   va_list ap);

/* The calls above return code from another translation unit, where the
 * compiler cannot see it is nonzero: after `if ((rc = helper(...))) return
 * rc;` it would then warn that outputs the helper fills only on success may
 * be used uninitialized. These wrappers return code where it can see it. */
static inline int ads_error__code(int filled, int code)
{
    (void)filled;
    return code;
}
#define ads_error_set(err, code, ...)                                                         \
    ads_error__code(ads_error_set((err), (code), __VA_ARGS__), (code))
#define ads_error_set_at(err, code, line, column, ...)                                        \
    ads_error__code(ads_error_set_at((err), (code), (line), (column), __VA_ARGS__), (code))

#ifdef __cplusplus
}
#endif
#endif
