/*
 * base/error.c: error codes, their names, and filling an ads_error.
 * Nothing here allocates, so errors can be reported when memory is gone.
 */
#include "base/error.h"
#include "base/num.h"

#include <stdio.h>
#include <string.h>

static const char *const code_names[] = {
    "ok",
    "invalid argument",
    "syntax error",
    "value out of range",
    "limit reached",
    "out of memory",
    "I/O error",
    "storage error",
    "corrupt data",
    "unsupported format version",
    "not found",
    "already exists",
    "generator state inherited through fork()",
    "read-only",
    "store map full",
    "busy",
};

const char *ads_strerror(int code)
{
    if (code > 0 || code < ADS_ECODE_MIN)
        return "unknown error";
    return code_names[-code];
}

void ads_error_clear(ads_error *err)
{
    if (!err)
        return;
    err->code = ADS_OK;
    err->line = 0;
    err->column = 0;
    err->message[0] = '\0';
}

int ads_error_vset(ads_error *err, int code, int line, int column, const char *fmt,
                   va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->line = line;
    err->column = column;
    if (ads_vsnprintf_c(err->message, sizeof err->message, fmt, ap) < 0)
        snprintf(err->message, sizeof err->message, "%s", ads_strerror(code));
    return code;
}

int (ads_error_set)(ads_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ads_error_vset(err, code, 0, 0, fmt, ap);
    va_end(ap);
    return code;
}

int (ads_error_set_at)(ads_error *err, int code, int line, int column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ads_error_vset(err, code, line, column, fmt, ap);
    va_end(ap);
    return code;
}
