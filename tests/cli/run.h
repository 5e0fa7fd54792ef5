/*
 * tests/cli/run.h: run the real adstore program and capture what it does.
 */
#ifndef ADS_TESTS_CLI_RUN_H
#define ADS_TESTS_CLI_RUN_H

#include <stddef.h>

typedef struct run_result {
    int status;   /* exit status, or 128 + signal */
    char *out;    /* stdout, NUL-terminated */
    size_t out_len;
    char *err;    /* stderr, NUL-terminated */
    size_t err_len;
} run_result;

/* Run ADS_PROGRAM with argv (NULL-terminated, without the program name) and
 * stdin from `input` (NULL: empty). Returns 0, or -1 if it could not start. */
int run_adstore(run_result *r, const char *const *argv, const char *input);
/* The same, with stdout written to the file out_path instead (NULL: captured;
 * r->out is then empty) and the environment env (NULL: this process's). */
int run_adstore_env(run_result *r, const char *const *argv, const char *input,
                    const char *out_path, char *const *env);
void run_free(run_result *r);

/* A fresh empty directory under /tmp for a store; free with remove_tree. */
char *make_temp_dir(void);
void remove_tree(const char *dir);

/* A test's fresh directory (*dir, freed and set to NULL by cli_dir_free)
 * and, when store is not NULL, the path of a store named name inside it
 * (cap bytes). -1 if the directory cannot be made. */
int cli_dir_new(char **dir, char *store, size_t cap, const char *name);
void cli_dir_free(char **dir);

#endif
