//! The SQLite workloads, with Mobibench's semantics: table `tblMyList(id, Value, creation_Date)`,
//! 100-byte values, tables pre-filled for update and delete, one connection and database file
//! per thread, every statement inside an explicit transaction.
//!
//! A run has three phases: *prepare* (create the databases, schema and pre-fill, then close —
//! nothing of it is measured), *set up* (each thread opens its connection, sets the pragmas,
//! and for a steady-state run performs a warm-up of the same transactions followed by a WAL
//! checkpoint), and the *measured window*, which the caller brackets through [`Window`] so
//! that tracing and counters cover exactly the transactions and nothing else.
//!
//! The X-FTL paper's workloads ([`crate::paper`]) run through the same phases on one
//! connection (`db/paper.rs`).

mod paper;

use crate::WorkloadError;
use crate::config::{DbOp, DbWorkload, JournalMode, KeyOrder, StartState};
use crate::result::PaperOutcome;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Called by the runner around the measured window, from the main thread, while every
/// worker waits: `begin` after all connections are set up, `end` after the last commit.
pub trait Window: Sync {
    fn begin(&self) -> Result<(), WorkloadError>;
    fn end(&self) -> Result<(), WorkloadError>;
    /// Called by each thread after each transaction; a paced window waits here for the
    /// device model (`crate::pace`).
    fn after_transaction(&self) -> Result<(), WorkloadError> {
        Ok(())
    }
}

/// A window that measures nothing: for running a workload without tracing or counters.
pub struct Unmeasured;

impl Window for Unmeasured {
    fn begin(&self) -> Result<(), WorkloadError> {
        Ok(())
    }
    fn end(&self) -> Result<(), WorkloadError> {
        Ok(())
    }
}

/// What the measured window produced.
#[derive(Debug, Clone)]
pub struct DbRunOutput {
    /// One entry per transaction, over all threads, in nanoseconds.
    pub latencies_ns: Vec<u64>,
    pub elapsed: Duration,
    /// Paths of every database file, for the caller's checks.
    pub databases: Vec<PathBuf>,
    /// What a paper workload did (`None` for Mobibench's).
    pub paper: Option<PaperOutcome>,
}

/// The value Mobibench inserts (and, rotated, the one it updates to), repeated to `len`.
fn record(len: usize, update: bool) -> String {
    const PATTERN: &str = "aaaaaaaaaabbbbbbbbbbccccccccccddddddddddeeeeeeeeeeffffffffffgggggggggghhhhhhhhhhiiiiiiiiiijjjjjjjjjj";
    let start = if update { 50 } else { 0 };
    PATTERN
        .bytes()
        .cycle()
        .skip(start)
        .take(len)
        .map(char::from)
        .collect()
}

fn table_name(t: u32) -> String {
    if t == 0 {
        "tblMyList".to_string()
    } else {
        format!("tblMyList{t}")
    }
}

fn schema_names(w: &DbWorkload) -> Vec<String> {
    let mut v = vec!["main".to_string()];
    v.extend((1..=w.attached_dbs).map(|k| format!("aux{k}")));
    v
}

/// Database files of thread `thread`: main first, then the attached ones.
pub fn database_paths(dir: &Path, w: &DbWorkload, thread: u32) -> Vec<PathBuf> {
    let mut v = vec![dir.join(format!("joj-{thread}.db"))];
    v.extend((1..=w.attached_dbs).map(|k| dir.join(format!("joj-{thread}-aux{k}.db"))));
    v
}

/// Statements of one thread's run spread round-robin over `targets` (schema, table) pairs:
/// the rows each table needs so that every update, delete and select finds its row.
fn rows_needed(w: &DbWorkload) -> u64 {
    let targets = u64::from(w.tables) * u64::from(w.attached_dbs + 1);
    let statements = w.transactions * u64::from(w.statements_per_txn);
    let warmup = if w.start == StartState::Steady {
        statements
    } else {
        0
    };
    let needed = (statements + warmup).div_ceil(targets);
    let by_size = (w.prefill_kib() * 1024).div_ceil(w.record_bytes as u64);
    match w.op {
        DbOp::Insert => by_size,
        _ => needed.max(by_size),
    }
}

fn open(path: &Path, vfs: &str) -> Result<Connection, WorkloadError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags_and_vfs(path, flags, vfs).map_err(|e| WorkloadError::Sqlite {
        what: format!("opening {}", path.display()),
        source: e,
    })
}

pub(crate) fn sql_err(what: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> WorkloadError {
    let what = what.into();
    move |source| {
        if source.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
            WorkloadError::DiskFull { what }
        } else {
            WorkloadError::Sqlite { what, source }
        }
    }
}

/// Open thread `thread`'s connection with its attached databases and pragmas.
pub(crate) fn connect(
    dir: &Path,
    w: &DbWorkload,
    thread: u32,
    vfs: &str,
) -> Result<Connection, WorkloadError> {
    let paths = database_paths(dir, w, thread);
    let conn = open(&paths[0], vfs)?;
    for (k, p) in paths.iter().enumerate().skip(1) {
        conn.execute(
            "ATTACH DATABASE ?1 AS ?2",
            rusqlite::params![p.to_string_lossy(), format!("aux{k}")],
        )
        .map_err(sql_err(format!("attaching {}", p.display())))?;
    }
    for schema in schema_names(w) {
        let mode: String = conn
            .query_row(
                &format!("PRAGMA {schema}.journal_mode={}", w.journal.pragma()),
                [],
                |r| r.get(0),
            )
            .map_err(sql_err("setting journal_mode"))?;
        if !mode.eq_ignore_ascii_case(w.journal.pragma()) {
            return Err(WorkloadError::Config(format!(
                "SQLite refused journal_mode={} on {schema} (it answered {mode})",
                w.journal.pragma()
            )));
        }
        // WALDIO's durability option decides when SQLite itself syncs (docs/formats/waldio.md).
        let synchronous = match w.journal {
            JournalMode::Waldio(m) => m.options().sqlite_synchronous(),
            _ => w.synchronous.pragma(),
        };
        conn.execute_batch(&format!("PRAGMA {schema}.synchronous={synchronous};"))
            .map_err(sql_err("setting synchronous"))?;
    }
    Ok(conn)
}

/// A new, empty database file at `path` with the run's page size, in WAL mode when the run
/// uses it.
fn create(path: &Path, w: &DbWorkload, vfs: &str) -> Result<Connection, WorkloadError> {
    // joj never writes into a database it did not create.
    if path.exists() {
        return Err(WorkloadError::Config(format!(
            "{} already exists: joj creates its own databases; point it at an empty directory",
            path.display()
        )));
    }
    let conn = open(path, vfs)?;
    conn.execute_batch(&format!("PRAGMA page_size={};", w.page_size))
        .map_err(sql_err("setting page_size"))?;
    if w.journal.is_wal() {
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .map_err(sql_err("setting journal_mode=WAL"))?;
    }
    Ok(conn)
}

/// Create every database, its tables and the pre-fill; close them. Not measured.
pub fn prepare(dir: &Path, w: &DbWorkload, vfs: &str) -> Result<(), WorkloadError> {
    w.validate().map_err(WorkloadError::Config)?;
    if let Some(p) = &w.paper {
        return paper::prepare(dir, w, p, vfs);
    }
    let rows = rows_needed(w);
    let value = record(w.record_bytes, false);
    for thread in 0..w.threads {
        for path in database_paths(dir, w, thread) {
            let conn = create(&path, w, vfs)?;
            let key = if w.autoincrement {
                "INTEGER PRIMARY KEY AUTOINCREMENT"
            } else {
                "INTEGER PRIMARY KEY"
            };
            let tx = conn.unchecked_transaction().map_err(sql_err("begin"))?;
            for t in 0..w.tables {
                tx.execute_batch(&format!(
                    "CREATE TABLE IF NOT EXISTS {} (id {key}, Value TEXT NOT NULL, creation_Date INTEGER);",
                    table_name(t)
                ))
                .map_err(sql_err("creating table"))?;
                let mut ins = tx
                    .prepare(&format!(
                        "INSERT INTO {} (id, Value, creation_Date) VALUES (?1, ?2, ?1)",
                        table_name(t)
                    ))
                    .map_err(sql_err("prepare pre-fill"))?;
                for id in 1..=rows as i64 {
                    ins.execute(rusqlite::params![id, value])
                        .map_err(sql_err("pre-fill"))?;
                }
            }
            tx.commit().map_err(sql_err("commit pre-fill"))?;
        }
    }
    Ok(())
}

/// The keys of one thread's statements, in order, as (target index, id).
struct KeyPlan {
    targets: u64,
    rows: u64,
    order: KeyOrder,
    op: DbOp,
    rng: ChaCha8Rng,
    /// For random deletes: a shuffled permutation of each table's ids, so no row is deleted twice.
    permutation: Vec<u64>,
    next_insert: Vec<u64>,
    counter: u64,
}

impl KeyPlan {
    fn new(w: &DbWorkload, thread: u32, start_at: u64) -> KeyPlan {
        let targets = u64::from(w.tables) * u64::from(w.attached_dbs + 1);
        let rows = rows_needed(w);
        let base_seed = w.seed ^ (u64::from(thread) << 32);
        let mut permutation = Vec::new();
        if w.op == DbOp::Delete && w.keys == KeyOrder::Random {
            // The same permutation for warm-up and measured run, so no row is deleted twice.
            permutation = (1..=rows).collect();
            permutation.shuffle(&mut ChaCha8Rng::seed_from_u64(base_seed));
        }
        // The measured run after a warm-up draws other random keys than the warm-up did.
        let rng = ChaCha8Rng::seed_from_u64(base_seed ^ start_at.rotate_left(17));
        // Sequential inserts continue after the rows earlier statements added to each target.
        let next_insert = (0..targets)
            .map(|t| rows + 1 + start_at / targets + u64::from(t < start_at % targets))
            .collect();
        KeyPlan {
            targets,
            rows,
            order: w.keys,
            op: w.op,
            rng,
            permutation,
            next_insert,
            counter: start_at,
        }
    }

    fn next(&mut self) -> (usize, i64) {
        let k = self.counter;
        self.counter += 1;
        let target = (k % self.targets) as usize;
        let index = k / self.targets;
        let id = match (self.op, self.order) {
            (DbOp::Insert, KeyOrder::Sequential) => {
                let id = self.next_insert[target];
                self.next_insert[target] += 1;
                id
            }
            // Random 62-bit keys: collisions are vanishingly unlikely (n²/2⁶³).
            (DbOp::Insert, KeyOrder::Random) => self.rng.random_range(self.rows + 1..1u64 << 62),
            (DbOp::Delete, KeyOrder::Random) => {
                self.permutation[(index % self.rows.max(1)) as usize]
            }
            (_, KeyOrder::Sequential) => index % self.rows.max(1) + 1,
            (_, KeyOrder::Random) => self.rng.random_range(1..=self.rows.max(1)),
        };
        (target, id as i64)
    }
}

struct Statements<'c> {
    stmts: Vec<rusqlite::CachedStatement<'c>>,
}

fn statements<'c>(conn: &'c Connection, w: &DbWorkload) -> Result<Statements<'c>, WorkloadError> {
    let mut stmts = Vec::new();
    for schema in schema_names(w) {
        for t in 0..w.tables {
            let table = format!("{schema}.{}", table_name(t));
            let sql = match w.op {
                DbOp::Insert => {
                    format!("INSERT INTO {table} (id, Value, creation_Date) VALUES (?1, ?2, ?1)")
                }
                DbOp::Update => format!("UPDATE {table} SET Value = ?2 WHERE id = ?1"),
                DbOp::Delete => format!("DELETE FROM {table} WHERE id = ?1"),
                DbOp::Select => {
                    format!("SELECT id, Value, creation_Date FROM {table} WHERE id = ?1")
                }
            };
            stmts.push(
                conn.prepare_cached(&sql)
                    .map_err(sql_err("preparing the statement"))?,
            );
        }
    }
    Ok(Statements { stmts })
}

fn run_transaction(
    conn: &Connection,
    stmts: &mut Statements<'_>,
    plan: &mut KeyPlan,
    w: &DbWorkload,
    value: &str,
) -> Result<(), WorkloadError> {
    conn.execute_batch("BEGIN").map_err(sql_err("BEGIN"))?;
    for _ in 0..w.statements_per_txn {
        let (target, id) = plan.next();
        let stmt = &mut stmts.stmts[target];
        let r = match w.op {
            DbOp::Insert | DbOp::Update => stmt.execute(rusqlite::params![id, value]).map(|_| ()),
            DbOp::Delete => stmt.execute([id]).map(|_| ()),
            DbOp::Select => stmt
                .query([id])
                .and_then(|mut rows| rows.next().map(|_| ())),
        };
        if let Err(e) = r {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(sql_err(format!("{} of id {id}", w.op))(e));
        }
    }
    conn.execute_batch("COMMIT").map_err(sql_err("COMMIT"))
}

/// Run the workload on databases made by [`prepare`], measuring only inside `window`.
pub fn run(
    dir: &Path,
    w: &DbWorkload,
    vfs: &str,
    window: &dyn Window,
    progress: Option<Arc<AtomicU64>>,
) -> Result<DbRunOutput, WorkloadError> {
    w.validate().map_err(WorkloadError::Config)?;
    if let Some(p) = &w.paper {
        return paper::run(dir, w, p, vfs, window, progress);
    }
    let threads = w.threads as usize;
    let ready = Barrier::new(threads + 1);
    let go = Barrier::new(threads + 1);
    let done = Barrier::new(threads + 1);
    let statements_per_thread = w.transactions * u64::from(w.statements_per_txn);
    let results: Vec<Result<Vec<u64>, WorkloadError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..w.threads)
            .map(|thread| {
                let (ready, go, done, progress) = (&ready, &go, &done, progress.clone());
                s.spawn(move || {
                    // Every thread passes all three barriers even after an error, so the main
                    // thread never waits forever; the error is returned after `done`.
                    let setup = (|| {
                        let conn = connect(dir, w, thread, vfs)?;
                        if w.start == StartState::Steady {
                            warm_up(&conn, w, thread)?;
                        }
                        Ok::<_, WorkloadError>(conn)
                    })();
                    ready.wait();
                    go.wait();
                    let result = setup.and_then(|conn| {
                        let mut stmts = statements(&conn, w)?;
                        let start_at = if w.start == StartState::Steady {
                            statements_per_thread
                        } else {
                            0
                        };
                        let mut plan = KeyPlan::new(w, thread, start_at);
                        let value = record(w.record_bytes, w.op == DbOp::Update);
                        let mut lat = Vec::with_capacity(w.transactions as usize);
                        for i in 0..w.transactions {
                            let t0 = Instant::now();
                            run_transaction(&conn, &mut stmts, &mut plan, w, &value)?;
                            lat.push(t0.elapsed().as_nanos() as u64);
                            window.after_transaction()?;
                            if let Some(p) = &progress {
                                p.fetch_add(1, Ordering::Relaxed);
                            }
                            if w.interval_ms > 0 && i + 1 < w.transactions {
                                std::thread::sleep(Duration::from_millis(w.interval_ms));
                            }
                        }
                        drop(stmts);
                        Ok((lat, conn))
                    });
                    done.wait();
                    // Close after the window: closing the last WAL connection checkpoints.
                    result.map(|(lat, conn)| {
                        drop(conn);
                        lat
                    })
                })
            })
            .collect();
        ready.wait();
        let begun = window.begin();
        let t0 = Instant::now();
        go.wait();
        done.wait();
        let elapsed = t0.elapsed();
        let ended = if begun.is_ok() { window.end() } else { Ok(()) };
        let mut out: Vec<Result<Vec<u64>, WorkloadError>> = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(WorkloadError::Config("a workload thread panicked".into()))
                })
            })
            .collect();
        if let Err(e) = begun.and(ended) {
            out.push(Err(e));
        }
        out.push(Ok(vec![elapsed.as_nanos() as u64]));
        out
    });
    let mut latencies = Vec::with_capacity((w.transactions * u64::from(w.threads)) as usize);
    let mut elapsed = Duration::ZERO;
    let n = results.len();
    for (i, r) in results.into_iter().enumerate() {
        let v = r?;
        if i == n - 1 {
            elapsed = Duration::from_nanos(v[0]);
        } else {
            latencies.extend(v);
        }
    }
    let databases = (0..w.threads)
        .flat_map(|t| database_paths(dir, w, t))
        .collect();
    Ok(DbRunOutput {
        latencies_ns: latencies,
        elapsed,
        databases,
        paper: None,
    })
}

/// Steady state: run the same transactions once before the window, then restart the WAL so
/// the measured commits overwrite a WAL file that already has its size.
fn warm_up(conn: &Connection, w: &DbWorkload, thread: u32) -> Result<(), WorkloadError> {
    let mut stmts = statements(conn, w)?;
    let mut plan = KeyPlan::new(w, thread, 0);
    let value = record(w.record_bytes, false);
    for _ in 0..w.transactions {
        run_transaction(conn, &mut stmts, &mut plan, w, &value)?;
    }
    drop(stmts);
    if w.journal.is_wal() {
        for schema in schema_names(w) {
            conn.query_row(
                &format!("PRAGMA {schema}.wal_checkpoint(RESTART)"),
                [],
                |_| Ok(()),
            )
            .map_err(sql_err("checkpointing the warm-up"))?;
        }
    }
    Ok(())
}

/// `PRAGMA integrity_check` on every database; `Ok` only if each answers `ok`.
pub fn integrity_check(paths: &[PathBuf], vfs: &str) -> Result<(), WorkloadError> {
    for p in paths {
        let conn = open(p, vfs)?;
        let answer: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(sql_err("integrity_check"))?;
        if answer != "ok" {
            return Err(WorkloadError::Integrity {
                path: p.clone(),
                answer,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(path: &Path, table: &str) -> i64 {
        let c = Connection::open(path).unwrap();
        c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn insert_adds_one_row_per_statement_across_tables_and_attached_dbs() {
        let dir = tempfile::tempdir().unwrap();
        let w = DbWorkload {
            transactions: 12,
            statements_per_txn: 2,
            tables: 2,
            attached_dbs: 1,
            ..Default::default()
        };
        prepare(dir.path(), &w, "unix").unwrap();
        let out = run(dir.path(), &w, "unix", &Unmeasured, None).unwrap();
        assert_eq!(out.latencies_ns.len(), 12);
        let paths = database_paths(dir.path(), &w, 0);
        // 24 statements over 4 (schema, table) targets.
        assert_eq!(
            count(&paths[0], "tblMyList") + count(&paths[0], "tblMyList1"),
            12
        );
        assert_eq!(
            count(&paths[1], "tblMyList") + count(&paths[1], "tblMyList1"),
            12
        );
        integrity_check(&paths, "unix").unwrap();
    }

    #[test]
    fn delete_removes_prefilled_rows_and_update_keeps_the_count() {
        for keys in [KeyOrder::Sequential, KeyOrder::Random] {
            let dir = tempfile::tempdir().unwrap();
            let w = DbWorkload {
                op: DbOp::Delete,
                transactions: 50,
                journal: JournalMode::Delete,
                keys,
                ..Default::default()
            };
            prepare(dir.path(), &w, "unix").unwrap();
            let before = count(&database_paths(dir.path(), &w, 0)[0], "tblMyList");
            assert!(
                before as u64 * 100 >= 40 * 1024,
                "pre-filled to at least 40 KiB"
            );
            run(dir.path(), &w, "unix", &Unmeasured, None).unwrap();
            assert_eq!(
                count(&database_paths(dir.path(), &w, 0)[0], "tblMyList"),
                before - 50
            );

            let dir = tempfile::tempdir().unwrap();
            let w = DbWorkload {
                op: DbOp::Update,
                transactions: 50,
                keys,
                ..Default::default()
            };
            prepare(dir.path(), &w, "unix").unwrap();
            run(dir.path(), &w, "unix", &Unmeasured, None).unwrap();
            assert_eq!(
                count(&database_paths(dir.path(), &w, 0)[0], "tblMyList"),
                before
            );
        }
    }

    #[test]
    fn threads_each_get_their_own_database_and_steady_state_warms_up() {
        let dir = tempfile::tempdir().unwrap();
        let w = DbWorkload {
            transactions: 20,
            threads: 2,
            start: StartState::Steady,
            journal: JournalMode::Off,
            ..Default::default()
        };
        prepare(dir.path(), &w, "unix").unwrap();
        let out = run(dir.path(), &w, "unix", &Unmeasured, None).unwrap();
        assert_eq!(out.latencies_ns.len(), 40);
        for t in 0..2 {
            // 20 warm-up inserts and 20 measured ones.
            assert_eq!(
                count(&database_paths(dir.path(), &w, t)[0], "tblMyList"),
                40
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let w = DbWorkload {
            transactions: 20,
            start: StartState::Steady,
            keys: KeyOrder::Random,
            ..Default::default()
        };
        prepare(dir.path(), &w, "unix").unwrap();
        run(dir.path(), &w, "unix", &Unmeasured, None).unwrap();
        assert_eq!(
            count(&database_paths(dir.path(), &w, 0)[0], "tblMyList"),
            40
        );
    }

    #[test]
    fn an_existing_database_is_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let w = DbWorkload {
            transactions: 1,
            page_size: 8192,
            ..Default::default()
        };
        prepare(dir.path(), &w, "unix").unwrap();
        let c = Connection::open(database_paths(dir.path(), &w, 0)[0].clone()).unwrap();
        let ps: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        assert_eq!(ps, 8192);
        let err = prepare(dir.path(), &w, "unix").unwrap_err().to_string();
        assert!(err.contains("already exists"), "{err}");
    }
}
