/*
 * Calls the extension's entry point with the real API table of this SQLite, except that
 * sqlite3_libversion_number answers 3.8.0: the extension must refuse, naming both versions.
 */
/* SQLITE_CORE: the API table as a struct, not the extension-side macros. */
#define SQLITE_CORE 1
#include <sqlite3ext.h>
#include <stdio.h>
#include <string.h>

int sqlite3_joj_auto_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

static const sqlite3_api_routines *real;
static int old_version(void) { return 3008000; }

static int capture(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
    (void)db;
    (void)err;
    real = api;
    return SQLITE_OK;
}

int main(void) {
    sqlite3 *db;
    /* An auto-extension is handed this SQLite's API table: borrow it. */
    sqlite3_auto_extension((void (*)(void))capture);
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || !real) return 2;
    sqlite3_api_routines old;
    memcpy(&old, real, sizeof old);
    old.libversion_number = old_version;
    char *err = NULL;
    int rc = sqlite3_joj_auto_init(db, &err, &old);
    printf("rc %d\nmessage %s\n", rc, err ? err : "(none)");
    sqlite3_close(db);
    return 0;
}
