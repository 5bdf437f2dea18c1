//! `joj bench --json` prints one JSON document and nothing else on stdout, with the fields the
//! run-result contract promises; Mobibench's flags and joj's long options mean the same run.

mod common;

fn joj(args: &[&str]) -> (String, String, bool) {
    let (ok, out, err) = common::run_joj_text(args);
    (out, err, ok)
}

#[test]
fn bench_json_is_one_document() {
    let (stdout, stderr, ok) = joj(&[
        "bench",
        "--fs",
        "host",
        "--journal",
        "wal",
        "--synchronous",
        "full",
        "--op",
        "insert",
        "-n",
        "30",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&stdout).expect("stdout is exactly one JSON document");
    for key in [
        "ops_per_sec",
        "transactions",
        "elapsed_s",
        "latency_us",
        "syscalls",
        "files",
        "config",
    ] {
        assert!(doc.get(key).is_some(), "missing {key}: {doc}");
    }
    for key in ["p50", "p99", "p999", "max"] {
        assert!(
            doc["latency_us"][key].as_f64().is_some(),
            "latency_us.{key}"
        );
    }
    for key in ["fsync", "fdatasync", "write_calls", "write_bytes"] {
        assert!(doc["syscalls"][key].as_u64().is_some(), "syscalls.{key}");
    }
    assert_eq!(doc["transactions"], 30);
    assert!(doc["files"]["wal_bytes"].as_u64().unwrap() >= 30 * 4096);
    assert_eq!(doc["config"]["journal_mode"], "wal");
    assert_eq!(doc["config"]["synchronous"], "full");
    assert_eq!(doc["config"]["fs"], "host");
    assert!(
        doc["config"]["sqlite_version"]
            .as_str()
            .unwrap()
            .starts_with("3.")
    );
    assert!(doc["syscalls"]["fdatasync"].as_u64().unwrap() >= 30);
}

#[test]
fn mobibench_flags_mean_what_mobibench_means() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_str().unwrap();
    // -d 1 update, -n 20 transactions, -j 1 TRUNCATE, -s 1 NORMAL, -T 2 tables, -R random
    // keys (its argument ignored, as Mobibench ignores it), -D 2 databases, -i 1 millisecond.
    let (stdout, stderr, ok) = joj(&[
        "bench",
        "-p",
        p,
        "-d",
        "1",
        "-n",
        "20",
        "-j",
        "1",
        "-s",
        "1",
        "-T",
        "2",
        "-R",
        "1",
        "-D",
        "2",
        "-i",
        "1",
        "--statements",
        "3",
        "--sync-call",
        "fsync",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["config"]["op"], "update");
    assert_eq!(doc["config"]["journal_mode"], "truncate");
    assert_eq!(doc["config"]["synchronous"], "normal");
    assert_eq!(doc["config"]["tables"], 2);
    assert_eq!(doc["config"]["attached_dbs"], 1);
    assert_eq!(doc["config"]["keys"], "random");
    assert_eq!(doc["config"]["interval_ms"], 1);
    assert_eq!(doc["config"]["statements_per_txn"], 3);
    // 20 transactions of 1 ms pauses between them: at least 19 ms.
    assert!(doc["elapsed_s"].as_f64().unwrap() >= 0.019);
    assert_eq!(
        doc["syscalls"]["fdatasync"], 0,
        "--sync-call fsync issues only fsync"
    );
    assert!(doc["syscalls"]["fsync"].as_u64().unwrap() >= 20);
    assert!(doc["files"]["rollback_journal_bytes"].as_u64().unwrap() > 0);

    // File mode: -a 1 random write, -y 8 fdatasync, -f 64 KiB, -r 4 KiB.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_str().unwrap();
    let (stdout, stderr, ok) = joj(&[
        "bench", "-p", p, "-a", "1", "-y", "8", "-f", "64", "-r", "4", "--json",
    ]);
    assert!(ok, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["config"]["workload"], "file");
    assert_eq!(doc["config"]["op"], "randwrite");
    assert_eq!(doc["transactions"], 16);
    assert_eq!(doc["syscalls"]["fdatasync"], 16);
}

/// `joj bench -d 0 -n N -j 0 -s 2 -T 3` does per transaction what Mobibench does (observed
/// under strace, Mobibench shell at ESOS-Lab f56ea5e on SQLite 3.7.5: 18.19 pwrite64 and 4
/// fdatasync per transaction; with -T 1, 10.14 and 4): one row in each of the three tables,
/// the journal written and synced twice, its directory synced, the database synced.
#[test]
fn mobibench_tables_flag_writes_every_table_in_each_transaction() {
    for (tables, writes) in [(3, 18.0), (1, 10.0)] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().to_str().unwrap();
        let t = tables.to_string();
        let (stdout, stderr, ok) = joj(&[
            "bench", "-p", p, "-d", "0", "-n", "200", "-j", "0", "-s", "2", "-T", &t, "--json",
        ]);
        assert!(ok, "{stderr}");
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let per_txn = |k: &str| doc["syscalls"][k].as_u64().unwrap() as f64 / 200.0;
        assert!(
            (per_txn("write_calls") - writes).abs() < 0.5,
            "-T {tables}: {} writes per transaction",
            per_txn("write_calls")
        );
        assert_eq!(per_txn("fdatasync"), 4.0, "-T {tables}");
        assert_eq!(per_txn("dir_syncs"), 1.0, "-T {tables}");
    }
}

#[test]
fn bad_input_is_refused_with_the_fix() {
    let (_, stderr, ok) = joj(&["bench", "-j", "9"]);
    assert!(
        !ok && stderr.contains("possible values") && stderr.contains("waldio"),
        "{stderr}"
    );
    let (_, stderr, ok) = joj(&["bench", "-a", "0", "-y", "5"]);
    assert!(!ok && stderr.contains("mmap"), "{stderr}");
    let (_, stderr, ok) = joj(&["bench", "--fs", "f2fs"]);
    assert!(!ok && stderr.contains("host"), "{stderr}");
    let (_, stderr, ok) = joj(&["bench", "--fs", "host", "--trace", "-n", "1"]);
    assert!(!ok && stderr.contains("scratch filesystem"), "{stderr}");
    let (_, stderr, ok) = joj(&["bench", "--page-size", "1000", "-n", "1"]);
    assert!(!ok && stderr.contains("power of two"), "{stderr}");
}

#[test]
fn version_names_sqlite_and_its_compile_options() {
    let (stdout, _, ok) = joj(&["--version"]);
    assert!(ok);
    assert!(stdout.contains("SQLite 3."), "{stdout}");
    assert!(stdout.contains("ENABLE_BATCH_ATOMIC_WRITE"), "{stdout}");
    assert!(stdout.contains("HAVE_FDATASYNC=1"), "{stdout}");
    assert!(!stdout.contains("warning"), "{stdout}");
}
