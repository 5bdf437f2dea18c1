//! `kill -9` of a process in the middle of a SQLite transaction on the `xftl` VFS, while the
//! device keeps running (X-FTL's "process killed" case): the transaction leaves no trace.
//!
//! The device lives in this process and is served over a Unix socket
//! (`joj_atomic::remote`); a child process — this test binary, running the ignored test
//! [`child_writes_until_killed`] — mounts the file layer through a `RemoteDevice`, commits
//! SQLite transactions and prints `acked <i>` after each `COMMIT` returns. The server kills the
//! child with SIGKILL after the `w`-th `write_txn` of its `k`-th transaction, i.e. between
//! SQLite's `BEGIN_ATOMIC_WRITE` and `COMMIT_ATOMIC_WRITE` with some of the transaction's pages
//! on the device, then sees the connection close and aborts the transaction. Afterwards: no
//! active transaction, the FTL's invariants hold, `PRAGMA integrity_check` is ok, the database
//! is exactly the state after the acknowledged commits (an in-memory SQLite running the same
//! transactions is the reference), and the next writer of the same pages commits. The device
//! keeps running from round to round.
//!
//! The canary: a server that does not abort on disconnect must be caught — the dead
//! transaction stays active and the next writer of its pages is refused (`TxnConflict`).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::kill::{self, Kill, Run};

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use joj_atomic::{FlashFs, RemoteDevice, XDevice, XftlVfs};
use joj_device::{DeviceError, FtlError, Lpn, Profile, TransactionalDevice};
use rusqlite::{Connection, OpenFlags};

const ROWS: i64 = 1200;
/// Rows each transaction updates (spread over as many pages, plus page 1's change counter).
const UPDATES: i64 = 6;
const DB: &str = "kill9.db";
const CHILD: &str = "child_writes_until_killed";
const SOCKET_ENV: &str = "JOJ_KILL9_SOCKET";
const FIRST_ENV: &str = "JOJ_KILL9_FIRST";
/// Transactions a child runs before it gives up waiting to be killed.
const CHILD_TXNS: u64 = 5000;
/// SIGKILL's signal number (9 on every Unix).
const SIGKILL: i32 = 9;
/// Transactions the reference model covers (more than all rounds commit).
const MODEL_TXNS: u64 = 64;

fn profile() -> Profile {
    common::profile(64)
}

fn open(vfs: &str) -> rusqlite::Result<Connection> {
    let c = Connection::open_with_flags_and_vfs(
        DB,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        vfs,
    )?;
    c.execute_batch("PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;")?;
    Ok(c)
}

fn schema(c: &Connection) -> rusqlite::Result<()> {
    c.execute_batch(
        "PRAGMA page_size=8192; PRAGMA journal_mode=DELETE;
         CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER, pad TEXT);",
    )?;
    let tx = c.unchecked_transaction()?;
    for k in 1..=ROWS {
        // Values stay 4-byte integers, so updates never change a record's size.
        tx.execute(
            "INSERT INTO t VALUES (?1, 10000000 + ?1, ?2)",
            rusqlite::params![k, "p".repeat(200)],
        )?;
    }
    tx.commit()
}

/// Transaction `i`: its `UPDATES` rows, 197 rows (several pages) apart, get values made from
/// `i`.
fn apply(c: &Connection, i: u64) -> rusqlite::Result<()> {
    let i = i as i64;
    for j in 0..UPDATES {
        let k = 1 + (i * 53 + j * 197) % ROWS;
        c.execute(
            "UPDATE t SET v = ?2 WHERE k = ?1",
            [k, 20_000_000 + i * 10 + j],
        )?;
    }
    Ok(())
}

fn txn(c: &Connection, i: u64) -> rusqlite::Result<()> {
    c.execute_batch("BEGIN")?;
    apply(c, i)?;
    c.execute_batch("COMMIT")
}

fn digest(c: &Connection) -> rusqlite::Result<(i64, i64)> {
    c.query_row(
        "SELECT count(*), sum((k * 1000003 + v + length(pad)) % 1000000007) FROM t",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// `states[n]`: the digest after transactions `0..n`, from SQLite's in-memory database.
fn model() -> Vec<(i64, i64)> {
    let c = Connection::open_in_memory().unwrap();
    schema(&c).unwrap();
    let mut states = vec![digest(&c).unwrap()];
    for i in 0..MODEL_TXNS {
        txn(&c, i).unwrap();
        states.push(digest(&c).unwrap());
    }
    states
}

/// The child process: transactions `first..` through the remote device until it is killed.
#[test]
#[ignore = "the writer process of sqlite_txn_killed_by_sigkill_leaves_no_trace, which starts it"]
fn child_writes_until_killed() {
    let Ok(socket) = std::env::var(SOCKET_ENV) else {
        eprintln!("{CHILD} only runs as the child of sqlite_txn_killed_by_sigkill_leaves_no_trace");
        return;
    };
    let first: u64 = std::env::var(FIRST_ENV).unwrap().parse().unwrap();
    let dev = RemoteDevice::connect(&socket).unwrap();
    let vfs = joj_atomic::register_with::<RemoteDevice>("xftl-kill9-remote").unwrap();
    vfs.attach(FlashFs::mount(dev).unwrap()).unwrap();
    let c = open(vfs.name()).unwrap();
    let mut out = std::io::stdout();
    for i in first..first + CHILD_TXNS {
        txn(&c, i).unwrap();
        writeln!(out, "acked {i}").unwrap();
        out.flush().unwrap();
    }
    panic!("{CHILD_TXNS} transactions committed and nobody killed this process");
}

/// Serve `dev` to a child running transactions `first..`, killed at `kill`.
fn run_child(
    dev: XDevice,
    socket: &Path,
    first: u64,
    kill: Kill,
    abort_on_disconnect: bool,
) -> (XDevice, Run) {
    let child = kill::Child {
        test: CHILD,
        socket_env: SOCKET_ENV,
        first_env: FIRST_ENV,
        first,
        abort_on_disconnect,
    };
    kill::run_child(dev, socket, &child, kill)
}

/// What the checks after a round found wrong.
enum Finding {
    ActiveTxns(usize),
    Integrity(String),
    State {
        expected: (i64, i64),
        found: (i64, i64),
    },
    NextWriterRefused(String),
    Sql(String),
}

impl std::fmt::Debug for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::ActiveTxns(n) => write!(f, "{n} transactions still active"),
            Finding::Integrity(s) => write!(f, "integrity_check: {s}"),
            Finding::State { expected, found } => {
                write!(f, "database digest {found:?}, expected {expected:?}")
            }
            Finding::NextWriterRefused(e) => write!(f, "the next writer's commit failed: {e}"),
            Finding::Sql(e) => write!(f, "SQL error while checking: {e}"),
        }
    }
}

/// Check the device after a child died, with `expected` the digest after the acknowledged
/// commits; then commit transaction `next` locally (the next writer of the dead transaction's
/// pages) and check the digest `after`. Returns the device and what was wrong.
fn check(
    vfs: &XftlVfs,
    dev: XDevice,
    expected: (i64, i64),
    next: u64,
    after: (i64, i64),
) -> (XDevice, Vec<Finding>) {
    let mut found = Vec::new();
    let active = dev.ftl().active_transactions();
    if active != 0 {
        found.push(Finding::ActiveTxns(active));
    }
    dev.ftl().check_invariants();
    vfs.attach(FlashFs::mount(dev).unwrap()).unwrap();
    let r = (|| {
        let c = open(vfs.name())?;
        let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        if ok != "ok" {
            found.push(Finding::Integrity(ok));
        }
        let d = digest(&c)?;
        if d != expected {
            found.push(Finding::State { expected, found: d });
        }
        if let Err(e) = txn(&c, next) {
            found.push(Finding::NextWriterRefused(e.to_string()));
            let _ = c.execute_batch("ROLLBACK");
            return Ok(());
        }
        let d = digest(&c)?;
        if d != after {
            found.push(Finding::State {
                expected: after,
                found: d,
            });
        }
        Ok::<_, rusqlite::Error>(())
    })();
    if let Err(e) = r {
        found.push(Finding::Sql(e.to_string()));
    }
    let dev = vfs.detach().unwrap().into_device();
    dev.ftl().check_invariants();
    (dev, found)
}

/// A fresh device with the database: `ROWS` rows, cleanly committed.
fn prepared(vfs: &XftlVfs) -> XDevice {
    let fs = common::formatted(&profile());
    vfs.attach(fs).unwrap();
    schema(&open(vfs.name()).unwrap()).unwrap();
    vfs.detach().unwrap().into_device()
}

fn describe(run: &Run) -> String {
    format!(
        "child {}, acked {:?}, server {:?}, child's stderr:\n{}",
        run.status, run.acked, run.report, run.stderr
    )
}

#[test]
fn sqlite_txn_killed_by_sigkill_leaves_no_trace() {
    let vfs = joj_atomic::register("xftl-kill9").unwrap();
    let states = model();
    let dir = tempfile::tempdir().unwrap();
    let mut dev = prepared(&vfs);
    // Transactions committed so far, the child's and the local next writer's.
    let mut committed = 0u64;
    let kills = [
        Kill { txn: 1, write: 1 },
        Kill { txn: 3, write: 3 },
        Kill { txn: 5, write: 2 },
        Kill { txn: 2, write: 5 },
        Kill { txn: 7, write: 4 },
    ];
    for (round, &kill) in kills.iter().enumerate() {
        let socket = dir.path().join(format!("round{round}.sock"));
        let (d, run) = run_child(dev, &socket, committed, kill, true);
        let what = describe(&run);
        assert!(
            run.killed,
            "round {round}: kill point {kill:?} never reached: {what}"
        );
        assert_eq!(
            run.status.signal(),
            Some(SIGKILL),
            "round {round}: the child did not die of SIGKILL: {what}"
        );
        // The child was inside its kill.txn-th transaction: exactly the ones before it were
        // acknowledged, in order.
        let acked = kill.txn - 1;
        assert_eq!(
            run.acked,
            (committed..committed + acked).collect::<Vec<_>>(),
            "round {round}: {what}"
        );
        assert_eq!(run.report.txns_begun, kill.txn, "round {round}: {what}");
        assert_eq!(run.report.txns_committed, acked, "round {round}: {what}");
        assert_eq!(
            (run.report.aborted_on_disconnect, run.report.left_active),
            (1, 0),
            "round {round}: the dead transaction was not aborted: {what}"
        );
        committed += acked;
        let next = committed;
        let (d, found) = check(
            &vfs,
            d,
            states[committed as usize],
            next,
            states[next as usize + 1],
        );
        assert!(
            found.is_empty(),
            "round {round} (kill {kill:?}, {committed} commits acknowledged): {found:?}; {what}"
        );
        committed += 1;
        eprintln!(
            "round {round}: killed in child transaction {} after write {}, {acked} acked, \
             {} commands served, end {:?}",
            kill.txn, kill.write, run.report.commands, run.report.end
        );
        dev = d;
    }

    // Canary: the server forgets to abort the dead transaction.
    let kill = Kill { txn: 2, write: 3 };
    let socket = dir.path().join("canary.sock");
    let (d, run) = run_child(dev, &socket, committed, kill, false);
    let what = describe(&run);
    assert!(
        run.killed && run.status.signal() == Some(SIGKILL),
        "canary: {what}"
    );
    assert_eq!(run.report.left_active, 1, "canary: {what}");
    committed += kill.txn - 1;
    let mut d = d;
    // The dead transaction still holds its pages: a new transaction's write to one is refused.
    let held =
        (0..d.ftl().logical_pages()).find_map(|l| d.ftl().holder(Lpn(l as u32)).map(|t| (l, t)));
    let (lpn, holder) = held.expect("canary: the dead transaction holds no page");
    let page = joj_device::BlockDevice::geometry(&d).optimal_write_bytes as usize;
    let t = d.begin_txn().unwrap();
    let r = d.write_txn(t, lpn * page as u64, &vec![0u8; page]);
    assert!(
        matches!(
            r,
            Err(DeviceError::Ftl(FtlError::TxnConflict { holder: h, .. })) if h == holder.0
        ),
        "canary: a write to page {lpn} held by dead transaction {holder:?} gave {r:?}"
    );
    d.abort_txn(t).unwrap();
    // And the checks every round runs catch it.
    let (_, found) = check(
        &vfs,
        d,
        states[committed as usize],
        committed,
        states[committed as usize + 1],
    );
    eprintln!("canary: {found:?}");
    assert!(
        found.iter().any(|f| matches!(f, Finding::ActiveTxns(1))),
        "canary not caught (active transactions): {found:?}"
    );
    assert!(
        found
            .iter()
            .any(|f| matches!(f, Finding::NextWriterRefused(_))),
        "canary not caught (next writer): {found:?}"
    );
}
