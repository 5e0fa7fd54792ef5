/*
 * classad/builtins_string.c: the string, list, math and regular-expression
 * built-ins (shared/spec/classad.md section 6), with HTCondor's semantics.
 */
#include <string.h>

#include "classad/classad_int.h"

/* Append the text of v as strcat() sees it; false for a value that has none. */
static bool append_text(ads_buf *b, const ads_value *v)
{
    switch (v->type) {
    case ADS_STRING:
        ads_buf_add(b, v->u.s.p, v->u.s.len);
        return true;
    case ADS_ABSTIME:
        ads_time__format_abs_condor(b, v->u.abs.secs, v->u.abs.offset);
        return true;
    case ADS_RELTIME:
        ads_time__format_rel_condor(b, v->u.rel);
        return true;
    case ADS_INTEGER:
    case ADS_REAL:
    case ADS_BOOLEAN:
    case ADS_LIST:
    case ADS_RECORD:
    case ADS_IDENT:
        ads_value_unparse_condor(b, v);
        return true;
    default:
        return false;
    }
}

/* strcat(a, b, ...): the texts joined; undefined if any argument is
 * undefined, error if any is error (checked first). */
static void fn_strcat(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, size_t n)
{
    ads_buf b = ADS_BUF_INIT;
    bool undefined = false;
    *out = ads_string("", 0);
    for (size_t i = 0; i < n; i++) {
        ads_value v;
        ads_eval__expr(&v, cx, args[i], view);
        if (v.type == ADS_ERROR) {
            *out = ads_errorv();
            goto done;
        }
        if (v.type == ADS_UNDEFINED) {
            undefined = true;
            continue;
        }
        if (!append_text(&b, &v)) {
            *out = ads_errorv();
            goto done;
        }
    }
    if (undefined)
        *out = ads_undefined();
    else if (b.failed || ads_string_copy(out, cx->arena, ads_buf_cstr(&b), b.len)) {
        cx->oom = true;
        *out = ads_errorv();
    }
done:
    ads_buf_free(&b);
}

const ads_builtin ads_builtins__string[] = {
    {"strcat", fn_strcat, 0, -1},
};
const size_t ads_builtins__string_count =
    sizeof ads_builtins__string / sizeof ads_builtins__string[0];
