//! An `ftruncate` that ran without a stop (ext4, with the BPF observer) is counted on the file
//! its descriptor named, which gets the extents its thread freed inside the call; where
//! truncates stop, the stop counted it and the trace's events add nothing.

use std::path::{Path, PathBuf};

use super::fdtable::{FdModel, OpenedFile};
use super::freed::FreedExtent;
use super::{FreedBlocks, Observer, Shared, SyncKind, TouchedFile, TracedDir, truncated};

#[derive(Default)]
struct Calls {
    truncated: Vec<PathBuf>,
    freed: Vec<(PathBuf, Vec<crate::Extent>, u64)>,
}

impl Observer for Calls {
    fn before_change(&mut self, _: super::Change, _: &TouchedFile) {}
    fn synced(&mut self, _: SyncKind, _: Option<&TouchedFile>, _: u64, _: u64) {}
    fn truncated(&mut self, path: &Path) {
        self.truncated.push(path.to_path_buf());
    }
    fn freed(&mut self, path: &Path, extents: &[crate::Extent], time_ns: u64) {
        self.freed
            .push((path.to_path_buf(), extents.to_vec(), time_ns));
    }
}

fn opened(path: &Path) -> OpenedFile {
    OpenedFile {
        path: path.to_path_buf(),
        directory: false,
        dsync: false,
        may_write: true,
        flags: libc::O_RDWR as u64,
        copy_up: false,
        stopped_ns: 0,
    }
}

fn extent(tid: i32, time_ns: u64, physical_block: u64) -> FreedExtent {
    FreedExtent {
        time_ns,
        tid,
        ino: 30,
        physical_block,
        logical_block: 0,
        blocks: 2,
    }
}

/// A thread that surely is no process's (above the kernel's pid limit).
const NO_TASK: i32 = i32::MAX;

#[test]
fn a_truncate_without_a_stop_is_counted_on_its_file_with_the_extents_its_thread_freed() {
    let journal = Path::new("/d/app.db-journal");
    let scope = TracedDir::same(Path::new("/d"));
    let mut calls = Calls::default();
    let mut sh = Shared {
        observer: &mut calls,
        marker: PathBuf::from("/nonexistent/trace_marker"),
        model: FdModel::new(1),
        stops: 0,
        handling_ns: 0,
        mapped: Default::default(),
        unlinks: Default::default(),
        freed: Some(FreedBlocks {
            dev: 1,
            block_bytes: 4096,
        }),
        unseen_truncates: 0,
    };
    // Freed by the truncating thread inside its call, by another thread meanwhile, and by
    // the same thread after.
    assert_eq!(sh.unlinks.freed(30, extent(10, 15, 100)), None);
    assert_eq!(sh.unlinks.freed(31, extent(11, 16, 200)), None);
    assert_eq!(sh.unlinks.freed(30, extent(10, 25, 300)), None);
    truncated(&mut sh, &scope, Some(&opened(journal)), 10, 3, 10, 20);
    // Outside the traced directory: not the command's file to count.
    truncated(
        &mut sh,
        &scope,
        Some(&opened(Path::new("/e/x"))),
        11,
        3,
        10,
        20,
    );
    // A descriptor joj never saw opened, of a process gone: counted as unseen.
    truncated(&mut sh, &scope, None, NO_TASK, 5, 21, 30);
    assert_eq!(sh.unseen_truncates, 1);
    // Where truncates stop (no freed blocks), the stop counted it: nothing more.
    sh.freed = None;
    truncated(&mut sh, &scope, Some(&opened(journal)), 10, 3, 10, 30);
    drop(sh);
    assert_eq!(calls.truncated, vec![journal.to_path_buf()]);
    let want = crate::Extent {
        logical_bytes: 0,
        physical_bytes: 100 * 4096,
        length_bytes: 2 * 4096,
        flags: 0,
    };
    assert_eq!(calls.freed, vec![(journal.to_path_buf(), vec![want], 15)]);
}
