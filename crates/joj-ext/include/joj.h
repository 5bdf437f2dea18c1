/*
 * joj as a SQLite extension: libjoj.so (built by ./scripts/setup.sh into
 * target/ext/release/libjoj.so).
 *
 * Loading it into a SQLite registers two VFSs in that SQLite, for the whole process:
 *   "waldio"  WALDIO: SQLite's WAL mode with page-aligned O_DIRECT log commits into a
 *             preallocated WAL (docs/formats/waldio.md). Open a database with
 *             "file:app.db?vfs=waldio" (URI filenames) and PRAGMA journal_mode=WAL. URI options:
 *             waldio_sync=full|fua|normal, waldio_group=0|1, waldio_group_kib=N,
 *             waldio_group_ms=N, waldio_prealloc_frames=N, waldio_extend_frames=N; any other
 *             waldio_* key fails the open with a message.
 *   "joj"     the accounting VFS: SQLite's unix VFS, counting system calls and bytes per file
 *             role.
 * and SQL functions on every connection:
 *   joj_version()          the extension's version
 *   joj_counters()         JSON: the joj VFS's counters since the extension was loaded
 *   waldio_state([path])   JSON: waldio's options, counters, last error; with a database path,
 *                          its header as waldio sees it (page size, reserve, marked)
 *   waldio_convert(path)   give an existing database the 24 reserved bytes per page waldio needs
 *                          (VACUUM) and put it in WAL mode through waldio; JSON report
 *   joj_make_default(vfs)  make 'waldio' or 'joj' the process's default VFS; returns the old one
 *
 * A database in WAL mode under waldio is marked (byte 19 of its header) so that a SQLite without
 * the extension refuses it ("file is not a database") instead of reading an old state. To hand
 * it to such a program: open it through waldio and run PRAGMA journal_mode=DELETE.
 *
 * The extension runs inside whichever SQLite loads it; it was built against the headers of the
 * build machine's SQLite and refuses an older one with a message naming both versions.
 */
#ifndef JOJ_H
#define JOJ_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Entry point for sqlite3_load_extension(db, "path/to/libjoj", 0, &err) (the default name
 * SQLite derives from "libjoj.so"), the shell's ".load", and Python's load_extension. The
 * extension stays loaded for the life of the process (SQLITE_OK_LOAD_PERMANENTLY), and later
 * connections get the SQL functions too.
 */
int sqlite3_joj_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

/*
 * For a program that links libjoj.so (-ljoj) instead of loading it:
 *   sqlite3_auto_extension((void (*)(void))sqlite3_joj_auto_init);
 * before opening connections; every connection then has the functions. The VFSs are
 * registered when the first connection opens, and SQLite looks up a URI's vfs= before that:
 * open one connection without vfs= first (":memory:" will do).
 */
int sqlite3_joj_auto_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

#ifdef __cplusplus
}
#endif

#endif /* JOJ_H */
