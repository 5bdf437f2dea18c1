//! A differential test of SQLite's contract over processes: a seeded schedule of steps for N
//! processes × M connections on one database — transactions (deferred, immediate, exclusive),
//! writes that spill the page cache, reads, journal-mode switches, `locking_mode`, busy
//! timeouts, checkpoints, closes and reopens, ATTACH, injected I/O errors (a file-size limit of
//! 0 for one statement), `sqlite3_shutdown` — run in lock step (one step at a time, each in its
//! worker process, the next only after it answered), so every outcome is a function of the
//! schedule. The same schedule runs on stock `unix` and on each VFS under test; every step's
//! result (rows, or the error's extended code) and the final database must be the same.
//!
//! Workers are this test binary run again (`worker_main`), driven over stdin/stdout with one
//! JSON line per request and per answer.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

pub mod shim;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Every VFS a schedule runs on; the first is the reference.
pub const CONFIGS: &[&str] = &[
    "unix",
    "waldio",
    "joj",
    "shim-unix",
    "shim-waldio",
    "shim-joj",
];

/// One step of a schedule.
#[derive(Debug, Clone)]
pub enum Step {
    /// Run `sql` on connection `c` of process `p` (opened first if closed).
    Exec {
        p: usize,
        c: usize,
        sql: String,
    },
    Close {
        p: usize,
        c: usize,
    },
    /// Process `p` runs with a file-size limit of 0 (every write fails) until `Lift`.
    Limit {
        p: usize,
    },
    Lift {
        p: usize,
    },
    /// Every connection of `p` closed, `sqlite3_shutdown()`, `sqlite3_initialize()`, the VFSs
    /// registered again.
    Shutdown {
        p: usize,
    },
}

/// The step's process.
fn process_of(s: &Step) -> usize {
    match s {
        Step::Exec { p, .. }
        | Step::Close { p, .. }
        | Step::Limit { p }
        | Step::Lift { p }
        | Step::Shutdown { p } => *p,
    }
}

/// A seeded schedule of `steps` steps for `procs` processes × `conns` connections.
pub fn schedule(seed: u64, procs: usize, conns: usize, steps: usize) -> Vec<Step> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = vec![Step::Exec {
        p: 0,
        c: 0,
        sql: "CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v BLOB)".into(),
    }];
    let mut key = 1u64;
    while out.len() < steps {
        let p = rng.random_range(0..procs);
        let c = rng.random_range(0..conns);
        let exec = |sql: String| Step::Exec { p, c, sql };
        let roll: u32 = rng.random_range(0..100);
        let step = match roll {
            0..14 => {
                key += 1;
                let n = rng.random_range(10..4000);
                exec(format!("INSERT INTO t VALUES({key}, zeroblob({n}))"))
            }
            14..20 => {
                let x = rng.random_range(0..13);
                let off = 100_000 * rng.random_range(1..50u64) + key;
                key += 1;
                exec(format!(
                    "INSERT OR IGNORE INTO t SELECT k + {off}, v FROM t WHERE k % 13 = {x} LIMIT 20"
                ))
            }
            20..28 => {
                let (m, x, d) = (
                    rng.random_range(2..9),
                    rng.random_range(0..2),
                    rng.random_range(1..900),
                );
                exec(format!(
                    "UPDATE t SET v = zeroblob(length(v) % 3000 + {d}) WHERE k % {m} = {x}"
                ))
            }
            28..33 => {
                let (m, x) = (rng.random_range(5..17), rng.random_range(0..3));
                exec(format!("DELETE FROM t WHERE k % {m} = {x}"))
            }
            33..45 => exec("SELECT count(*), sum(length(v)), max(k) FROM t".into()),
            45..52 => {
                exec(["BEGIN", "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE"][rng.random_range(0..3)].into())
            }
            52..60 => exec("COMMIT".into()),
            60..64 => exec("ROLLBACK".into()),
            64..69 => exec(format!(
                "PRAGMA journal_mode={}",
                ["WAL", "WAL", "DELETE", "TRUNCATE", "PERSIST"][rng.random_range(0..5)]
            )),
            69..72 => exec(format!(
                "PRAGMA locking_mode={}",
                ["EXCLUSIVE", "NORMAL", "NORMAL"][rng.random_range(0..3)]
            )),
            72..75 => exec(format!(
                "PRAGMA busy_timeout={}",
                [0, 0, 10][rng.random_range(0..3)]
            )),
            75..78 => exec(format!(
                "PRAGMA cache_size={}",
                [2, 5, 2000][rng.random_range(0..3)]
            )),
            78..83 => exec(format!(
                "PRAGMA wal_checkpoint({})",
                ["PASSIVE", "FULL", "RESTART", "TRUNCATE"][rng.random_range(0..4)]
            )),
            83..86 => exec(
                [
                    "ATTACH 'file:aux.db?vfs=VFS' AS aux",
                    "DETACH aux",
                    "CREATE TABLE IF NOT EXISTS aux.a(k INTEGER PRIMARY KEY, v BLOB)",
                    "INSERT INTO aux.a SELECT k, v FROM t WHERE k % 11 = 1 LIMIT 5",
                ][rng.random_range(0..4)]
                .into(),
            ),
            86..90 => {
                // One write under a file-size limit of 0: an I/O error that passes. The
                // connection first leaves any transaction it is in: inside one, stock SQLite
                // reports the error of a page it spills at the statement that spilled it, and
                // waldio, which writes a transaction's frames together (one direct write per
                // commit), at the COMMIT — the one difference docs/formats/waldio.md states.
                out.push(exec("ROLLBACK".into()));
                out.push(Step::Limit { p });
                key += 1;
                out.push(exec(format!("INSERT INTO t VALUES({key}, zeroblob(3000))")));
                Step::Lift { p }
            }
            90..96 => Step::Close { p, c },
            _ => Step::Shutdown { p },
        };
        out.push(step);
    }
    out
}

/// What starts a worker's answer line.
const ANSWER: &str = "answer: ";

/// One worker process.
struct Worker {
    child: Child,
    tx: ChildStdin,
    rx: BufReader<ChildStdout>,
}

impl Worker {
    fn spawn(exe: &Path, worker_test: &str, db: &Path, vfs: &str) -> Worker {
        let mut child = Command::new(exe)
            .args(["--exact", worker_test, "--nocapture", "--ignored"])
            .current_dir(db.parent().expect("the database's directory"))
            .env("JOJ_CONTRACT_WORKER", "1")
            .env("JOJ_CONTRACT_DB", db)
            .env("JOJ_CONTRACT_VFS", vfs)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawning a worker");
        let tx = child.stdin.take().unwrap();
        let mut rx = BufReader::new(child.stdout.take().unwrap());
        // The test harness prints a line before the test runs; the worker says "ready".
        let mut line = String::new();
        loop {
            line.clear();
            assert!(rx.read_line(&mut line).unwrap() > 0, "worker ended early");
            if line.trim() == "ready" {
                break;
            }
        }
        Worker { child, tx, rx }
    }

    fn call(&mut self, req: Value) -> Value {
        writeln!(self.tx, "{req}").unwrap();
        self.tx.flush().unwrap();
        let mut line = String::new();
        // The test harness may print lines of its own ("has been running for over 60 s").
        loop {
            line.clear();
            assert!(
                self.rx.read_line(&mut line).unwrap() > 0,
                "worker died on {req}"
            );
            if let Some(answer) = line.strip_prefix(ANSWER) {
                return serde_json::from_str(answer)
                    .unwrap_or_else(|e| panic!("bad answer {line:?}: {e}"));
            }
        }
    }

    fn exit(mut self) {
        self.call(json!({"op": "exit"}));
        let _ = self.child.wait();
    }
}

/// What a schedule gave on one VFS: each step's answer and the final database.
pub struct Run {
    pub answers: Vec<Value>,
    pub last: Value,
}

/// Run `steps` with `procs` workers on `vfs` in `dir`.
pub fn run(
    exe: &Path,
    worker_test: &str,
    dir: &Path,
    vfs: &str,
    procs: usize,
    steps: &[Step],
) -> Run {
    let db = dir.join("c.db");
    let mut workers: Vec<Worker> = (0..procs)
        .map(|_| Worker::spawn(exe, worker_test, &db, vfs))
        .collect();
    let answers = steps
        .iter()
        .map(|s| {
            let req = match s {
                Step::Exec { c, sql, .. } => json!({"op": "exec", "c": c, "sql": sql}),
                Step::Close { c, .. } => json!({"op": "close", "c": c}),
                Step::Limit { .. } => json!({"op": "limit", "on": true}),
                Step::Lift { .. } => json!({"op": "limit", "on": false}),
                Step::Shutdown { .. } => json!({"op": "shutdown"}),
            };
            workers[process_of(s)].call(req)
        })
        .collect();
    for w in workers {
        w.exit();
    }
    let mut checker = Worker::spawn(exe, worker_test, &db, vfs);
    let last = checker.call(json!({"op": "final"}));
    checker.exit();
    Run { answers, last }
}

/// The differential check: `seeds` schedules, each on every config, compared with the first.
pub fn check(exe: &Path, worker_test: &str, seeds: impl Iterator<Item = u64>, steps: usize) {
    let (procs, conns) = (3, 2);
    for seed in seeds {
        let sched = schedule(seed, procs, conns, steps);
        let mut reference: Option<Run> = None;
        for vfs in CONFIGS {
            let dir = tempfile::tempdir().unwrap();
            let got = run(exe, worker_test, dir.path(), vfs, procs, &sched);
            let Some(r) = &reference else {
                reference = Some(got);
                continue;
            };
            let first_diff = (0..sched.len()).find(|&i| r.answers[i] != got.answers[i]);
            if first_diff.is_none() && r.last == got.last {
                continue;
            }
            let upto = first_diff.unwrap_or(sched.len() - 1);
            let shown: Vec<String> = sched[..=upto]
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let theirs = if got.answers[i] == r.answers[i] {
                        String::new()
                    } else {
                        format!("  ({vfs}: {})", got.answers[i])
                    };
                    format!("  {i:4} {s:?} -> {}{theirs}", r.answers[i])
                })
                .collect();
            match first_diff {
                Some(i) => panic!(
                    "seed {seed} (rerun: JOJ_SEED={seed}): {vfs} differs from {} at step {i}: \
                     {:?}\n  {vfs}: {}\n  {}: {}\nschedule up to there (with {}'s answers):\n{}",
                    CONFIGS[0],
                    sched[i],
                    got.answers[i],
                    CONFIGS[0],
                    r.answers[i],
                    CONFIGS[0],
                    shown.join("\n")
                ),
                None => panic!(
                    "seed {seed} (rerun: JOJ_SEED={seed}): every step agreed, the final \
                     database differs on {vfs}:\n  {vfs}: {}\n  {}: {}",
                    got.last, CONFIGS[0], r.last
                ),
            }
        }
    }
}

/// The worker: registers the VFSs, then answers requests until `exit`.
pub fn worker_main() {
    let (Ok(db), Ok(vfs)) = (
        std::env::var("JOJ_CONTRACT_DB"),
        std::env::var("JOJ_CONTRACT_VFS"),
    ) else {
        return;
    };
    // SAFETY: ignoring SIGXFSZ, so that a write past the file-size limit fails with EFBIG
    // instead of killing the worker.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    register_all();
    let mut conns: Vec<Option<rusqlite::Connection>> = (0..8).map(|_| None).collect();
    println!("ready");
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let req: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let answer = match req["op"].as_str().unwrap() {
            "exec" => {
                let c = req["c"].as_u64().unwrap() as usize;
                let sql = req["sql"].as_str().unwrap().replace("VFS", &vfs);
                exec(&mut conns[c], &db, &vfs, &sql)
            }
            "close" => {
                conns[req["c"].as_u64().unwrap() as usize] = None;
                json!({"ok": true})
            }
            "limit" => {
                let on = req["on"].as_bool().unwrap();
                let lim = if on { 0 } else { libc::RLIM_INFINITY };
                let r = libc::rlimit {
                    rlim_cur: lim,
                    rlim_max: libc::RLIM_INFINITY,
                };
                // SAFETY: a valid rlimit for this process.
                let rc = unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &r) };
                json!({"ok": rc == 0})
            }
            "shutdown" => {
                conns.iter_mut().for_each(|c| *c = None);
                // SAFETY: every connection of this process is closed.
                let rc = unsafe { rusqlite::ffi::sqlite3_shutdown() };
                // SAFETY: as above.
                let rc2 = unsafe { rusqlite::ffi::sqlite3_initialize() };
                register_all();
                json!({"ok": rc == 0 && rc2 == 0})
            }
            "final" => final_state(&db, &vfs),
            "exit" => {
                conns.iter_mut().for_each(|c| *c = None);
                println!("{ANSWER}{}", json!({"ok": true}));
                return;
            }
            other => panic!("unknown request {other}"),
        };
        println!("{ANSWER}{answer}");
    }
}

fn register_all() {
    joj_vfs::register().unwrap();
    joj_waldio::register().unwrap();
    for base in ["unix", "waldio", "joj"] {
        shim::register_over(base);
    }
}

fn open(db: &str, vfs: &str) -> rusqlite::Result<rusqlite::Connection> {
    use rusqlite::OpenFlags as F;
    let c = rusqlite::Connection::open_with_flags(
        format!("file:{db}?vfs={vfs}"),
        F::SQLITE_OPEN_READ_WRITE | F::SQLITE_OPEN_CREATE | F::SQLITE_OPEN_URI,
    )?;
    // Every config's databases get waldio's reserve, so that page layouts (and with them the
    // WAL's frame counts) are the same on every VFS.
    reserve(&c, "main");
    // SQLite's default: no busy handler until the schedule sets one (rusqlite sets 5 s).
    c.busy_timeout(std::time::Duration::ZERO)?;
    Ok(c)
}

fn reserve(c: &rusqlite::Connection, schema: &str) {
    let name = std::ffi::CString::new(schema).unwrap();
    let mut n: std::ffi::c_int = 24;
    // SAFETY: a live connection; RESERVE_BYTES takes an int in/out pointer.
    unsafe {
        rusqlite::ffi::sqlite3_file_control(
            c.handle(),
            name.as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_RESERVE_BYTES,
            &mut n as *mut std::ffi::c_int as *mut std::ffi::c_void,
        )
    };
}

fn error_answer(e: &rusqlite::Error) -> Value {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => json!({"ok": false, "code": f.extended_code}),
        other => json!({"ok": false, "code": -1, "other": other.to_string()}),
    }
}

fn exec(slot: &mut Option<rusqlite::Connection>, db: &str, vfs: &str, sql: &str) -> Value {
    if slot.is_none() {
        match open(db, vfs) {
            Ok(c) => *slot = Some(c),
            Err(e) => return error_answer(&e),
        }
    }
    let c = slot.as_ref().unwrap();
    let run = || -> rusqlite::Result<Vec<Vec<String>>> {
        let mut st = c.prepare(sql)?;
        let n = st.column_count();
        let mut rows = st.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(
                (0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                    .collect(),
            );
        }
        Ok(out)
    };
    match run() {
        Ok(rows) => {
            if sql.starts_with("ATTACH") {
                reserve(c, "aux");
            }
            json!({"ok": true, "rows": rows})
        }
        Err(e) => error_answer(&e),
    }
}

/// The database as one process sees it afterwards: the rows, the attached database's rows,
/// and both integrity checks.
fn final_state(db: &str, vfs: &str) -> Value {
    let c = match open(db, vfs) {
        Ok(c) => c,
        Err(e) => return error_answer(&e),
    };
    let q = |sql: &str| -> Value {
        match c.query_row(sql, [], |r| {
            Ok(format!(
                "{:?} {:?} {:?}",
                r.get_ref(0)?,
                r.get_ref(1)?,
                r.get_ref(2)?
            ))
        }) {
            Ok(s) => json!(s),
            Err(e) => error_answer(&e),
        }
    };
    let main = q("SELECT count(*), sum(k), sum(length(v)) FROM t");
    let integrity =
        q("SELECT (SELECT group_concat(integrity_check) FROM pragma_integrity_check), 0, 0");
    let aux_path = PathBuf::from(db).with_file_name("aux.db");
    let aux = if aux_path.exists() {
        let _ = c.execute(
            &format!("ATTACH 'file:{}?vfs={vfs}' AS aux", aux_path.display()),
            [],
        );
        q("SELECT count(*), sum(k), sum(length(v)) FROM aux.a")
    } else {
        json!(null)
    };
    json!({"main": main, "integrity": integrity, "aux": aux})
}
