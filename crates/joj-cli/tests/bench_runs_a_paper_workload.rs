//! `joj bench --workload <paper workload>` runs it and its JSON says which one ran, with the
//! transactions by kind and New-Orders for tpmC; sizes and thread counts it cannot run are
//! refused with a message that names the flag.

mod common;

fn joj(args: &[&str]) -> (String, String, bool) {
    let (ok, out, err) = common::run_joj_text(args);
    (out, err, ok)
}

#[test]
fn bench_runs_a_paper_workload() {
    let (stdout, stderr, ok) = joj(&[
        "bench",
        "--fs",
        "host",
        "--workload",
        "tpcc-write",
        "--journal",
        "delete",
        "--page-size",
        "8192",
        "-n",
        "200",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(doc["transactions"], 200);
    assert_eq!(doc["config"]["op"], "tpcc-write");
    assert_eq!(doc["config"]["paper"]["name"], "tpcc");
    assert_eq!(doc["config"]["paper"]["mix"], "write-intensive");
    assert_eq!(doc["config"]["paper"]["warehouses"], 1);
    assert_eq!(doc["config"]["page_size"], 8192);
    let kinds = &doc["paper"]["transactions_by_kind"];
    assert_eq!(kinds["payment"], 86);
    assert_eq!(kinds["delivery"], 8);
    let new_orders = doc["paper"]["new_orders"].as_u64().unwrap();
    let rolled_back = kinds["new_order_rolled_back"].as_u64().unwrap_or(0);
    assert_eq!(new_orders + rolled_back, 90);
    assert!(doc["paper"]["tpmc"].as_f64().unwrap() > 0.0);
    assert!(doc["paper"]["summary"]["digest"].as_u64().is_some());

    // The synthetic workload at k = 3, text output.
    let (stdout, stderr, ok) = joj(&[
        "bench",
        "--fs",
        "host",
        "--workload",
        "xftl-synthetic",
        "--pages-per-txn",
        "3",
        "-n",
        "20",
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("xftl-synthetic (60000 rows, 3 per txn): xftl_update 20"),
        "{stdout}"
    );

    for (args, needle) in [
        (
            vec!["--workload", "xftl-synthetic", "--pages-per-txn", "0"],
            "--pages-per-txn 0",
        ),
        (
            vec!["--workload", "tpcc-write", "-t", "2"],
            "one connection",
        ),
        (vec!["--workload", "tpcc-anything"], "tpcc-write"),
        (
            vec!["--workload", "rl-bench", "--op", "update"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["bench", "--fs", "host", "-n", "5"];
        all.extend(args);
        let (_, stderr, ok) = joj(&all);
        assert!(!ok, "{all:?} must fail");
        assert!(stderr.contains(needle), "{all:?}: {stderr}");
    }
}
