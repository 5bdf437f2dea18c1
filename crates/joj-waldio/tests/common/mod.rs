//! Crash-state reconstruction for power-loss tests (SQLite's `test6.c` idea, in Rust).
//!
//! A [`Recorder`] installed as a waldio VFS's tap sees every physical write, sync and truncate
//! of the database and the WAL in order; the test adds an `Ack` marker after each commit
//! returns. [`Recorder::crash_state`] rebuilds the files as power loss at op `k` could leave
//! them. Fault model (docs/formats/waldio.md): a write is pending until made durable — a
//! buffered write by a sync of its file, a direct write by any sync (the device flush behind
//! every `fdatasync`), an `RWF_DSYNC` write at once; at the crash each pending write,
//! independently and in order, survives, vanishes or tears (a random subset of its 512-byte
//! sectors). The `-shm` is not kept: it lives in memory and SQLite rebuilds it.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
#![allow(dead_code)]

use joj_waldio::Tap;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Clone)]
pub enum Op {
    Write {
        file: String,
        off: u64,
        data: Vec<u8>,
        durable: bool,
        direct: bool,
    },
    Sync {
        file: String,
    },
    Truncate {
        file: String,
        size: u64,
    },
    /// The file was deleted (taken as durable at once: only the journal of the switch to WAL
    /// mode is deleted in these tests, and SQLite syncs before deleting it).
    Delete {
        file: String,
    },
    /// `n` commits had been acknowledged when this marker was logged.
    Ack(u64),
}

#[derive(Default)]
pub struct Recorder {
    pub ops: Mutex<Vec<Op>>,
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Tap for Recorder {
    fn write(&self, path: &Path, off: u64, data: &[u8], durable: bool) {
        let file = name_of(path);
        let direct = file.ends_with("-wal");
        self.ops.lock().unwrap().push(Op::Write {
            file,
            off,
            data: data.to_vec(),
            durable,
            direct,
        });
    }
    fn sync(&self, path: &Path) {
        self.ops.lock().unwrap().push(Op::Sync {
            file: name_of(path),
        });
    }
    fn delete(&self, path: &Path) {
        self.ops.lock().unwrap().push(Op::Delete {
            file: name_of(path),
        });
    }
    fn truncate(&self, path: &Path, size: u64) {
        self.ops.lock().unwrap().push(Op::Truncate {
            file: name_of(path),
            size,
        });
    }
}

impl Recorder {
    pub fn ack(&self, n: u64) {
        self.ops.lock().unwrap().push(Op::Ack(n));
    }

    pub fn len(&self) -> usize {
        self.ops.lock().unwrap().len()
    }

    /// Commits acknowledged before op `k`.
    pub fn acked_before(&self, k: usize) -> u64 {
        let ops = self.ops.lock().unwrap();
        ops[..k]
            .iter()
            .rev()
            .find_map(|o| match o {
                Op::Ack(n) => Some(*n),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// Write into `dir` the files as power loss just before op `k` could leave them.
    pub fn crash_state(&self, k: usize, seed: u64, dir: &Path) -> Vec<PathBuf> {
        let ops = self.ops.lock().unwrap();
        let mut durable: HashMap<String, Vec<u8>> = HashMap::new();
        let mut pending: Vec<Op> = Vec::new();
        for op in &ops[..k] {
            match op {
                Op::Write {
                    file,
                    off,
                    data,
                    durable: true,
                    ..
                } => apply(durable.entry(file.clone()).or_default(), *off, data, None),
                Op::Write { file, .. } | Op::Truncate { file, .. } => {
                    durable.entry(file.clone()).or_default();
                    pending.push(op.clone());
                }
                Op::Sync { file } => {
                    // The file's own writes, and every direct write (the device cache flush).
                    let mut rest = Vec::new();
                    for p in pending.drain(..) {
                        let hit = match &p {
                            Op::Write {
                                file: f, direct, ..
                            } => f == file || *direct,
                            Op::Truncate { file: f, .. } => f == file,
                            _ => false,
                        };
                        if hit {
                            apply_op(&mut durable, &p, None);
                        } else {
                            rest.push(p);
                        }
                    }
                    pending = rest;
                }
                Op::Delete { file } => {
                    durable.remove(file);
                    pending.retain(|p| !matches!(p, Op::Write { file: f, .. } | Op::Truncate { file: f, .. } if f == file));
                }
                Op::Ack(_) => {}
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for p in &pending {
            match rng.random_range(0..3u32) {
                0 => apply_op(&mut durable, p, None),
                1 => {}
                _ => apply_op(&mut durable, p, Some(&mut rng)),
            }
        }
        let mut out = Vec::new();
        for (name, bytes) in durable {
            let path = dir.join(&name);
            std::fs::write(&path, &bytes).unwrap();
            out.push(path);
        }
        out
    }
}

fn apply_op(files: &mut HashMap<String, Vec<u8>>, op: &Op, tear: Option<&mut ChaCha8Rng>) {
    match op {
        Op::Write {
            file, off, data, ..
        } => apply(files.entry(file.clone()).or_default(), *off, data, tear),
        Op::Truncate { file, size } => {
            let f = files.entry(file.clone()).or_default();
            f.resize(*size as usize, 0);
        }
        _ => {}
    }
}

fn apply(file: &mut Vec<u8>, off: u64, data: &[u8], tear: Option<&mut ChaCha8Rng>) {
    let end = off as usize + data.len();
    if file.len() < end {
        file.resize(end, 0);
    }
    match tear {
        None => file[off as usize..end].copy_from_slice(data),
        Some(rng) => {
            for (i, sector) in data.chunks(512).enumerate() {
                if rng.random_range(0..2u32) == 0 {
                    let at = off as usize + i * 512;
                    file[at..at + sector.len()].copy_from_slice(sector);
                }
            }
        }
    }
}

/// The value row `k` holds in the crash-test workload (checked byte for byte after recovery).
pub fn value_of(k: u64) -> Vec<u8> {
    let len = 100 + (k * 7919 % 2900) as usize;
    (0..len).map(|i| (k as usize * 31 + i) as u8).collect()
}

/// Run test `name` of this test binary as a child process with `env` set (its database, say),
/// and return what it printed; the child's test must succeed and print `done`.
pub fn run_child_test(name: &str, env: (&str, &Path)) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && text.contains("done"),
        "{name}: {text}"
    );
    text
}

/// Run test `name` of this test binary as a child process with `env` set to `db`; the child
/// ends itself mid-transaction (`_exit`), and the rollback journal of `db` must be left hot.
pub fn run_child_leaving_a_hot_journal(name: &str, env: &str, db: &Path) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--test-threads=1"])
        .env(env, db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {out:?}");
    let mut journal = db.as_os_str().to_owned();
    journal.push("-journal");
    assert!(
        Path::new(&journal).exists(),
        "{name}: no hot journal was left"
    );
}
