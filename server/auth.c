/*
 * server/auth.c: bearer tokens. A tokens file holds one token a line,
 * `NAME ROLE SHA256`, ROLE `read` or `write`, SHA256 the hex digest of the
 * token's text; `#` starts a comment line. The file never holds a token
 * itself: `adstore serve --add-token` makes one from 32 random bytes,
 * appends its hash and prints it once.
 */
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/server_int.h"

static const char hexdig[] = "0123456789abcdef";

static void to_hex(char *out, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hexdig[p[i] >> 4];
        out[2 * i + 1] = hexdig[p[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static bool from_hex(unsigned char *out, const char *s, size_t n)
{
    if (strlen(s) != 2 * n)
        return false;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_val(s[2 * i]), lo = hex_val(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return true;
}

static int sha256(unsigned char out[32], const char *p, size_t len)
{
    return gnutls_hash_fast(GNUTLS_DIG_SHA256, p, len, out) < 0 ? -1 : 0;
}

static bool valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof(((token_entry *)0)->name))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c == 0x7f || c == '#')
            return false;
    }
    return true;
}

/* Parse one line into e: 1 for an entry, 0 for a blank or comment line,
 * -1 for a bad line. */
static int parse_line(token_entry *e, char *line)
{
    char *save = NULL;
    char *name = strtok_r(line, " \t\r\n", &save);
    if (name == NULL || name[0] == '#')
        return 0;
    char *role = strtok_r(NULL, " \t\r\n", &save);
    char *hash = strtok_r(NULL, " \t\r\n", &save);
    if (role == NULL || hash == NULL || strtok_r(NULL, " \t\r\n", &save) != NULL ||
        !valid_name(name))
        return -1;
    if (strcmp(role, "read") == 0)
        e->role = ADS_ROLE_READ;
    else if (strcmp(role, "write") == 0)
        e->role = ADS_ROLE_WRITE;
    else
        return -1;
    if (!from_hex(e->hash, hash, sizeof e->hash))
        return -1;
    memcpy(e->name, name, strlen(name) + 1);
    return 1;
}

static int load_lines(token_set *t, FILE *f, const char *path, ads_error *err)
{
    char line[ADS_SERVE_TOKEN_LINE];
    int lineno = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f))
            return ads_error_set(err, ADS_ELIMIT, "%s:%d: line longer than %u bytes", path,
                                 lineno, ADS_SERVE_TOKEN_LINE - 1);
        token_entry e;
        int r = parse_line(&e, line);
        if (r < 0)
            return ads_error_set(err, ADS_EINVAL,
                                 "%s:%d: expected 'NAME read|write SHA256-HEX'", path, lineno);
        if (r == 0)
            continue;
        if (t->n == ADS_SERVE_MAX_TOKENS)
            return ads_error_set(err, ADS_ELIMIT, "%s: more than %u tokens", path,
                                 ADS_SERVE_MAX_TOKENS);
        for (size_t i = 0; i < t->n; i++) {
            /* names are unique, and a token has one role */
            if (strcmp(t->v[i].name, e.name) == 0)
                return ads_error_set(err, ADS_EINVAL, "%s:%d: a second token named '%s'", path,
                                     lineno, e.name);
            if (memcmp(t->v[i].hash, e.hash, sizeof e.hash) == 0)
                return ads_error_set(err, ADS_EINVAL,
                                     "%s:%d: the token of '%s' again (as '%s')", path, lineno,
                                     t->v[i].name, e.name);
        }
        t->v[t->n++] = e;
    }
    if (ferror(f))
        return ads_error_set(err, ADS_EIO, "%s: %s", path, strerror(errno));
    return 0;
}

int tokens_load(token_set *out, const char *path, ads_error *err)
{
    out->n = 0;
    out->v = calloc(ADS_SERVE_MAX_TOKENS, sizeof *out->v);
    if (out->v == NULL)
        return ads_error_set(err, ADS_ENOMEM, "out of memory reading %s", path);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        int e = errno;
        tokens_free(out);
        return ads_error_set(err, ADS_EIO, "cannot open tokens file %s: %s", path,
                             strerror(e));
    }
    int rc = load_lines(out, f, path, err);
    fclose(f);
    if (rc < 0)
        tokens_free(out);
    return rc;
}

void tokens_free(token_set *t)
{
    free(t->v);
    t->v = NULL;
    t->n = 0;
}

/* Equal without an early exit, so the time taken says nothing of where two
 * digests differ. */
static bool same_digest(const unsigned char *a, const unsigned char *b, size_t n)
{
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

const token_entry *tokens_find(const token_set *t, const char *tok, size_t len)
{
    unsigned char h[32];
    if (sha256(h, tok, len) < 0)
        return NULL;
    const token_entry *found = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (same_digest(h, t->v[i].hash, sizeof h) && found == NULL)
            found = &t->v[i];
    return found;
}

static int name_taken(const char *path, const char *name, bool *taken, ads_error *err)
{
    *taken = false;
    if (access(path, F_OK) != 0)
        return 0;
    token_set t;
    int rc = tokens_load(&t, path, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < t.n; i++)
        if (strcmp(t.v[i].name, name) == 0)
            *taken = true;
    tokens_free(&t);
    return 0;
}

static int append_line(const char *path, const char *line, ads_error *err)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return ads_error_set(err, ADS_EIO, "cannot open tokens file %s: %s", path,
                             strerror(errno));
    size_t len = strlen(line);
    ssize_t n = write(fd, line, len);
    int e = errno;
    if (fsync(fd) != 0 && n == (ssize_t)len) {
        n = -1;
        e = errno;
    }
    close(fd);
    if (n != (ssize_t)len)
        return ads_error_set(err, ADS_EIO, "cannot write tokens file %s: %s", path,
                             n < 0 ? strerror(e) : "short write");
    return 0;
}

int ads_server_add_token(char *out, const char *path, const char *name, ads_role role,
                         ads_error *err)
{
    if (!valid_name(name))
        return ads_error_set(err, ADS_EINVAL,
                             "token name '%s' must be 1 to 63 bytes without spaces, '#' or "
                             "control characters", name);
    if (role != ADS_ROLE_READ && role != ADS_ROLE_WRITE)
        return ads_error_set(err, ADS_EINVAL, "a token's role is read or write");
    bool taken;
    int rc = name_taken(path, name, &taken, err);
    if (rc < 0)
        return rc;
    if (taken)
        return ads_error_set(err, ADS_EINVAL, "%s already has a token named '%s'", path, name);
    unsigned char raw[32], h[32];
    if (gnutls_rnd(GNUTLS_RND_KEY, raw, sizeof raw) < 0)
        return ads_error_set(err, ADS_EIO, "no random bytes for a token");
    memcpy(out, "ads_", 4);
    to_hex(out + 4, raw, sizeof raw);
    if (sha256(h, out, strlen(out)) < 0)
        return ads_error_set(err, ADS_EIO, "cannot hash the token (GnuTLS SHA-256 failed)");
    char hex[65], line[ADS_SERVE_TOKEN_LINE];
    to_hex(hex, h, sizeof h);
    snprintf(line, sizeof line, "%s %s %s\n", name, role == ADS_ROLE_READ ? "read" : "write",
             hex);
    return append_line(path, line, err);
}
