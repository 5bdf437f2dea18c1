//! Mobibench's SQLite workloads: one connection and database file per thread, every statement
//! inside an explicit transaction, tables pre-filled for update, delete and select.
//!
//! *Prepare* creates the databases, schema and pre-fill, then closes them — nothing of it is
//! measured. Each thread then *sets up* (opens its connection, sets the pragmas, and for a
//! steady-state run performs a warm-up of the same transactions followed by a WAL checkpoint)
//! and waits; the *measured window*, which the caller brackets through [`Window`], covers
//! exactly the transactions.

use super::keys::KeyPlan;
use super::output::DbRunOutput;
use super::schema::{
    Value, connect, database_paths, record, rows_needed, schema_names, table_name,
};
use crate::config::bounds::latency_samples;
use crate::config::{DbOp, DbWorkload, StartState};
use crate::error::WorkloadError;
use crate::made::Made;
use crate::sqlite::{self, SqliteSetup, sql_err};
use crate::thread_usage::ThreadUsage;
use crate::window::Window;
use rusqlite::Connection;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Create every database, its tables and the pre-fill; close them. Not measured.
pub(super) fn prepare(
    dir: &Path,
    w: &DbWorkload,
    setup: &SqliteSetup,
    mut made: Option<&mut Made>,
) -> Result<(), WorkloadError> {
    let rows = rows_needed(w);
    let value = record(w.record_bytes, Value::Insert);
    for thread in 0..w.threads {
        for path in database_paths(dir, w, thread) {
            let conn = sqlite::create_made(&path, setup, w.page_size, made.as_deref_mut())?;
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
    // Mobibench: one statement on every table of every database in each transaction.
    let rounds = u64::from(w.statements_per_txn);
    let targets = stmts.stmts.len();
    for target in (0..rounds).flat_map(|_| 0..targets) {
        let id = plan.next(target);
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

/// The points every thread and the main thread meet at: all set up, go, all done, window
/// ended (only then do the threads close their connections: closing the last connection of a
/// WAL database checkpoints it, which belongs after the window).
struct Barriers {
    ready: Barrier,
    go: Barrier,
    done: Barrier,
    ended: Barrier,
}

/// The measured transactions of one thread: its latencies in nanoseconds and what the thread
/// cost the machine over them.
fn measured(
    conn: &Connection,
    w: &DbWorkload,
    thread: u32,
    window: &dyn Window,
    progress: Option<&AtomicU64>,
) -> Result<(Vec<u64>, ThreadUsage), WorkloadError> {
    let mut stmts = statements(conn, w)?;
    // After a warm-up the keys continue where it stopped.
    let start_at = w.warm_up_transactions() * u64::from(w.statements_per_txn);
    let mut plan = KeyPlan::new(w, thread, start_at);
    let value = record(
        w.record_bytes,
        if w.op == DbOp::Update {
            Value::Update
        } else {
            Value::Insert
        },
    );
    let mut latencies = latency_samples(w.transactions);
    let usage_before = ThreadUsage::now()?;
    for i in 0..w.transactions {
        let t0 = Instant::now();
        run_transaction(conn, &mut stmts, &mut plan, w, &value)?;
        latencies.push(t0.elapsed().as_nanos() as u64);
        window.after_transaction()?;
        if let Some(p) = progress {
            p.fetch_add(1, Ordering::Relaxed);
        }
        if w.interval_ms > 0 && i + 1 < w.transactions {
            std::thread::sleep(Duration::from_millis(w.interval_ms));
        }
    }
    Ok((latencies, ThreadUsage::now()?.since(&usage_before)))
}

/// One thread: set up (connect, warm up), wait for the window, run, wait for the others and
/// the window's end. Every thread passes every barrier even after an error, so the main
/// thread never waits forever; the error is returned after `ended`.
fn thread_main(
    dir: &Path,
    w: &DbWorkload,
    setup: &SqliteSetup,
    thread: u32,
    barriers: &Barriers,
    window: &dyn Window,
    progress: Option<&AtomicU64>,
) -> Result<(Vec<u64>, ThreadUsage), WorkloadError> {
    let conn = crate::affinity::keep_to_one_cpu(thread)
        .map_err(|source| WorkloadError::Io {
            what: format!("keeping thread {thread} to one CPU (sched_setaffinity)"),
            source,
        })
        .and_then(|_| connect(dir, w, thread, setup))
        .and_then(|conn| {
            if w.start == StartState::Steady {
                warm_up(&conn, w, setup, thread)?;
            }
            Ok(conn)
        });
    barriers.ready.wait();
    barriers.go.wait();
    let result =
        conn.and_then(|conn| measured(&conn, w, thread, window, progress).map(|l| (l, conn)));
    barriers.done.wait();
    barriers.ended.wait();
    result.map(|(measured, conn)| {
        drop(conn);
        measured
    })
}

/// Run the workload on databases made by [`prepare`], measuring only inside `window`.
pub(super) fn run(
    dir: &Path,
    w: &DbWorkload,
    setup: &SqliteSetup,
    window: &dyn Window,
    progress: Option<Arc<AtomicU64>>,
) -> Result<DbRunOutput, WorkloadError> {
    let parties = w.threads as usize + 1;
    let barriers = Barriers {
        ready: Barrier::new(parties),
        go: Barrier::new(parties),
        done: Barrier::new(parties),
        ended: Barrier::new(parties),
    };
    let progress = progress.as_deref();
    let (threads, elapsed, window_result) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..w.threads)
            .map(|thread| {
                let barriers = &barriers;
                s.spawn(move || thread_main(dir, w, setup, thread, barriers, window, progress))
            })
            .collect();
        barriers.ready.wait();
        let begun = window.begin();
        let t0 = Instant::now();
        barriers.go.wait();
        barriers.done.wait();
        let elapsed = t0.elapsed();
        let ended = if begun.is_ok() { window.end() } else { Ok(()) };
        barriers.ended.wait();
        let threads: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(WorkloadError::ThreadPanicked)))
            .collect();
        (threads, elapsed, begun.and(ended))
    });
    let mut latencies = latency_samples(w.transactions * u64::from(w.threads));
    let mut usage = Vec::with_capacity(threads.len());
    for t in threads {
        let (l, u) = t?;
        latencies.extend(l);
        usage.push(u);
    }
    window_result?;
    let databases = (0..w.threads)
        .flat_map(|t| database_paths(dir, w, t))
        .collect();
    Ok(DbRunOutput {
        latencies_ns: latencies,
        elapsed,
        databases,
        paper: None,
        threads: usage,
    })
}

/// Steady state: before the window, the same kind of transactions (a quarter more, see
/// [`DbWorkload::warm_up_transactions`]) with SQLite's automatic checkpoints off, then a
/// checkpoint that restarts the WAL: the measured commits overwrite a WAL file that is already
/// larger than they need, as a long-lived database's WAL is. Updates write values of their own
/// (see [`Value::WarmUp`]), so that both they and the measured updates change every row.
fn warm_up(
    conn: &Connection,
    w: &DbWorkload,
    setup: &SqliteSetup,
    thread: u32,
) -> Result<(), WorkloadError> {
    let mut stmts = statements(conn, w)?;
    let mut plan = KeyPlan::new(w, thread, 0);
    let values = [false, true].map(|odd| {
        record(
            w.record_bytes,
            if w.op == DbOp::Update {
                Value::WarmUp { odd }
            } else {
                Value::Insert
            },
        )
    });
    let autocheckpoint = sqlite::pause_autocheckpoint(conn, setup)?;
    for i in 0..w.warm_up_transactions() {
        let value = &values[(i % 2) as usize];
        run_transaction(conn, &mut stmts, &mut plan, w, value)?;
    }
    drop(stmts);
    sqlite::restart_wal(conn, &schema_names(w), setup, autocheckpoint)
}
