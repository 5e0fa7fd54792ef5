/*
 * classad/expr_memo.h: memos of recurring expressions (classad/expr_memo.c),
 * for readers and writers that meet the same expression in record after
 * record. Internal to the library. A memo belongs to its creator and is
 * used by one thread at a time; every function gives exactly what the
 * plain call would (the tests compare them), only faster when the same
 * expression comes again.
 */
#ifndef ADS_CLASSAD_EXPR_MEMO_H
#define ADS_CLASSAD_EXPR_MEMO_H

#include "../classad/classad.h"

typedef struct ads_expr_memo ads_expr_memo;

/* 0, or ADS_ENOMEM (*out NULL). */
int ads_expr_memo_new(ads_expr_memo **out);
void ads_expr_memo_free(ads_expr_memo *m);

/*
 * ads_expr_parse of text, then ads_expr_fold, into arena a; a text m has
 * seen before gets a copy of the tree it gave then. m may be NULL (no
 * memo). Errors as ads_expr_parse.
 */
int ads_expr__parse_memo(ads_expr_memo *m, const ads_expr **out, ads_arena *a, const char *text,
                         size_t len, ads_error *err);

/* ads_expr_unparse(b, e), the text taken from m when a tree equal to e was
 * written through m before. m may be NULL. */
void ads_expr__unparse_memo(ads_expr_memo *m, ads_buf *b, const ads_expr *e);

#endif
