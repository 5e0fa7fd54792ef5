/*
 * tests/fuzz/replay.c: run a fuzz target over every file of its corpus
 * folder (and every crash input kept there), as a normal test. Usage:
 * replay_<target> DIR. Prints how many inputs ran; any violated property
 * aborts with the file's name printed first.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"

static char current[4096] = "(empty input)";

/* A property failed (abort): say which input before dying. */
static void on_abort(int sig)
{
    static const char msg[] = "replay: the failing input is ";
    (void)sig;
    (void)!write(2, msg, sizeof msg - 1);
    (void)!write(2, current, strlen(current));
    (void)!write(2, "\n", 1);
    signal(SIGABRT, SIG_DFL);
    raise(SIGABRT);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS-DIR\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "%s: cannot open %s\n", argv[0], argv[1]);
        return 1;
    }
    struct dirent *e;
    int ran = 0;
    signal(SIGABRT, on_abort);
    /* the empty input first: every parser must refuse it cleanly */
    LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        snprintf(current, sizeof current, "%s", path);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
        if (!buf || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
            fclose(f);
            free(buf);
            fprintf(stderr, "%s: cannot read %s\n", argv[0], path);
            return 1;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(buf, (size_t)len);
        free(buf);
        ran++;
    }
    closedir(d);
    printf("%d passed, 0 failed (corpus %s)\n", ran, argv[1]);
    if (ran == 0) {
        fprintf(stderr, "%s: corpus %s is empty\n", argv[0], argv[1]);
        return 1;
    }
    return 0;
}
