/*
 * tests/fuzz/fuzz_record.h: what the record readers' fuzz targets share.
 */
#ifndef ADS_TESTS_FUZZ_RECORD_H
#define ADS_TESTS_FUZZ_RECORD_H

#include <string.h>

#include "classad/classad.h"

/* The same names in the same order, the same values, the same text. */
static inline int fuzz_same_record(const ads_record *a, const ads_record *b)
{
    if (ads_record_size(a) != ads_record_size(b))
        return 0;
    ads_buf x = ADS_BUF_INIT, y = ADS_BUF_INIT;
    int same = 1;
    for (size_t i = 0; same && i < ads_record_size(a); i++) {
        ads_str na = ads_record_name(a, i), nb = ads_record_name(b, i);
        const ads_expr *ea = ads_record_expr(a, i), *eb = ads_record_expr(b, i);
        const ads_value *va = ads_expr_literal_value(ea), *vb = ads_expr_literal_value(eb);
        ads_buf_clear(&x);
        ads_buf_clear(&y);
        ads_expr_unparse(&x, ea);
        ads_expr_unparse(&y, eb);
        same = na.len == nb.len && memcmp(na.p, nb.p, na.len) == 0 && x.len == y.len &&
               memcmp(x.p, y.p, x.len) == 0 && (!va || !vb || ads_value_same(va, vb));
    }
    ads_buf_free(&x);
    ads_buf_free(&y);
    return same;
}

#endif
