//! The X-FTL paper's workloads ([`crate::paper`]) on a database file, for the runner: the same
//! three phases as Mobibench's on one connection. *Prepare* loads the data through the run's
//! VFS and page size; *set up* connects with the run's journal mode and synchronous level and,
//! for a steady-state run, warms up with the same driver (the measured transactions continue
//! its sequence) and checkpoints; the *window* covers exactly the transactions. After the
//! window [`crate::paper::check`] verifies the database, and for the synthetic workload its
//! summary must equal the driver's prediction.

use super::output::{DbRunOutput, PaperOutcome};
use super::schema::{connect, database_paths};
use crate::config::bounds::latency_samples;
use crate::config::{DbWorkload, StartState};
use crate::error::WorkloadError;
use crate::made::Made;
use crate::paper::{self, Driver, KindCounts, PaperWorkload};
use crate::sqlite::{self, SqliteSetup};
use crate::thread_usage::ThreadUsage;
use crate::window::Window;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub(super) fn prepare(
    dir: &Path,
    w: &DbWorkload,
    p: &PaperWorkload,
    setup: &SqliteSetup,
    made: Option<&mut Made>,
) -> Result<(), WorkloadError> {
    let conn = sqlite::create_made(&database_paths(dir, w, 0)[0], setup, w.page_size, made)?;
    paper::prepare(&conn, p, w.seed)
}

pub(super) fn run(
    dir: &Path,
    w: &DbWorkload,
    p: &PaperWorkload,
    setup: &SqliteSetup,
    window: &dyn Window,
    progress: Option<Arc<AtomicU64>>,
) -> Result<DbRunOutput, WorkloadError> {
    let conn = connect(dir, w, 0, setup)?;
    let mut driver = Driver::new(p, w.seed)?;
    if w.start == StartState::Steady {
        // As Mobibench's warm-up: a quarter more transactions than measured, automatic
        // checkpoints off, then the WAL restarted (`DbWorkload::warm_up_transactions`).
        let autocheckpoint = sqlite::pause_autocheckpoint(&conn, setup)?;
        for _ in 0..w.warm_up_transactions() {
            driver.transaction(&conn)?;
        }
        sqlite::restart_wal(&conn, &["main".to_string()], setup, autocheckpoint)?;
    }
    let mut counts = KindCounts::default();
    let mut latencies = latency_samples(w.transactions);
    window.begin()?;
    let t0 = Instant::now();
    let usage_before = ThreadUsage::now()?;
    let looped = (|| {
        for i in 0..w.transactions {
            let t = Instant::now();
            let kind = driver.transaction(&conn)?;
            latencies.push(t.elapsed().as_nanos() as u64);
            counts.add(kind);
            window.after_transaction()?;
            if let Some(p) = &progress {
                p.fetch_add(1, Ordering::Relaxed);
            }
            if w.interval_ms > 0 && i + 1 < w.transactions {
                std::thread::sleep(Duration::from_millis(w.interval_ms));
            }
        }
        Ok::<_, WorkloadError>(())
    })();
    let elapsed = t0.elapsed();
    let usage = ThreadUsage::now().map(|u| u.since(&usage_before));
    let ended = window.end();
    looped?;
    ended?;
    let usage = usage?;

    // After the window: what the database holds now.
    let summary = paper::check(&conn, p)?;
    match driver.expected() {
        Some(expected) if expected != summary => {
            return Err(WorkloadError::Mismatch {
                what: format!(
                    "{} database after {} transactions",
                    p.name(),
                    driver.committed()
                ),
                expected: expected.to_string(),
                found: summary.to_string(),
            });
        }
        _ => {}
    }
    // Close: the last WAL connection checkpoints, outside the window.
    drop(conn);
    let new_orders = matches!(p, PaperWorkload::Tpcc { .. }).then_some(counts.new_orders);
    Ok(DbRunOutput {
        latencies_ns: latencies,
        elapsed,
        databases: database_paths(dir, w, 0),
        paper: Some(PaperOutcome {
            transactions_by_kind: counts.by_kind,
            new_orders,
            tpmc: new_orders.map(|n| n as f64 * 60.0 / elapsed.as_secs_f64().max(1e-9)),
            summary,
        }),
        threads: vec![usage],
    })
}
