//! `joj apptxn --page-size 0` (or 3000) used to run anyway, at SQLite's default page size:
//! SQLite ignores a page size that is not a power of two in 512..=65536, silently. It is now refused before the run, as `joj restart` and `joj speed` refuse it,
//! with the sizes SQLite takes.

mod common;

use common::run_joj;

#[test]
fn apptxn_refuses_a_page_size_sqlite_would_ignore() {
    for bad in ["0", "3000", "131072"] {
        let out = run_joj(&[
            "apptxn",
            "--page-size",
            bad,
            "--transactions",
            "2",
            "--json",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "--page-size {bad}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "page size {bad} is not a power of two in 512..=65536"
            )) && stderr.contains("fix: give one of 512, 1024"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty(), "--page-size {bad} printed a result");
    }
    let out = run_joj(&[
        "apptxn",
        "--page-size",
        "8192",
        "--transactions",
        "2",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
