//! Model test driven from Python: the same random transactions, rollbacks, checkpoints and
//! reopenings on SQLite's default VFS and through the extension's waldio give the same results.

mod common;

use std::process::Command;

#[test]
fn waldio_gives_the_same_results_as_the_default_vfs_over_random_sql() {
    for seed in [7u64, 8, 9] {
        let dir = tempfile::tempdir().unwrap();
        let out = common::run_ok(
            Command::new(common::python())
                .arg(common::script("model.py"))
                .arg(common::lib())
                .arg(dir.path())
                .arg(seed.to_string())
                .arg("300"),
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("300 steps, same results"),
            "seed {seed}: {text}"
        );
    }
}
