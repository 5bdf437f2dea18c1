//! One map per file per batch of events: a second sync of the same path read in the same batch
//! is counted without joj opening and mapping the file again; the next batch maps it afresh.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::fdtable::{FdModel, OpenedFile};
use super::{Observer, Shared, SyncKind, TouchedFile, TracedDir, synced_file};

#[derive(Default)]
struct Calls {
    mapped: Vec<PathBuf>,
    again: Vec<PathBuf>,
    gone: Vec<PathBuf>,
}

impl Observer for Calls {
    fn before_change(&mut self, _: super::Change, _: &TouchedFile) {}
    fn synced(&mut self, _: SyncKind, file: Option<&TouchedFile>, _: u64, _: u64) {
        self.mapped.extend(file.map(|f| f.path.clone()));
    }
    fn synced_mapped(&mut self, _: SyncKind, path: &Path, dev: u64, _: u64, _: u64) {
        assert_ne!(dev, 0, "the device of {}", path.display());
        self.again.push(path.to_path_buf());
    }
    fn synced_gone(&mut self, _: SyncKind, path: &Path, _: u64, _: u64) {
        self.gone.push(path.to_path_buf());
    }
}

fn opened(path: PathBuf) -> OpenedFile {
    OpenedFile {
        path,
        directory: false,
        dsync: false,
        may_write: true,
        flags: libc::O_RDWR as u64,
        copy_up: false,
        stopped_ns: 0,
    }
}

#[test]
fn a_file_synced_twice_in_a_batch_is_mapped_once_and_again_in_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    std::fs::write(&db, b"x").unwrap();
    let gone = dir.path().join("app.db-journal");
    let scope = TracedDir::same(dir.path());
    let mut calls = Calls::default();
    let mut sh = Shared {
        observer: &mut calls,
        marker: PathBuf::from("/nonexistent/trace_marker"),
        model: FdModel::new(1),
        stops: 0,
        handling_ns: 0,
        mapped: Default::default(),
        unlinks: Default::default(),
        freed: None,
        unseen_truncates: 0,
    };
    for (file, kind) in [(&db, SyncKind::Fdatasync), (&gone, SyncKind::Fdatasync)] {
        synced_file(&mut sh, &scope, kind, &opened(file.clone()), 1, 2);
        synced_file(
            &mut sh,
            &scope,
            SyncKind::Fsync,
            &opened(file.clone()),
            3,
            4,
        );
    }
    // joj holds none of the files it mapped, only their devices.
    assert_eq!(
        sh.mapped.get(&db),
        Some(&Some(std::fs::metadata(&db).unwrap().dev()))
    );
    assert_eq!(sh.mapped.get(&gone), Some(&None));
    // The batch ends: the next maps them afresh.
    sh.mapped.clear();
    synced_file(
        &mut sh,
        &scope,
        SyncKind::Fdatasync,
        &opened(db.clone()),
        5,
        6,
    );
    drop(sh);
    assert_eq!(calls.mapped, vec![db.clone(), db.clone()]);
    assert_eq!(calls.again, vec![db]);
    assert_eq!(calls.gone, vec![gone.clone(), gone]);
}
