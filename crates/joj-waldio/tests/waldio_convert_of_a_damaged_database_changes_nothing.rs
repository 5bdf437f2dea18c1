//! `joj_waldio::convert` of a database SQLite cannot open leaves the file and its directory as
//! they were and says what is wrong with a fix: a header whose reserve leaves fewer than 480
//! usable bytes per page, or a file shorter than its first page, is refused before anything is
//! written; a WAL database whose first page is damaged (seen only when SQLite reads it) gets
//! its header's mark and its `-waldio` undone.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::path::Path;

/// A database header: `page_size`, read and write versions 2 (WAL), `reserve`.
fn header(page_size: u16, reserve: u8) -> Vec<u8> {
    let mut h = vec![0u8; 100];
    h[..16].copy_from_slice(b"SQLite format 3\0");
    h[16..18].copy_from_slice(&page_size.to_be_bytes());
    (h[18], h[19], h[20], h[21], h[22], h[23]) = (2, 2, reserve, 64, 32, 32);
    h[44..48].copy_from_slice(&4u32.to_be_bytes()); // schema format
    h
}

fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn refused(d: &Path, name: &str, bytes: &[u8], says: &[&str]) {
    let db = d.join(name);
    std::fs::write(&db, bytes).unwrap();
    let before = names(d);
    let err = joj_waldio::convert(&db).unwrap_err().to_string();
    for s in says {
        assert!(err.contains(s), "{name}: {err}");
    }
    assert!(
        err.contains("nothing was changed") && err.contains("fix:"),
        "{name}: {err}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        bytes,
        "{name}: the file is as it was"
    );
    assert_eq!(names(d), before, "{name}: nothing made beside it");
}

#[test]
fn waldio_convert_of_a_damaged_database_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(
        d,
        "reserve_gt_page.db",
        &header(512, 255),
        &[
            "pages of 512 B with 255 reserved bytes",
            "leaving 257 usable bytes",
        ],
    );
    refused(
        d,
        "reserve255.db",
        &header(4096, 255),
        &["is 100 bytes, shorter than the 4096-byte first page"],
    );
    // A whole first page whose b-tree header is zeros: only SQLite's read finds it.
    let mut page = header(4096, 24);
    page.resize(4096, 0);
    refused(
        d,
        "damaged.db",
        &page,
        &["malformed", "PRAGMA integrity_check"],
    );
}
