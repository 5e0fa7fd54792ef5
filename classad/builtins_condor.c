/*
 * classad/builtins_condor.c: the functions HTCondor registers from its own
 * compatibility layer (src/condor_utils/compat_classad.cpp) rather than its
 * ClassAd library's function table, which its documentation lists with the
 * others and real job and machine ads use: splitUserName splitSlotName
 * evalInEachContext countMatches envV1ToV2 mergeEnvironment argsToList
 * listToArgs userHome userMap. (split and the stringList family, also
 * registered there, are in builtins_string.c.)
 *
 * userHome and userMap consult the system's user database and HTCondor's
 * configured map files; no statement may read files or reach a directory
 * service (shared/spec/reliability.md, "Security"), so they behave as
 * HTCondor does with those sources switched off or empty, its default for
 * userHome: the default argument if one is given, else undefined.
 */
#include <stdlib.h>
#include <string.h>

#include "classad/builtins_int.h"

/* Evaluate argument i. */
static ads_value arg(ads_eval_ctx *cx, const ads_view *view, const ads_expr *const *args, size_t i)
{
    ads_value v;
    ads_eval__expr(&v, cx, args[i], view);
    return v;
}

/* *out = the text of b, copied into the arena; error when memory ran out. */
static void finish(ads_value *out, ads_eval_ctx *cx, ads_buf *b)
{
    if (b->failed || ads_string_copy(out, cx->arena, b->len ? b->p : "", b->len)) {
        cx->oom = true;
        *out = ads_errorv();
    }
    ads_buf_free(b);
}

/* ---- splitUserName splitSlotName ---- */

/*
 * splitUserName("user@domain") is {"user", "domain"}, splitSlotName
 * ("slot1@machine") {"slot1", "machine"}: split at the first '@'. Without
 * one, the name is the user ({"name", ""}) or the machine ({"", "name"}).
 * Any argument but a string, undefined included, is error (HTCondor's code).
 */
static void split_at(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                     const ads_expr *const *args, bool slot)
{
    ads_value s = arg(cx, view, args, 0);
    ads_value *items = ads_eval__alloc(cx, 2 * sizeof *items);
    if (s.type != ADS_STRING || !items) {
        *out = ads_errorv();
        return;
    }
    const char *at = s.u.s.len ? memchr(s.u.s.p, '@', s.u.s.len) : NULL;
    if (at) {
        items[0] = ads_string(s.u.s.p, (size_t)(at - s.u.s.p));
        items[1] = ads_string(at + 1, s.u.s.len - (size_t)(at - s.u.s.p) - 1);
    } else {
        items[slot ? 0 : 1] = ads_string("", 0);
        items[slot ? 1 : 0] = s;
    }
    *out = ads_list(items, 2);
}

static void fn_split_user_name(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                               const ads_expr *const *args, size_t n)
{
    (void)n;
    split_at(out, cx, view, args, false);
}

static void fn_split_slot_name(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                               const ads_expr *const *args, size_t n)
{
    (void)n;
    split_at(out, cx, view, args, true);
}

/* ---- evalInEachContext countMatches ---- */

/*
 * evalInEachContext(expr, list): expr evaluated in each record of list (a
 * list of the results); countMatches(expr, list): how many of those are
 * true (or a non-zero number). As in HTCondor, an expr that is an attribute
 * reference (`RequireGPUs`, `MY.RequireGPUs`) found from where the function
 * is called stands for that attribute's expression, and any other expr is
 * evaluated as written; names the record does not define are looked up from
 * where the function is called. An undefined list gives undefined
 * (evalInEachContext) or 0 (countMatches); a list element that is undefined
 * gives undefined, any other non-record error (and neither counts).
 * HTCondor's documentation says error for those; its code, followed here,
 * does not.
 */
static void eval_in_each(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                         const ads_expr *const *args, bool count)
{
    const ads_expr *e = args[0];
    while (e->kind == N_PAREN)
        e = e->u.ops.a;
    ads_expr ref;
    ads_value lit;
    const ads_expr *found = NULL;
    /* MY.name is name in the calling record, unless an attribute is named MY */
    if (e->kind == N_SELECT && e->u.sel.base->kind == N_ATTR &&
        ads_name__eq(e->u.sel.base->u.attr.name.p, e->u.sel.base->u.attr.name.len, "MY", 2) &&
        ads_builtin__lookup(cx, view, e->u.sel.base, &lit, &found) == 0) {
        memset(&ref, 0, sizeof ref);
        ref.kind = N_ATTR;
        ref.scope = SCOPE_NORMAL;
        ref.u.attr.name = e->u.sel.name;
        ref.u.attr.hash = e->u.sel.hash;
        e = &ref;
    }
    const ads_expr *x = args[0];
    bool have_lit = false;
    if (e->kind == N_ATTR) {
        found = NULL;
        int r = ads_builtin__lookup(cx, view, e, &lit, &found);
        if (r < 0) {
            *out = ads_errorv();
            return;
        }
        if (r == 1 && found)
            x = found;
        else if (r == 1)
            have_lit = true;
    }
    ads_value l = arg(cx, view, args, 1);
    if (l.type == ADS_UNDEFINED) {
        *out = count ? ads_int(0) : ads_undefined();
        return;
    }
    if (l.type != ADS_LIST) {
        *out = ads_errorv();
        return;
    }
    size_t n = l.u.list.n;
    ads_value *items = count ? NULL : ads_eval__alloc(cx, (n ? n : 1) * sizeof *items);
    if (!count && !items) {
        *out = ads_errorv();
        return;
    }
    int64_t matches = 0;
    for (size_t i = 0; i < n; i++) {
        const ads_value *it = &l.u.list.items[i];
        ads_value r;
        if (it->type == ADS_RECORD) {
            if (have_lit) {
                r = lit;
            } else {
                ads_view inner = ads_record_view(it->u.rec, view);
                ads_eval__expr(&r, cx, x, &inner);
            }
        } else {
            r = it->type == ADS_UNDEFINED ? ads_undefined() : ads_errorv();
        }
        if (count) {
            int64_t iv;
            double rv;
            int k = r.type == ADS_BOOLEAN ? 0 : ads_value__number(&r, &iv, &rv);
            if ((r.type == ADS_BOOLEAN && r.u.b) || (k == 1 && iv != 0) || (k == 2 && rv != 0))
                matches++;
        } else {
            items[i] = r;
        }
    }
    *out = count ? ads_int(matches) : ads_list(items, n);
}

static void fn_eval_in_each_context(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                                    const ads_expr *const *args, size_t n)
{
    (void)n;
    eval_in_each(out, cx, view, args, false);
}

static void fn_count_matches(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                             const ads_expr *const *args, size_t n)
{
    (void)n;
    eval_in_each(out, cx, view, args, true);
}

/* ---- argument and environment strings ---- */

/*
 * HTCondor's two syntaxes for a job's arguments and environment. V1
 * arguments are separated by white space and cannot hold any; V2 arguments
 * are separated by white space, and single quotes group text that holds
 * white space, with '' inside quotes a quote ("a 'b c' 'it''s'" is a, b c,
 * it's). A V1 environment is NAME=value entries separated by ';' (or by the
 * first character, if it is one of !#$%&*+,-/:;<>?@^`|~ and 0x1F), a V2
 * environment NAME=value entries in V2 argument syntax.
 */

typedef struct strs {
    ads_str *v;
    size_t n, cap;
} strs;

static bool strs_push(ads_eval_ctx *cx, strs *a, const char *p, size_t len)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        ads_str *v = ads_eval__alloc(cx, cap * sizeof *v);
        if (!v)
            return false;
        if (a->n)
            memcpy(v, a->v, a->n * sizeof *v);
        a->v = v;
        a->cap = cap;
    }
    char *copy = ads_eval__alloc(cx, len ? len : 1);
    if (!copy)
        return false;
    if (len)
        memcpy(copy, p, len);
    a->v[a->n].p = copy;
    a->v[a->n].len = len;
    a->n++;
    return true;
}

static bool is_arg_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Split V2 text into a; false for an unbalanced quote (or no memory). */
static bool split_v2(ads_eval_ctx *cx, ads_str s, strs *a)
{
    ads_buf tok = ADS_BUF_INIT;
    bool in_tok = false, ok = true;
    size_t i = 0;
    while (i < s.len && ok) {
        char c = s.p[i];
        if (c == '\'') {
            in_tok = true;
            i++;
            for (;;) {
                if (i == s.len) {
                    ok = false; /* unbalanced quote */
                    break;
                }
                if (s.p[i] == '\'') {
                    if (i + 1 < s.len && s.p[i + 1] == '\'') {
                        ads_buf_addc(&tok, '\'');
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                ads_buf_addc(&tok, s.p[i++]);
            }
        } else if (is_arg_space(c)) {
            i++;
            if (in_tok) {
                ok = strs_push(cx, a, tok.p, tok.len);
                tok.len = 0;
                in_tok = false;
            }
        } else {
            in_tok = true;
            ads_buf_addc(&tok, c);
            i++;
        }
    }
    if (ok && in_tok)
        ok = strs_push(cx, a, tok.p, tok.len);
    ok = ok && !tok.failed;
    ads_buf_free(&tok);
    return ok;
}

/* Split V1 arguments at white space. */
static bool split_v1(ads_eval_ctx *cx, ads_str s, strs *a)
{
    size_t i = 0;
    while (i < s.len) {
        while (i < s.len && is_arg_space(s.p[i]))
            i++;
        size_t start = i;
        while (i < s.len && !is_arg_space(s.p[i]))
            i++;
        if (i > start && !strs_push(cx, a, s.p + start, i - start))
            return false;
    }
    return true;
}

/* Append one argument in V2 syntax, as HTCondor writes it: each white-space
 * or quote character quoted where it stands (quoted runs joined: "a b c" is
 * a' 'b' 'c, "it's" it'''s), an empty argument ''. */
static void append_v2(ads_buf *b, const char *p, size_t len)
{
    if (b->len)
        ads_buf_addc(b, ' ');
    if (len == 0)
        ads_buf_adds(b, "''");
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        if (is_arg_space(c) || c == '\'') {
            if (b->len && b->p[b->len - 1] == '\'')
                b->len--; /* continue the quoted run just closed */
            else
                ads_buf_addc(b, '\'');
            if (c == '\'')
                ads_buf_addc(b, '\'');
            ads_buf_addc(b, c);
            ads_buf_addc(b, '\'');
        } else {
            ads_buf_addc(b, c);
        }
    }
}

/* The version argument of argsToList/listToArgs: 1 or 2 (default 2), else 0. */
static int args_version(ads_eval_ctx *cx, const ads_view *view, const ads_expr *const *args,
                        size_t n)
{
    if (n < 2)
        return 2;
    ads_value v = arg(cx, view, args, 1);
    if (v.type != ADS_INTEGER || (v.u.i != 1 && v.u.i != 2))
        return 0;
    return (int)v.u.i;
}

/* argsToList(s [, version]): the arguments that string s writes, as a list
 * of strings; error if s is not a string, the version not 1 or 2, or V2
 * text has an unbalanced quote. */
static void fn_args_to_list(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                            const ads_expr *const *args, size_t n)
{
    int version = args_version(cx, view, args, n);
    ads_value s = arg(cx, view, args, 0);
    strs a = {0};
    if (!version || s.type != ADS_STRING ||
        !(version == 1 ? split_v1(cx, s.u.s, &a) : split_v2(cx, s.u.s, &a))) {
        *out = ads_errorv();
        return;
    }
    ads_value *items = ads_eval__alloc(cx, (a.n ? a.n : 1) * sizeof *items);
    if (!items) {
        *out = ads_errorv();
        return;
    }
    for (size_t i = 0; i < a.n; i++)
        items[i] = ads_string(a.v[i].p, a.v[i].len);
    *out = ads_list(items, a.n);
}

/* listToArgs(list [, version]): the arguments string for a list of strings;
 * error if an element is not a string, the version not 1 or 2, or (V1) an
 * argument holds white space, which V1 cannot write. */
static void fn_list_to_args(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                            const ads_expr *const *args, size_t n)
{
    int version = args_version(cx, view, args, n);
    ads_value l = arg(cx, view, args, 0);
    if (!version || l.type != ADS_LIST) {
        *out = ads_errorv();
        return;
    }
    ads_buf b = ADS_BUF_INIT;
    for (size_t i = 0; i < l.u.list.n; i++) {
        const ads_value *it = &l.u.list.items[i];
        bool bad = it->type != ADS_STRING;
        for (size_t k = 0; !bad && version == 1 && k < it->u.s.len; k++)
            bad = is_arg_space(it->u.s.p[k]);
        if (bad) {
            ads_buf_free(&b);
            *out = ads_errorv();
            return;
        }
        if (version == 1) {
            if (b.len)
                ads_buf_addc(&b, ' ');
            ads_buf_add(&b, it->u.s.p, it->u.s.len);
        } else {
            append_v2(&b, it->u.s.p, it->u.s.len);
        }
    }
    finish(out, cx, &b);
}

/* An environment: entries by name (case-sensitive), later ones replacing. */
typedef struct env_entry {
    ads_str name, value;
    bool bare; /* an unexpanded $$() entry kept as written, with no '=' */
} env_entry;

typedef struct env {
    env_entry *v;
    size_t n, cap;
} env;

/* Add entry text "NAME=value" (or a bare $$() macro); false if it has no
 * '=' or no name (or no memory). */
static bool env_set(ads_eval_ctx *cx, env *e, ads_str entry)
{
    const char *eq = entry.len ? memchr(entry.p, '=', entry.len) : NULL;
    env_entry x = {{entry.p, entry.len}, {"", 0}, false};
    if (!eq) {
        bool macro = false;
        for (size_t i = 0; i + 1 < entry.len && !macro; i++)
            macro = entry.p[i] == '$' && entry.p[i + 1] == '$';
        if (!macro)
            return false;
        x.bare = true;
    } else {
        if (eq == entry.p)
            return false;
        x.name.len = (size_t)(eq - entry.p);
        x.value.p = eq + 1;
        x.value.len = entry.len - x.name.len - 1;
    }
    for (size_t i = 0; i < e->n; i++)
        if (e->v[i].name.len == x.name.len && memcmp(e->v[i].name.p, x.name.p, x.name.len) == 0) {
            e->v[i] = x;
            return true;
        }
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        env_entry *v = ads_eval__alloc(cx, cap * sizeof *v);
        if (!v)
            return false;
        if (e->n)
            memcpy(v, e->v, e->n * sizeof *v);
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = x;
    return true;
}

static int env_cmp(const void *a, const void *b)
{
    const env_entry *x = a, *y = b;
    size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = n ? memcmp(x->name.p, y->name.p, n) : 0;
    if (c)
        return c;
    return x->name.len < y->name.len ? -1 : x->name.len > y->name.len;
}

/* The environment in V2 syntax, entries sorted by name (byte order), as
 * HTCondor's (an ordered map) writes them. */
static void env_write(ads_value *out, ads_eval_ctx *cx, env *e)
{
    if (e->n > 1)
        qsort(e->v, e->n, sizeof *e->v, env_cmp);
    ads_buf b = ADS_BUF_INIT, item = ADS_BUF_INIT;
    for (size_t i = 0; i < e->n; i++) {
        item.len = 0;
        ads_buf_add(&item, e->v[i].name.p, e->v[i].name.len);
        if (!e->v[i].bare) {
            ads_buf_addc(&item, '=');
            ads_buf_add(&item, e->v[i].value.p, e->v[i].value.len);
        }
        append_v2(&b, item.len ? item.p : "", item.len);
    }
    if (item.failed)
        b.failed = true;
    ads_buf_free(&item);
    finish(out, cx, &b);
}

/* Merge V2 environment text into e; false if it does not parse. */
static bool env_merge_v2(ads_eval_ctx *cx, env *e, ads_str s)
{
    strs a = {0};
    if (!split_v2(cx, s, &a))
        return false;
    for (size_t i = 0; i < a.n; i++)
        if (!env_set(cx, e, a.v[i]))
            return false;
    return true;
}

/* envV1ToV2(s): a V1 environment string in V2 syntax; undefined for
 * undefined (so mergeEnvironment(envV1ToV2(Env), Environment) needs no
 * test); error for any other non-string or an entry without '=' or name. */
static void fn_env_v1_to_v2(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                            const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value s = arg(cx, view, args, 0);
    if (s.type == ADS_UNDEFINED) {
        *out = s;
        return;
    }
    if (s.type != ADS_STRING) {
        *out = ads_errorv();
        return;
    }
    const char *p = s.u.s.p, *end = s.u.s.p + s.u.s.len;
    char delim = ';';
    if (p < end && *p && strchr("!#$%&*+,-/:;<>?@^`|~\x1f", *p))
        delim = *p++;
    env e = {0};
    while (p < end) {
        while (p < end && is_arg_space(*p))
            p++;
        const char *start = p;
        while (p < end && *p != delim && *p != '\n')
            p++;
        ads_str entry = {start, (size_t)(p - start)};
        if (p < end)
            p++;
        if (entry.len && !env_set(cx, &e, entry)) {
            *out = ads_errorv();
            return;
        }
    }
    env_write(out, cx, &e);
}

/* mergeEnvironment(env, ...): V2 environment strings merged, a later entry
 * replacing an earlier one of the same name; undefined arguments skipped;
 * error for any other non-string or text that does not parse. */
static void fn_merge_environment(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                                 const ads_expr *const *args, size_t n)
{
    env e = {0};
    for (size_t i = 0; i < n; i++) {
        ads_value s = arg(cx, view, args, i);
        if (s.type == ADS_UNDEFINED)
            continue;
        if (s.type != ADS_STRING || !env_merge_v2(cx, &e, s.u.s)) {
            *out = ads_errorv();
            return;
        }
    }
    env_write(out, cx, &e);
}

/* ---- userHome userMap ---- */

/*
 * userHome(name [, default]): HTCondor looks the user's home directory up in
 * the system's user database, and only when its configuration enables that
 * (CLASSAD_ENABLE_USER_HOME, off by default). adstore never does (it would
 * read files or a directory service for a statement), so it gives what
 * HTCondor gives switched off: default when it is a non-empty string; else
 * undefined, or error when name is neither a string nor undefined.
 */
static void fn_user_home(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                         const ads_expr *const *args, size_t n)
{
    ads_value def = n == 2 ? arg(cx, view, args, 1) : ads_undefined();
    ads_value name = arg(cx, view, args, 0);
    if (def.type == ADS_STRING && def.u.s.len > 0) {
        *out = def;
        return;
    }
    *out = name.type == ADS_STRING || name.type == ADS_UNDEFINED ? ads_undefined()
                                                                 : ads_errorv();
}

/*
 * userMap(mapName, user [, preferred [, default]]): HTCondor maps the user
 * through the map files its configuration names. adstore reads no files for
 * a statement: no map is configured, so, as HTCondor gives for a user no map
 * knows, the result is undefined, or default with four arguments; error if
 * mapName or user is error.
 */
static void fn_user_map(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                        const ads_expr *const *args, size_t n)
{
    ads_value map = arg(cx, view, args, 0), user = arg(cx, view, args, 1);
    ads_value def = n == 4 ? arg(cx, view, args, 3) : ads_undefined();
    if (n >= 3)
        (void)arg(cx, view, args, 2);
    if (map.type == ADS_ERROR || user.type == ADS_ERROR) {
        *out = ads_errorv();
        return;
    }
    *out = def;
}

const ads_builtin ads_builtins__condor[] = {
    {"splitUserName", fn_split_user_name, 1, 1},
    {"splitSlotName", fn_split_slot_name, 1, 1},
    {"evalInEachContext", fn_eval_in_each_context, 2, 2},
    {"countMatches", fn_count_matches, 2, 2},
    {"argsToList", fn_args_to_list, 1, 2},
    {"listToArgs", fn_list_to_args, 1, 2},
    {"envV1ToV2", fn_env_v1_to_v2, 1, 1},
    {"mergeEnvironment", fn_merge_environment, 0, -1},
    {"userHome", fn_user_home, 1, 2},
    {"userMap", fn_user_map, 2, 4},
};
const size_t ads_builtins__condor_count =
    sizeof ads_builtins__condor / sizeof ads_builtins__condor[0];
