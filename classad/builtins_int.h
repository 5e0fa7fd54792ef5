/*
 * classad/builtins_int.h: what the builtins_*.c files share beyond
 * classad_int.h: the table of HTCondor's compatibility-layer functions
 * (builtins_condor.c) and the attribute lookup that unparse(),
 * evalInEachContext() and countMatches() use without evaluating.
 */
#ifndef ADS_BUILTINS_INT_H
#define ADS_BUILTINS_INT_H

#include "classad/classad_int.h"

extern const ads_builtin ads_builtins__condor[];
extern const size_t ads_builtins__condor_count;

/* Attribute reference a (N_ATTR) looked up from view through the scopes, as
 * evaluation finds it, without evaluating: 1 found (*x its expression, or
 * NULL and *lit its value), 0 not found, -1 the record could not be read. */
int ads_builtin__lookup(ads_eval_ctx *cx, const ads_view *view, const ads_expr *a,
                        ads_value *lit, const ads_expr **x);

#endif
