//! `joj --version`: joj's version, the bundled SQLite's, and the compile options that decide
//! what joj can measure (batch-atomic writes, fdatasync, thread safety).

/// The defines `.cargo/config.toml` passes to the bundled SQLite build (`LIBSQLITE3_FLAGS`).
const SQLITE_BUILD_FLAGS: &str = env!("LIBSQLITE3_FLAGS");

/// Compile options reported by `PRAGMA compile_options` that matter to joj.
const RELEVANT: [&str; 6] = [
    "ENABLE_BATCH_ATOMIC_WRITE",
    "THREADSAFE",
    "DEFAULT_SYNCHRONOUS",
    "DEFAULT_WAL_SYNCHRONOUS",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_MMAP_SIZE",
];

fn compile_options() -> Result<Vec<String>, rusqlite::Error> {
    let conn = rusqlite::Connection::open_in_memory()?;
    let mut stmt = conn.prepare("PRAGMA compile_options")?;
    let opts = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(opts)
}

pub fn long_version() -> String {
    let mut s = format!(
        "joj {}\nSQLite {} (bundled, {})\n",
        env!("CARGO_PKG_VERSION"),
        rusqlite::version(),
        // SAFETY: sqlite3_sourceid returns a pointer to a static NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(rusqlite::ffi::sqlite3_sourceid()) }.to_string_lossy()
    );
    s.push_str(&format!("SQLite build flags: {SQLITE_BUILD_FLAGS}\n"));
    match compile_options() {
        Ok(opts) => {
            let batch = opts.iter().any(|o| o == "ENABLE_BATCH_ATOMIC_WRITE");
            s.push_str("SQLite compile options:");
            for o in opts
                .iter()
                .filter(|o| RELEVANT.iter().any(|r| o.starts_with(r)))
            {
                s.push_str(&format!(" {o}"));
            }
            s.push('\n');
            if !batch {
                s.push_str("warning: SQLite was built without ENABLE_BATCH_ATOMIC_WRITE\n");
            }
        }
        Err(e) => s.push_str(&format!("SQLite compile options: unavailable ({e})\n")),
    }
    let fdatasync = SQLITE_BUILD_FLAGS.contains("HAVE_FDATASYNC");
    s.push_str(&format!(
        "fdatasync: {} (joj's VFS issues fsync or fdatasync itself, as --sync-call says)\n",
        if fdatasync {
            "HAVE_FDATASYNC=1"
        } else {
            "not defined"
        }
    ));
    s
}
