//! What a replay's observer is told of the writes it plays: each `write` and `pwrite`, with the
//! bytes the kernel returned, the file its descriptor names at that moment and a `pwrite`'s
//! offset, before the sync of a write on an `O_DSYNC` descriptor — what `joj syscalls replay`
//! counts as `joj trace` counts a program's writes.

use std::fs::File;
use std::path::Path;
use std::sync::Mutex;

use super::format::Op;
use super::play::{Change, Phase, PlayObserver, Player, Synced, Timing};
use super::tests::recording;

/// What an observer was told, in order.
#[derive(Default)]
struct Told(Mutex<Vec<String>>);

impl PlayObserver for Told {
    fn before_change(&self, _: Change, _: &Path, _: &File) {}
    fn wrote(&self, path: &Path, bytes: u64, offset: Option<u64>) {
        let name = path.file_name().unwrap().to_string_lossy();
        self.0
            .lock()
            .unwrap()
            .push(format!("wrote {name} {bytes} {offset:?}"));
    }
    fn synced(&self, kind: Synced, file: Option<(&Path, &File)>, _: u64, _: u64) {
        let name = file.map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned());
        self.0
            .lock()
            .unwrap()
            .push(format!("synced {kind:?} {name:?}"));
    }
}

#[test]
fn the_observer_is_told_every_write_with_its_file_bytes_and_offset() {
    let open = |path: &str, flags: &[&str], fd| Op::Open {
        path: path.into(),
        flags: flags.iter().map(|f| f.to_string()).collect(),
        mode: 0o644,
        fd,
    };
    let rec = recording(vec![
        open("a", &["O_RDWR", "O_CREAT"], 3),
        Op::Write { fd: 3, len: 100 },
        Op::Pwrite {
            fd: 3,
            off: 4096,
            len: 10,
            sqlite_header: false,
        },
        Op::Write { fd: 3, len: 0 },
        open("b", &["O_WRONLY", "O_CREAT", "O_DSYNC"], 4),
        Op::Write { fd: 4, len: 7 },
        Op::Fdatasync { fd: 3 },
        Op::Close { fd: 3 },
        // A new file at descriptor 3: the write is told of the file it names now.
        open("c", &["O_RDWR", "O_CREAT"], 3),
        Op::Pwrite {
            fd: 3,
            off: 0,
            len: 32,
            sqlite_header: false,
        },
    ]);
    let dir = tempfile::tempdir().unwrap();
    let told = Told::default();
    Player::new(dir.path())
        .play(
            &rec.calls,
            &Phase {
                timing: Timing::Fast,
                observer: Some(&told),
                progress: None,
            },
        )
        .unwrap();
    assert_eq!(
        told.0.into_inner().unwrap(),
        [
            "wrote a 100 None",
            "wrote a 10 Some(4096)",
            "wrote a 0 None",
            "wrote b 7 None",
            "synced SyncWrite Some(\"b\")",
            "synced Fdatasync Some(\"a\")",
            "wrote c 32 Some(0)",
        ]
    );
}
