//! A restart of a rollback or WAL mode on a scratch filesystem: the power cut is a crash copy
//! of the loop images at the chosen sync, the restart mounts the copy and opens the database.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use joj_linux::{BlockTracer, ScratchError, ScratchFs, ScratchOptions};
use joj_trace::{FileRole, TraceRecord};
use joj_vfs::{FileEvent, FileObserver};
use joj_workload::paper::Driver;
use joj_workload::sqlite::sql_err;
use joj_workload::{DbWorkload, JournalMode, SqliteSetup, WorkloadError, db, lock};

use super::check::{first_access, modeled, recovered, workload};
use super::options::RestartOptions;
use super::report::{NotCounted, RestartRun};
use crate::error::ExperimentError;

/// Makes the crash copy at the first event `at` after it is set as the VFS's observer.
struct CrashCopyAt {
    fs: Arc<ScratchFs>,
    at: (FileEvent, FileRole),
    options: ScratchOptions,
    copy: Mutex<Option<Result<ScratchFs, ScratchError>>>,
}

impl FileObserver for CrashCopyAt {
    fn file_event(&self, event: FileEvent, _path: &Path, role: FileRole, _fd: Option<i32>) {
        if (event, role) != self.at {
            return;
        }
        let mut copy = lock(&self.copy);
        if copy.is_none() {
            *copy = Some(self.fs.crash_copy(&self.options));
        }
    }
}

fn trace(
    devs: &[String],
    buffer_kb: u32,
    f: impl FnOnce() -> Result<(), ExperimentError>,
) -> Result<Vec<TraceRecord>, ExperimentError> {
    let tracer = BlockTracer::start(devs, buffer_kb).map_err(joj_linux::Error::from)?;
    let done = f();
    let captured = tracer.stop().map_err(joj_linux::Error::from);
    done?;
    Ok(captured?.requests)
}

/// A rollback or WAL mode on a scratch filesystem, SQLite set up as `setup` says.
pub(super) fn fs_run(
    opts: &RestartOptions,
    mode: JournalMode,
    setup: &SqliteSetup,
    crash_in: u64,
) -> Result<RestartRun, ExperimentError> {
    joj_linux::install_cleanup_handler()?;
    joj_linux::leftovers::sweep_and_report();
    let w = workload(opts, mode);
    let wal = setup.journal.is_wal();
    let scratch = ScratchOptions {
        size_bytes: opts.image_size_bytes,
        ..ScratchOptions::default()
    };
    let fs = Arc::new(ScratchFs::create(opts.fs, scratch.clone()).map_err(joj_linux::Error::from)?);
    let dir = fs.mount_path().join("joj");
    std::fs::create_dir_all(&dir).map_err(|source| ExperimentError::Io {
        what: format!("creating {}", dir.display()),
        source,
    })?;
    let vfs = joj_vfs::register()?;
    vfs.set_sync_call(w.sync_call);
    db::prepare(&dir, &w, setup)?;
    let cut = Arc::new(CrashCopyAt {
        fs: fs.clone(),
        at: if wal {
            (FileEvent::AfterSync, FileRole::Wal)
        } else {
            (FileEvent::AfterSync, FileRole::Database)
        },
        options: scratch,
        copy: Mutex::new(None),
    });
    let ran = (|| {
        let conn = db::connect(&dir, &w, 0, setup)?;
        let mut driver = Driver::new(&opts.workload, opts.seed)?;
        for _ in 1..crash_in {
            driver.transaction(&conn)?;
        }
        vfs.set_observer(Some(cut.clone() as Arc<dyn FileObserver>));
        driver.transaction(&conn)?;
        Ok::<_, ExperimentError>(())
    })();
    // Also on the error paths: the observer holds the filesystem, which must be closed.
    vfs.set_observer(None);
    let copy = lock(&cut.copy).take();
    drop(cut);
    let closed = Arc::try_unwrap(fs)
        .map_err(|_| ExperimentError::ScratchStillShared)
        .and_then(|fs| fs.close().map_err(|e| joj_linux::Error::from(e).into()));
    ran?;
    closed?;
    let mut copy = copy
        .ok_or_else(|| ExperimentError::NoPowerCut {
            txn: crash_in,
            why: format!(
                "made no sync of its {}",
                if wal { "WAL" } else { "database" }
            ),
        })?
        .map_err(joj_linux::Error::from)?;
    let restarted = restart_fs(opts, &w, setup, crash_in, &mut copy);
    let closed = copy.close().map_err(joj_linux::Error::from);
    let run = restarted?;
    closed?;
    Ok(run)
}

fn restart_fs(
    opts: &RestartOptions,
    w: &DbWorkload,
    setup: &SqliteSetup,
    crash_in: u64,
    copy: &mut ScratchFs,
) -> Result<RestartRun, ExperimentError> {
    let wal = setup.journal.is_wal();
    let devs = copy.dev_ids();
    let buffer = opts.trace_buffer_kb;
    let mount = trace(&devs, buffer, || {
        copy.mount().map_err(|e| joj_linux::Error::from(e).into())
    })?;
    let dir = copy.mount_path().join("joj");
    let db_path = db::database_paths(&dir, w, 0).remove(0);
    let log_path = PathBuf::from(format!(
        "{}{}",
        db_path.display(),
        if wal { "-wal" } else { "-journal" }
    ));
    let log_bytes = std::fs::metadata(&log_path).map_or(0, |m| m.len());
    let mut conn = None;
    let first = trace(&devs, buffer, || {
        let c = db::connect(&dir, w, 0, setup)?;
        first_access(&c)?;
        conn = Some(c);
        Ok(())
    })?;
    let conn = conn.expect("set by the traced window");
    let mut wal_frames = None;
    let checkpoint = if wal {
        Some(trace(&devs, buffer, || {
            // (busy, frames in the log, frames checkpointed); TRUNCATE would answer for the
            // log after it was reset, so copy first, then truncate.
            let (busy, log, done): (i64, i64, i64) = conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .map_err(sql_err("checkpointing the recovered WAL"))?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(sql_err("truncating the recovered WAL"))?;
            if busy != 0 || log != done {
                return Err(WorkloadError::Mismatch {
                    what: "the checkpoint after the restart".into(),
                    expected: "every frame checkpointed".into(),
                    found: format!("busy {busy}, {done} of {log} frames"),
                }
                .into());
            }
            wal_frames = Some(log.max(0) as u64);
            Ok(())
        })?)
    } else {
        None
    };
    let acknowledged = crash_in - 1;
    let recovered = recovered(opts, &conn, &db_path, acknowledged)?;
    drop(conn);
    let (mount_ms, ..) = modeled(&mount, &opts.profile)?;
    let (first_ms, mut reads, mut writes, mut flushes) = modeled(&first, &opts.profile)?;
    let checkpoint_ms = match &checkpoint {
        Some(records) => {
            let (ms, r, wr, f) = modeled(records, &opts.profile)?;
            (reads, writes, flushes) = (reads + r, writes + wr, flushes + f);
            Some(ms)
        }
        None => None,
    };
    Ok(RestartRun {
        crash_in_txn: crash_in,
        acknowledged,
        recovered,
        log_bytes,
        wal_frames,
        xl2p_entries_applied: 0,
        restart_ms: first_ms + checkpoint_ms.unwrap_or(0.0),
        first_access_ms: first_ms,
        checkpoint_ms,
        xl2p_load_ms: None,
        logftl_recovery_ms: None,
        reads,
        writes,
        flushes,
        not_counted_ms: NotCounted {
            fs_mount_ms: Some(mount_ms),
            ..NotCounted::default()
        },
    })
}
