/* storage_example.c: a small program embedding an adstore store.
 * Build: cc storage_example.c $(pkg-config --cflags --libs adstore)
 * Run:   ./a.out /tmp/example.db */
#include <stdio.h>
#include <string.h>

#include <adstore/engine.h>

static int check(int rc, const ads_error *err)
{
    if (rc < 0)
        fprintf(stderr, "error: %s\n", err->message);
    return rc < 0;
}

/* Store records given as ClassAd text, all in one transaction. */
static int store(ads_db *db, const char *const *texts, size_t n, ads_error *err)
{
    ads_arena *a = ads_arena_new();
    ads_txn *txn;
    int rc = ads_txn_begin(&txn, db, 0, err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const ads_record *r;
        rc = ads_record_parse(&r, a, texts[i], strlen(texts[i]), err);
        if (rc == 0)
            rc = ads_txn_store(txn, r, NULL, err);
    }
    if (rc == 0)
        rc = ads_txn_commit(txn, err); /* durable when it returns */
    else
        ads_txn_abort(txn);            /* nothing of it remains */
    ads_arena_free(a);
    return rc;
}

int main(int argc, char **argv)
{
    ads_db *db;
    ads_error err;
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    if (check(ads_db_open(&db, argv[1], ADS_DB_CREATE, &err), &err))
        return 1;

    /* A type, then records of it; a second store of "node1" merges. */
    const char *const first[] = {
        "[ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]",
        "[ AdType = \"Machine\"; Name = \"node1\"; Memory = 2048; Arch = \"X86_64\" ]",
        "[ AdType = \"Machine\"; Name = \"node2\"; Memory = 512; Arch = \"ARM64\" ]",
    };
    const char *const second[] = {
        "[ AdType = \"Machine\"; Name = \"NODE1\"; Memory = 4096 ]",
    };
    if (check(store(db, first, 3, &err), &err) || check(store(db, second, 1, &err), &err))
        return 1;

    /* A scan with a constraint, evaluated on the stored bytes. */
    ads_arena *a = ads_arena_new();
    const ads_expr *where;
    const char *w = "Memory > 1024 && Arch == \"x86_64\"";
    ads_txn *txn;
    const ads_type *machine;
    ads_scan *scan;
    ads_row *row;
    int rc;
    if (check(ads_expr_parse(&where, a, w, strlen(w), &err), &err) ||
        check(ads_expr_prepare(&where, a, where, &err), &err) ||
        check(ads_txn_begin(&txn, db, ADS_TXN_READONLY, &err), &err) ||
        check(ads_txn_type(&machine, txn, "machine", 7, &err), &err) ||
        check(ads_scan_open(&scan, txn, machine, where, 0, &err), &err))
        return 1;
    while ((rc = ads_scan_next(&row, scan, &err)) == 1) {
        const ads_record *r;
        ads_buf text = ADS_BUF_INIT;
        if (check(ads_row_record(&r, row, 0, a, &err), &err))
            return 1;
        ads_record_unparse(&text, r);
        printf("match: %s\n", ads_buf_cstr(&text));
        ads_buf_free(&text);

        /* every row of the record, oldest first */
        ads_scan *history;
        ads_row *old;
        if (check(ads_history_open(&history, txn, row, NULL, 0, &err), &err))
            return 1;
        while (ads_scan_next(&old, history, &err) == 1) {
            ads_value mem;
            const ads_expr *x = NULL;
            ads_view view = ads_row_view(old, NULL);
            view.ops->lookup(view.self, "Memory", 6, ads_name_hash("Memory", 6), a, &mem, &x);
            printf("  row: Memory = %lld, latest = %s\n", (long long)mem.u.i,
                   old->latest ? "true" : "false");
        }
        ads_scan_close(history);
    }
    ads_scan_close(scan);
    ads_txn_abort(txn); /* a read transaction just ends */
    if (check(rc, &err))
        return 1;

    /* An increment sequence: values commit with the transaction. */
    const char *const seq[] = {"[ AdType = \"Sequence\"; Name = \"tickets\"; "
                               "ValueType = \"integer\" ]"};
    ads_value v;
    if (check(store(db, seq, 1, &err), &err) || check(ads_txn_begin(&txn, db, 0, &err), &err) ||
        check(ads_txn_next_value(&v, txn, "tickets", 7, a, &err), &err) ||
        check(ads_txn_commit(txn, &err), &err))
        return 1;
    printf("ticket: %lld\n", (long long)v.u.i);

    ads_arena_free(a);
    ads_db_close(db);
    return 0;
}
