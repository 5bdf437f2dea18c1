//! A PostMark-like workload for `joj crash --fs` (`--fs-workload postmark`): a pool of small
//! files, then transactions that each create a file, append to one or delete one, made durable
//! before they are acknowledged (`fsync` of the file, and of the directory when a name changes).
//!
//! PostMark (Katcher, NetApp TR-3022, 1997) creates a pool of files of 500 B–9.77 KiB, then runs
//! transactions of a create-or-delete and a read-or-append; here each transaction is one of
//! create (512 B–10 KiB), append (512 B–4 KiB) or delete, drawn from the seed, with a pool of
//! [`POOL_FILES`] made before the recorded window. Reads change nothing on disk and are left out.
//!
//! Byte `o` of file `id` is a function of `(id, o)`, so a file's whole content is its length:
//! the state after *k* transactions is a map from file to length. A recovered directory shows
//! *k* transactions when it equals that state exactly, and transaction *k + 1* in part when it
//! equals the state after *k* but for the file *k + 1* creates or appends to, at a length in
//! between (POSIX does not make a create or an append atomic: a cut during one may leave it
//! begun). States repeat (a file created, then deleted, gives the state before it back), so a
//! directory is read as every *k* it fits, and judged as showing the acknowledged ones if any of
//! them does. Anything else — a file with wrong bytes, a length outside those, a stray or
//! missing file — is broken.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use joj_linux::Beneath;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::confined::{ImageEscape, broken_or_escape};
use super::workload::Shown;

/// Files made before the recorded window.
pub const POOL_FILES: u64 = 16;

/// One transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create { id: u64, bytes: u64 },
    Append { id: u64, bytes: u64 },
    Delete { id: u64 },
}

/// File id → length.
pub type State = BTreeMap<u64, u64>;

/// The file name of `id`.
pub fn name(id: u64) -> String {
    format!("pm{id:06}")
}

fn id_of(name: &str) -> Option<u64> {
    name.strip_prefix("pm")
        .filter(|d| d.len() == 6)
        .and_then(|d| d.parse().ok())
}

/// Bytes `from..to` of file `id`.
pub fn content(id: u64, from: u64, to: u64) -> Vec<u8> {
    (from..to)
        .map(|o| {
            let mut x = (id << 32 ^ o).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            x ^= x >> 29;
            (x.wrapping_mul(0xbf58_476d_1ce4_e5b9) >> 56) as u8
        })
        .collect()
}

/// The pool and the transactions of a run, and the state after each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub pool: State,
    pub ops: Vec<Op>,
    /// `states[k]`: after the first `k` transactions.
    pub states: Vec<State>,
    /// Each file the run ever made, and the longest it ever was: no file of a state the run
    /// leaves, whole or in part, is longer (a file longer than this is broken unread).
    pub longest: State,
}

impl Expected {
    /// `transactions` transactions drawn from `seed`.
    pub fn new(transactions: u64, seed: u64) -> Expected {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9057_3a4c);
        let pool: State = (0..POOL_FILES)
            .map(|id| (id, rng.random_range(512..=10_240)))
            .collect();
        let (mut state, mut next_id) = (pool.clone(), POOL_FILES);
        let mut ops = Vec::new();
        for _ in 0..transactions {
            let live: Vec<u64> = state.keys().copied().collect();
            let pick = rng.random_range(0..4u32);
            let op = match (pick, live.len()) {
                (1, 2..) => Op::Delete {
                    id: live[rng.random_range(0..live.len())],
                },
                (2 | 3, 1..) => Op::Append {
                    id: live[rng.random_range(0..live.len())],
                    bytes: rng.random_range(512..=4096),
                },
                _ => {
                    next_id += 1;
                    Op::Create {
                        id: next_id - 1,
                        bytes: rng.random_range(512..=10_240),
                    }
                }
            };
            apply(&mut state, op);
            ops.push(op);
        }
        Expected::of(pool, ops)
    }

    /// The run of `ops` on `pool`.
    pub fn of(pool: State, ops: Vec<Op>) -> Expected {
        let mut states = vec![pool.clone()];
        for &op in &ops {
            let mut next = states.last().expect("the pool's state").clone();
            apply(&mut next, op);
            states.push(next);
        }
        let mut longest = State::new();
        for (&id, &len) in states.iter().flatten() {
            let l = longest.entry(id).or_insert(len);
            *l = (*l).max(len);
        }
        Expected {
            pool,
            ops,
            states,
            longest,
        }
    }

    /// What the directory `dir` shows.
    /// What the directory `dir` of `image` shows (its files are read beneath the image's root
    /// only; a link, a special file or a way out is an [`ImageEscape`]).
    pub fn shown(&self, image: &Beneath, dir: &Path) -> Result<Shown, ImageEscape> {
        let disk = match read_dir(image, dir, &self.longest)? {
            Ok(d) => d,
            Err(broken) => return Ok(broken),
        };
        let whole: Vec<u64> = (self.states.iter().enumerate())
            .filter(|(_, s)| **s == disk)
            .map(|(k, _)| k as u64)
            .collect();
        let partial: Vec<u64> = (self.ops.iter().enumerate())
            .filter(|(k, op)| in_part(&self.states[*k], **op, &disk))
            .map(|(k, _)| k as u64)
            .collect();
        if !whole.is_empty() || !partial.is_empty() {
            return Ok(Shown::Candidates { whole, partial });
        }
        Ok(Shown::Broken(format!(
            "the files ({} of them) match no prefix of the transactions",
            disk.len()
        )))
    }
}

fn apply(state: &mut State, op: Op) {
    match op {
        Op::Create { id, bytes } => {
            state.insert(id, bytes);
        }
        Op::Append { id, bytes } => *state.get_mut(&id).expect("append to a live file") += bytes,
        Op::Delete { id } => {
            state.remove(&id);
        }
    }
}

/// Whether `disk` is `before` with `op` begun but not finished.
fn in_part(before: &State, op: Op, disk: &State) -> bool {
    // The lengths strictly between the whole states before and after (an empty new file is
    // between: the state before has no file).
    let (id, between) = match op {
        Op::Create { id, bytes } => (id, 0..bytes),
        Op::Append { id, bytes } => {
            let Some(&a) = before.get(&id) else {
                return false;
            };
            (id, a + 1..a + bytes)
        }
        Op::Delete { .. } => return false,
    };
    let Some(&len) = disk.get(&id) else {
        return false;
    };
    between.contains(&len)
        && disk.len() == before.len() + usize::from(!before.contains_key(&id))
        && disk
            .iter()
            .all(|(f, l)| *f == id || before.get(f) == Some(l))
}

/// The files in `dir` of `image`, each checked byte for byte (or why they are broken). A file
/// longer than the run ever made it (`longest`) is broken from its size alone, unread: a
/// crafted image's sparse file of 64 GiB was read whole, into as much memory.
fn read_dir(
    image: &Beneath,
    dir: &Path,
    longest: &State,
) -> Result<Result<State, Shown>, ImageEscape> {
    let broken = |why: String| Ok(Err(Shown::Broken(why)));
    let names = match image.read_dir(dir).map_err(broken_or_escape) {
        Ok(n) => n,
        Err(Ok(why)) => return broken(format!("cannot list the files: {why}")),
        Err(Err(escape)) => return Err(escape),
    };
    let mut state = State::new();
    for file_name in names {
        let file_name = file_name.to_string_lossy().into_owned();
        let Some(id) = id_of(&file_name) else {
            return broken(format!("a stray file {file_name}"));
        };
        let most = longest.get(&id).copied();
        let read = match image.open_file(&dir.join(&file_name)) {
            Ok(mut f) => as_written(&mut f, id, most.unwrap_or(0)),
            Err(e) => Err(Unlike::Unread(broken_or_escape(e)?)),
        };
        match (read, most) {
            (Ok(len), _) => {
                state.insert(id, len);
            }
            (Err(Unlike::Longer { bytes }), None) => {
                return broken(format!(
                    "{file_name}, a file the run never made, holds {bytes} bytes (not read)"
                ));
            }
            (Err(Unlike::Longer { bytes }), Some(most)) => {
                return broken(format!(
                    "{file_name} holds {bytes} bytes, more than the run ever made it ({most} \
                     bytes): no prefix of its transactions leaves this (not read)"
                ));
            }
            (Err(Unlike::WrongByte { offset }), _) => {
                return broken(format!("{file_name} has a wrong byte at offset {offset}"));
            }
            (Err(Unlike::Unread(e)), _) => {
                return broken(format!("cannot read {file_name}: {e}"));
            }
        }
    }
    Ok(Ok(state))
}

/// Bytes of a file read and compared at a time.
const CHUNK_BYTES: u64 = 64 << 10;

/// How a file differs from what the run wrote into it.
#[derive(Debug, PartialEq, Eq)]
enum Unlike {
    /// Longer than the run ever made it: `bytes` by its size (or at least, read so far).
    Longer {
        bytes: u64,
    },
    WrongByte {
        offset: u64,
    },
    Unread(String),
}

/// The length of file `id` open as `f`, if every byte of it is the run's and it is at most
/// `most` bytes long; its size is checked first, then it is read and compared in chunks (a
/// file that grows past its size while read is still cut off at `most`).
fn as_written(f: &mut File, id: u64, most: u64) -> Result<u64, Unlike> {
    let unread = |e: std::io::Error| Unlike::Unread(e.to_string());
    let bytes = f.metadata().map_err(unread)?.len();
    if bytes > most {
        return Err(Unlike::Longer { bytes });
    }
    let mut buf = vec![0u8; bytes.min(CHUNK_BYTES) as usize];
    let mut at = 0u64;
    let mut within = f.take(most + 1);
    loop {
        let n = match within.read(&mut buf) {
            Ok(0) => return Ok(at),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unread(e)),
        };
        let end = at + n as u64;
        if end > most {
            return Err(Unlike::Longer { bytes: end });
        }
        if let Some(o) = buf[..n]
            .iter()
            .zip(content(id, at, end))
            .position(|(a, b)| *a != b)
        {
            return Err(Unlike::WrongByte {
                offset: at + o as u64,
            });
        }
        at = end;
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Makes the pool in `dir` (before the recorded window).
pub fn prepare(dir: &Path, e: &Expected) -> std::io::Result<()> {
    for (&id, &bytes) in &e.pool {
        let mut f = File::create_new(dir.join(name(id)))?;
        f.write_all(&content(id, 0, bytes))?;
        f.sync_all()?;
    }
    sync_dir(dir)
}

/// Runs transaction `i` (from 1), durable on return.
pub fn transaction(dir: &Path, e: &Expected, i: u64) -> std::io::Result<()> {
    match e.ops[i as usize - 1] {
        Op::Create { id, bytes } => {
            let mut f = File::create_new(dir.join(name(id)))?;
            f.write_all(&content(id, 0, bytes))?;
            f.sync_all()?;
            sync_dir(dir)
        }
        Op::Append { id, bytes } => {
            let before = e.states[i as usize - 1][&id];
            let mut f = OpenOptions::new().append(true).open(dir.join(name(id)))?;
            f.write_all(&content(id, before, before + bytes))?;
            f.sync_all()
        }
        Op::Delete { id } => {
            std::fs::remove_file(dir.join(name(id)))?;
            sync_dir(dir)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    trait ShownIn {
        fn shown_in(&self, dir: &Path) -> Shown;
    }

    impl ShownIn for Expected {
        fn shown_in(&self, dir: &Path) -> Shown {
            let image = Beneath::open_root(dir).unwrap();
            self.shown(&image, Path::new("")).unwrap()
        }
    }

    #[test]
    fn a_directory_shows_whole_transactions_a_partial_one_or_is_broken() {
        let e = Expected::new(30, 5);
        assert_eq!(e.states.len(), 31);
        assert_eq!(e, Expected::new(30, 5));
        let dir = tempfile::tempdir().unwrap();
        prepare(dir.path(), &e).unwrap();
        let whole = |k: u64| Shown::Candidates {
            whole: vec![k],
            partial: vec![],
        };
        assert_eq!(e.shown_in(dir.path()), whole(0));
        for i in 1..=12 {
            transaction(dir.path(), &e, i).unwrap();
        }
        assert_eq!(e.shown_in(dir.path()), whole(12));
        // Transaction 13 begun: its file created or appended to, short.
        let (id, at) = match e.ops[12] {
            Op::Create { id, .. } => (id, 0),
            Op::Append { id, .. } => (id, e.states[12][&id]),
            Op::Delete { id } => {
                std::fs::remove_file(dir.path().join(name(id))).unwrap();
                assert_eq!(e.shown_in(dir.path()), whole(13));
                return;
            }
        };
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.path().join(name(id)))
            .unwrap();
        f.write_all(&content(id, at, at + 100)).unwrap();
        assert!(matches!(
            e.shown_in(dir.path()),
            Shown::Candidates { partial, .. } if partial == vec![12]
        ));
        let next = content(id, at + 100, at + 101)[0];
        f.write_all(&[!next]).unwrap();
        assert!(matches!(e.shown_in(dir.path()), Shown::Broken(w) if w.contains("wrong byte")));
    }

    #[test]
    fn a_file_is_compared_chunk_by_chunk_and_one_too_long_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name(7));
        let len = 3 * CHUNK_BYTES + 100;
        std::fs::write(&path, content(7, 0, len)).unwrap();
        let open = || File::open(&path).unwrap();
        assert_eq!(as_written(&mut open(), 7, len), Ok(len));
        assert_eq!(as_written(&mut open(), 7, len + 1), Ok(len));
        assert_eq!(
            as_written(&mut open(), 7, len - 1),
            Err(Unlike::Longer { bytes: len })
        );
        // A wrong byte in the third chunk is found where it is.
        let at = 2 * CHUNK_BYTES + 5;
        let mut f = OpenOptions::new().write(true).open(&path).unwrap();
        std::os::unix::fs::FileExt::write_at(&f, &[!content(7, at, at + 1)[0]], at).unwrap();
        assert_eq!(
            as_written(&mut open(), 7, len),
            Err(Unlike::WrongByte { offset: at })
        );
        // A sparse terabyte is judged by its size: reading it would take the test's time.
        f.set_len(1 << 40).unwrap();
        f.flush().unwrap();
        assert_eq!(
            as_written(&mut open(), 7, len),
            Err(Unlike::Longer { bytes: 1 << 40 })
        );
    }

    #[test]
    fn a_file_longer_than_the_run_ever_made_it_is_broken_by_its_size() {
        let e = Expected::new(30, 5);
        let dir = tempfile::tempdir().unwrap();
        prepare(dir.path(), &e).unwrap();
        let most = e.longest[&0];
        // The right bytes, one more than the run ever wrote into the file.
        std::fs::write(dir.path().join(name(0)), content(0, 0, most + 1)).unwrap();
        let said = format!(
            "{} holds {} bytes, more than the run ever made it ({most} bytes)",
            name(0),
            most + 1
        );
        assert!(
            matches!(e.shown_in(dir.path()), Shown::Broken(why) if why.contains(&said)),
            "{said}"
        );
        // A file the run never made.
        std::fs::write(dir.path().join(name(0)), content(0, 0, most)).unwrap();
        std::fs::write(dir.path().join(name(999_999)), [0u8; 3]).unwrap();
        assert!(matches!(
            e.shown_in(dir.path()),
            Shown::Broken(why) if why.contains("pm999999, a file the run never made, holds 3 bytes")
        ));
    }

    #[test]
    fn a_state_that_repeats_is_read_as_every_k_it_fits() {
        // Regression: a file created and then deleted gives the pool back, and the directory
        // was read as showing 0 transactions only (2 acknowledged "lost").
        let pool: State = [(0, 700)].into_iter().collect();
        let ops = vec![Op::Create { id: 1, bytes: 600 }, Op::Delete { id: 1 }];
        let e = Expected::of(pool, ops);
        let dir = tempfile::tempdir().unwrap();
        prepare(dir.path(), &e).unwrap();
        assert_eq!(
            e.shown_in(dir.path()),
            Shown::Candidates {
                whole: vec![0, 2],
                partial: vec![]
            }
        );
    }
}
