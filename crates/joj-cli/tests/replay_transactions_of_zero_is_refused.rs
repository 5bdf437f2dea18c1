//! `joj replay --transactions` takes a count from 1 up: 0, a negative number or text is refused
//! by the command line itself, naming the range, before the trace is read.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn replay_transactions_of_zero_is_refused() {
    // No trace file: a refusal must come before it is looked for.
    let missing = "/nonexistent/joj-replay-transactions.txt";
    for (given, says) in [
        ("0", "below 1"),
        ("-3", "cannot be negative"),
        ("ten", "not a whole number"),
    ] {
        for devices in [&["--device", "emmc5"][..], &["--device-for", "8:0=emmc5"]] {
            let out = common::joj_command()
                .args(["replay", missing, "--transactions", given])
                .args(devices)
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(2),
                "--transactions {given}: {out:?}"
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("--transactions"), "{err}");
            assert!(err.contains(says), "--transactions {given}: {err}");
            assert!(err.contains("from 1 to"), "{err}");
        }
    }
}
