//! Two traced runs writing into one output folder at the same time each keep their own trace
//! and plot: the second to publish takes `<label>-2`, and each run's JSON names the files it
//! really wrote, which hold that run's records. Nothing else is left in the folder.

mod common;

use std::path::Path;
use std::process::Stdio;

/// The scratch-filesystem prerequisites; the test fails naming what is missing, unless
/// kernel-level tests are skipped on purpose (`JOJ_SKIP_KERNEL_TESTS=1`).
fn ready() -> bool {
    joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4])
}

#[test]
fn two_runs_in_one_folder_keep_both_traces() {
    if !ready() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let runs: Vec<_> = ["20", "30"]
        .iter()
        .map(|n| {
            common::joj_command()
                .args([
                    "bench",
                    "--fs",
                    "ext4",
                    "--trace",
                    "--json",
                    "--image-mib",
                    "64",
                ])
                .args(["-n", n, "--out"])
                .arg(out.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let docs: Vec<serde_json::Value> = runs
        .into_iter()
        .map(|child| {
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            serde_json::from_slice(&o.stdout).unwrap()
        })
        .collect();

    let mut named = Vec::new();
    for doc in &docs {
        let trace = Path::new(doc["trace_file"].as_str().unwrap());
        let plot = Path::new(doc["plot_file"].as_str().unwrap());
        assert_eq!(trace.parent(), Some(out.path()));
        let (header, records) = joj_trace::read_trace_file(trace).unwrap();
        assert_eq!(
            header.meta["transactions"],
            doc["transactions"],
            "{} holds another run's records",
            trace.display()
        );
        assert_eq!(
            records.len() as u64,
            doc["block"]["requests"].as_u64().unwrap()
        );
        assert!(std::fs::read_to_string(plot).unwrap().starts_with("<svg"));
        let stem = |p: &Path, suffix: &str| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.strip_suffix(suffix).unwrap().to_owned()
        };
        assert_eq!(stem(trace, ".trace.jsonl"), stem(plot, ".svg"));
        named.push(trace.to_path_buf());
        named.push(plot.to_path_buf());
    }
    let mut names: Vec<String> = named
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "bench-ext4-wal-insert-2.svg",
            "bench-ext4-wal-insert-2.trace.jsonl",
            "bench-ext4-wal-insert.svg",
            "bench-ext4-wal-insert.trace.jsonl",
        ]
    );
    let mut present: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    present.sort();
    assert_eq!(present, names, "the folder holds exactly the files named");
}
