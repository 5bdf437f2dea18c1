/*
 * VFSs stacked with joj's, against the system's SQLite (tests/c_programs.rs runs it):
 *
 *   vfs_stack LIB stack BASE DB    a pass-through shim VFS over BASE (waldio, joj or unix), the
 *                                  way test, tracing and fault-injecting VFSs sit over others:
 *                                  WAL mode, 200 commits, reopen; prints rows and the reserve
 *   vfs_stack LIB checksum DB      a shim that writes an 8-byte checksum into the last bytes of
 *                                  every page (as cksumvfs does) over waldio; prints each step's
 *                                  result and the message
 *   vfs_stack LIB syscalls DB      xSetSystemCall through joj's VFS replaces the unix VFS's
 *                                  "unlink" and "openDirectory" (which the unix VFS's xDelete and
 *                                  its directory sync in xSync use); prints how many calls
 *                                  reached the replacements in DELETE-mode commits on joj
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Shim {
  sqlite3_file base;      /* pMethods: the shim's */
  int checksum;           /* write a checksum into the last 8 bytes of each page */
  sqlite3_file *real;     /* the file of the VFS below, right after this struct */
} Shim;

static sqlite3_vfs *below;  /* the VFS under the shim */
static int checksum_mode;

static int sClose(sqlite3_file *f) { Shim *s = (Shim *)f; return s->real->pMethods->xClose(s->real); }
static int sRead(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { Shim *s = (Shim *)f; return s->real->pMethods->xRead(s->real, b, n, o); }
static int sWrite(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) {
  Shim *s = (Shim *)f;
  if (s->checksum && n >= 512 && (n & (n - 1)) == 0) {
    unsigned char *copy = malloc(n);
    memcpy(copy, b, n);
    memset(copy + n - 8, 0xC5, 8);
    int rc = s->real->pMethods->xWrite(s->real, copy, n, o);
    free(copy);
    return rc;
  }
  return s->real->pMethods->xWrite(s->real, b, n, o);
}
static int sTruncate(sqlite3_file *f, sqlite3_int64 n) { Shim *s = (Shim *)f; return s->real->pMethods->xTruncate(s->real, n); }
static int sSync(sqlite3_file *f, int fl) { Shim *s = (Shim *)f; return s->real->pMethods->xSync(s->real, fl); }
static int sFileSize(sqlite3_file *f, sqlite3_int64 *n) { Shim *s = (Shim *)f; return s->real->pMethods->xFileSize(s->real, n); }
static int sLock(sqlite3_file *f, int l) { Shim *s = (Shim *)f; return s->real->pMethods->xLock(s->real, l); }
static int sUnlock(sqlite3_file *f, int l) { Shim *s = (Shim *)f; return s->real->pMethods->xUnlock(s->real, l); }
static int sCheck(sqlite3_file *f, int *o) { Shim *s = (Shim *)f; return s->real->pMethods->xCheckReservedLock(s->real, o); }
static int sControl(sqlite3_file *f, int op, void *a) { Shim *s = (Shim *)f; return s->real->pMethods->xFileControl(s->real, op, a); }
static int sSector(sqlite3_file *f) { Shim *s = (Shim *)f; return s->real->pMethods->xSectorSize(s->real); }
static int sDevice(sqlite3_file *f) { Shim *s = (Shim *)f; return s->real->pMethods->xDeviceCharacteristics(s->real); }
static int sShmMap(sqlite3_file *f, int r, int sz, int e, void volatile **p) { Shim *s = (Shim *)f; return s->real->pMethods->xShmMap(s->real, r, sz, e, p); }
static int sShmLock(sqlite3_file *f, int o, int n, int fl) { Shim *s = (Shim *)f; return s->real->pMethods->xShmLock(s->real, o, n, fl); }
static void sShmBarrier(sqlite3_file *f) { Shim *s = (Shim *)f; s->real->pMethods->xShmBarrier(s->real); }
static int sShmUnmap(sqlite3_file *f, int d) { Shim *s = (Shim *)f; return s->real->pMethods->xShmUnmap(s->real, d); }

static sqlite3_io_methods shim_io = {
  2, sClose, sRead, sWrite, sTruncate, sSync, sFileSize, sLock, sUnlock, sCheck, sControl,
  sSector, sDevice, sShmMap, sShmLock, sShmBarrier, sShmUnmap, 0, 0
};

static int vOpen(sqlite3_vfs *v, sqlite3_filename name, sqlite3_file *f, int flags, int *out) {
  Shim *s = (Shim *)f;
  memset(s, 0, sizeof *s);
  s->real = (sqlite3_file *)&s[1];
  int rc = below->xOpen(below, name, s->real, flags, out);
  if (rc != SQLITE_OK || s->real->pMethods == 0) return rc;
  s->checksum = checksum_mode && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL));
  f->pMethods = &shim_io;
  return SQLITE_OK;
}
static int vDelete(sqlite3_vfs *v, const char *n, int d) { return below->xDelete(below, n, d); }
static int vAccess(sqlite3_vfs *v, const char *n, int fl, int *o) { return below->xAccess(below, n, fl, o); }
static int vFull(sqlite3_vfs *v, const char *n, int sz, char *o) { return below->xFullPathname(below, n, sz, o); }
static int vRandom(sqlite3_vfs *v, int n, char *o) { return below->xRandomness(below, n, o); }
static int vSleep(sqlite3_vfs *v, int us) { return below->xSleep(below, us); }
static int vTime(sqlite3_vfs *v, double *t) { return below->xCurrentTime(below, t); }
static int vError(sqlite3_vfs *v, int n, char *o) { return below->xGetLastError(below, n, o); }
static void *vDlOpen(sqlite3_vfs *v, const char *n) { return below->xDlOpen(below, n); }
static void vDlError(sqlite3_vfs *v, int n, char *o) { below->xDlError(below, n, o); }
static void (*vDlSym(sqlite3_vfs *v, void *h, const char *n))(void) { return below->xDlSym(below, h, n); }
static void vDlClose(sqlite3_vfs *v, void *h) { below->xDlClose(below, h); }

static sqlite3_vfs shim_vfs = {
  1, 0, 512, 0, "shim", 0, vOpen, vDelete, vAccess, vFull, vDlOpen, vDlError, vDlSym, vDlClose,
  vRandom, vSleep, vTime, vError
};

/* Register the shim as NAME over BASE (made the default when DFLT). */
static void shim_over(const char *name, sqlite3_vfs *base, int dflt) {
  below = base;
  shim_vfs.zName = name;
  shim_vfs.szOsFile = (int)sizeof(Shim) + base->szOsFile;
  shim_vfs.mxPathname = base->mxPathname;
  sqlite3_vfs_register(&shim_vfs, dflt);
}

static void load(const char *lib) {
  sqlite3 *db;
  char *err = 0;
  sqlite3_open(":memory:", &db);
  sqlite3_enable_load_extension(db, 1);
  if (sqlite3_load_extension(db, lib, 0, &err) != SQLITE_OK) {
    fprintf(stderr, "loading %s: %s\n", lib, err);
    exit(2);
  }
  sqlite3_close(db);
}

static int exec(sqlite3 *db, const char *sql) {
  int rc = sqlite3_exec(db, sql, 0, 0, 0);
  printf("%s -> %d %s\n", sql, rc, rc ? sqlite3_errmsg(db) : "");
  return rc;
}

static long one(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  long v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, 0) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static sqlite3 *open_on(const char *path, const char *vfs) {
  sqlite3 *db;
  int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs);
  printf("open %s on %s -> %d %s\n", path, vfs, rc, rc ? sqlite3_errmsg(db) : "");
  return db;
}

static int count_unlinks, count_dirs;
static int (*real_unlink)(const char *);
static int counting_unlink(const char *p) { count_unlinks++; return real_unlink(p); }
static int (*real_open_dir)(const char *, int *);
static int counting_open_dir(const char *p, int *fd) { count_dirs++; return real_open_dir(p, fd); }

int main(int argc, char **argv) {
  if (argc < 4) return 2;
  const char *lib = argv[1], *mode = argv[2];
  load(lib);
  if (!strcmp(mode, "syscalls")) {
    sqlite3_vfs *joj = sqlite3_vfs_find("joj");
    if (!joj->xSetSystemCall || !joj->xGetSystemCall || !joj->xNextSystemCall) {
      printf("no system-call methods\n");
      return 0;
    }
    real_unlink = (int (*)(const char *))joj->xGetSystemCall(joj, "unlink");
    real_open_dir = (int (*)(const char *, int *))joj->xGetSystemCall(joj, "openDirectory");
    int rc = joj->xSetSystemCall(joj, "unlink", (sqlite3_syscall_ptr)counting_unlink);
    rc |= joj->xSetSystemCall(joj, "openDirectory", (sqlite3_syscall_ptr)counting_open_dir);
    printf("set %d next-after-open %s\n", rc, joj->xNextSystemCall(joj, "open"));
    sqlite3 *db = open_on(argv[3], "joj");
    exec(db, "PRAGMA journal_mode=DELETE");
    exec(db, "CREATE TABLE t(x)");
    for (int i = 0; i < 5; i++) exec(db, "INSERT INTO t VALUES(1)");
    sqlite3_close(db);
    joj->xSetSystemCall(joj, 0, 0); /* restore the defaults */
    printf("unlinks %d directory-syncs %d\n", count_unlinks, count_dirs);
    return 0;
  }
  if (!strcmp(mode, "checksum")) {
    checksum_mode = 1;
    shim_over("shim", sqlite3_vfs_find("waldio"), 0);
    sqlite3 *db = open_on(argv[3], "shim");
    exec(db, "CREATE TABLE t(x)");
    exec(db, "PRAGMA journal_mode=WAL");
    exec(db, "INSERT INTO t VALUES(1)");
    sqlite3_close(db);
    db = open_on(argv[3], "shim");
    sqlite3_close(db);
    return 0;
  }
  /* stack BASE DB */
  const char *base = argv[3], *path = argv[4];
  shim_over("shim", sqlite3_vfs_find(base), 0);
  sqlite3 *db = open_on(path, "shim");
  exec(db, "PRAGMA journal_mode=WAL");
  exec(db, "CREATE TABLE t(x)");
  int failed = 0;
  for (int i = 0; i < 200; i++) failed += exec(db, "INSERT INTO t VALUES(randomblob(300))") != 0;
  sqlite3_close(db);
  db = open_on(path, "shim");
  printf("rows %ld reserve %ld failed %d\n", one(db, "SELECT count(*) FROM t"),
         one(db, "SELECT 0"), failed);
  sqlite3_close(db);
  FILE *f = fopen(path, "rb");
  unsigned char h[100];
  if (f && fread(h, 1, 100, f) == 100) printf("header-reserve %d\n", h[20]);
  if (f) fclose(f);
  return 0;
}
