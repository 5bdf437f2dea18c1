/*
 * waldio from C: load joj's extension (or link it), write rows to a waldio database, one
 * transaction each, reopen it and read them back.
 *
 *   cc -o waldio_demo crates/joj-ext/examples/waldio_demo.c -lsqlite3
 *   ./waldio_demo target/ext/release/libjoj.so demo.db 1000
 *
 * Linked instead of loaded (-DJOJ_LINKED): the extension is registered with
 * sqlite3_auto_extension before any connection is opened.
 *
 *   cc -DJOJ_LINKED -Icrates/joj-ext/include -o waldio_linked crates/joj-ext/examples/waldio_demo.c \
 *      -Ltarget/ext/release -Wl,-rpath,"$PWD/target/ext/release" -ljoj -lsqlite3
 *   ./waldio_linked - demo.db 1000
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef JOJ_LINKED
#include "joj.h"
#endif

static int fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "waldio_demo: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s LIBJOJ|- DATABASE ROWS\n", argv[0]);
        return 2;
    }
    const char *lib = argv[1], *path = argv[2];
    int rows = atoi(argv[3]);
    sqlite3 *db = NULL;
    char *err = NULL;

#ifdef JOJ_LINKED
    (void)lib;
    sqlite3_auto_extension((void (*)(void))sqlite3_joj_auto_init);
    /* SQLite looks a URI's vfs= up before it runs auto-extensions: the first connection that
     * registers the VFSs must not name one. */
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) return fail(db, "opening :memory:");
    sqlite3_close(db);
#else
    /* Any connection can load the extension; the VFSs it registers are for the process. */
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) return fail(db, "opening :memory:");
    sqlite3_enable_load_extension(db, 1);
    if (sqlite3_load_extension(db, lib, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "waldio_demo: loading %s: %s\n", lib, err);
        sqlite3_free(err);
        return 1;
    }
    sqlite3_close(db);
#endif

    char uri[4096];
    snprintf(uri, sizeof uri, "file:%s?vfs=waldio", path);
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI;
    if (sqlite3_open_v2(uri, &db, flags, NULL) != SQLITE_OK) return fail(db, "opening");
    if (sqlite3_exec(db,
                     "PRAGMA journal_mode=WAL;"
                     "CREATE TABLE IF NOT EXISTS t(i INTEGER PRIMARY KEY, v TEXT);",
                     NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "creating the table");
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(db, "INSERT INTO t(v) VALUES(hex(randomblob(16)))", -1, &ins, NULL))
        return fail(db, "preparing");
    for (int i = 0; i < rows; i++) { /* one transaction each (autocommit) */
        if (sqlite3_step(ins) != SQLITE_DONE) return fail(db, "inserting");
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    sqlite3_close(db);

    if (sqlite3_open_v2(uri, &db, flags, NULL) != SQLITE_OK) return fail(db, "reopening");
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT count(*), waldio_state() FROM t", -1, &q, NULL) ||
        sqlite3_step(q) != SQLITE_ROW)
        return fail(db, "reading back");
    printf("rows %d\nwaldio %s\n", sqlite3_column_int(q, 0), sqlite3_column_text(q, 1));
    sqlite3_finalize(q);
    sqlite3_close(db);
    return 0;
}
