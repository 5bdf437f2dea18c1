//! A value outside a workload's bounds is refused before anything runs, saying the bound and the
//! fix (these messages gave the bound alone).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn each_bound_of_a_workload_names_the_fix() {
    for (args, fix) in [
        (
            &["bench", "--record-bytes", "0"][..],
            "fix: --record-bytes between 1 and",
        ),
        (
            &["bench", "--attached", "20"][..],
            "fix: --attached 9 or fewer",
        ),
        (
            &[
                "bench",
                "--workload",
                "xftl-synthetic",
                "--pages-per-txn",
                "0",
            ][..],
            "fix: --pages-per-txn between 1 and",
        ),
        (
            &["bench", "--workload", "tpcc-write", "--warehouses", "0"][..],
            "fix: --warehouses between 1 and",
        ),
        (
            &["bench", "--workload", "rl-bench", "--rl-divisor", "0"][..],
            "fix: --rl-divisor between 1",
        ),
        (
            &["bench", "-j", "off", "--op", "write", "-f", "1", "-r", "4"][..],
            "fix: a larger --file-kib",
        ),
        (
            &["bench", "--device", "emmc5", "--gc-validity", "100"][..],
            "fix: --gc-validity between 1 and 99",
        ),
    ] {
        let (ok, _, stderr) = common::run_joj_text(args);
        assert!(!ok, "{args:?} refused");
        assert!(stderr.contains(fix), "{args:?}: {stderr}");
    }
}
