/*
 * tests/install/example.c: the smallest embedding program, built against an
 * installed adstore through pkg-config by check_install.sh. It makes three
 * ordered ids in one transaction and prints them.
 */
#include <stdio.h>

#include <adstore/engine.h>

int main(int argc, char **argv)
{
    ads_db *db;
    ads_txn *txn;
    ads_id ids[3];
    ads_error err;
    char text[ADS_ID_TEXT_MAX + 1];

    if (argc != 2) {
        fprintf(stderr, "usage: example STORE-DIR\n");
        return 2;
    }
    if (ads_db_open(&db, argv[1], ADS_DB_CREATE, &err)) {
        fprintf(stderr, "example: %s\n", err.message);
        return 1;
    }
    if (ads_txn_begin(&txn, db, 0, &err) ||
        ads_txn_new_ids(ids, 3, NULL, txn, ADS_ID_ORDERED, &err) ||
        ads_txn_commit(txn, &err)) {
        fprintf(stderr, "example: %s\n", err.message);
        ads_db_close(db);
        return 1;
    }
    for (int i = 0; i < 3; i++) {
        ads_id_format(text, ids[i]);
        puts(text);
    }
    ads_db_close(db);
    return 0;
}
