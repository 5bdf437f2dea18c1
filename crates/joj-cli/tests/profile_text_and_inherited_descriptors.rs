#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
//! Two things a user hands joj that it used to mishandle. A device profile's free text (its
//! `name`, `description`, `sources`, `host.name`, `host.sources`) reached the terminal as it
//! was, escape sequences and all (`\u001b[2J` cleared the screen of whoever ran `joj device
//! run --device FILE`): a profile holding a control or bidirectional-formatting character, or a
//! name longer than 64 characters, is now refused at load naming the field and the fix. And
//! `joj syscalls record` refused a program that uses descriptors it did not open itself
//! (`close on descriptor 0, which no earlier open in the recording returned`): its standard
//! input and output, a descriptor its parent gave it, a copy made with `dup`. Such calls are
//! left out of the recording and counted, the rest is recorded, and the recording replays.

mod common;

use std::path::Path;
use std::process::{Output, Stdio};

fn emmc5() -> serde_json::Value {
    serde_json::from_str(include_str!("../../joj-device/profiles/emmc5.json")).unwrap()
}

/// `joj device run --device PATH` of `profile` written to `dir/name.json`.
fn run_with_profile(dir: &Path, name: &str, profile: &serde_json::Value) -> Output {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, profile.to_string()).unwrap();
    common::joj_command()
        .args(["device", "run", "--requests", "10", "--device"])
        .arg(&path)
        .output()
        .unwrap()
}

#[test]
fn a_profile_whose_text_holds_control_characters_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = [
        ("esc", "evil\u{1b}[2J\u{1b}]0;pwned\u{7}"),
        ("cr", "emmc5\rgalaxy-s5"),
        ("newline", "emmc5\nsomething else"),
        ("tab", "emmc\t5"),
        ("nul", "emmc\u{0}5"),
        ("c1-csi", "emmc\u{9b}2J"),
        ("bidi-override", "emmc5\u{202e}lanigiro"),
        ("bidi-isolate", "emmc5\u{2067}x"),
    ];
    let galaxy: serde_json::Value =
        serde_json::from_str(include_str!("../../joj-device/profiles/galaxy-s5.json")).unwrap();
    for (what, text) in hostile {
        let mut cases = Vec::new();
        let mut p = emmc5();
        p["name"] = text.into();
        cases.push(("name", p));
        let mut p = emmc5();
        p["description"] = format!("an eMMC {text}").into();
        cases.push(("description", p));
        let mut p = emmc5();
        p["sources"][1] = format!("a datasheet {text}").into();
        cases.push(("sources[1]", p));
        let mut p = galaxy.clone();
        p["host"]["name"] = text.into();
        cases.push(("host.name", p));
        let mut p = galaxy.clone();
        p["host"]["sources"][0] = text.into();
        cases.push(("host.sources[0]", p));
        for (field, p) in cases {
            let out = run_with_profile(dir.path(), &format!("{what}-{field}"), &p);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_ne!(out.status.code(), Some(0), "{what} in {field}: {err}");
            assert!(
                err.contains(&format!("{field} ")) && err.contains("fix:"),
                "{what} in {field}: {err}"
            );
            for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                let printed = String::from_utf8_lossy(bytes);
                assert!(
                    !printed
                        .chars()
                        .any(|c| c == '\u{1b}' || c == '\u{9b}' || c == '\u{202e}'),
                    "{what} in {field}: an escape reached {stream}: {printed:?}"
                );
            }
        }
    }
}

#[test]
fn a_profile_name_longer_than_64_characters_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = emmc5();
    p["name"] = "é".repeat(64).into();
    let out = run_with_profile(dir.path(), "long-64", &p);
    assert!(
        out.status.success(),
        "64 characters (128 bytes) are a name: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (what, name) in [("long-65", "x".repeat(65)), ("empty", String::new())] {
        p["name"] = name.into();
        let out = run_with_profile(dir.path(), what, &p);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.contains("name ") && err.contains("64") && err.contains("fix:"),
            "{what}: {err}"
        );
    }
}

/// `joj syscalls record --root ROOT -o REC -- ARGV` working in `root`, with `stdin` and
/// `stdout` from files inside it (its parent's descriptors, which the program inherits).
fn record(root: &Path, rec: &Path, argv: &[&str]) -> Output {
    let stdin = std::fs::File::open(root.join("in.txt")).unwrap();
    let stdout = std::fs::File::create(root.join("out.txt")).unwrap();
    common::joj_command()
        .args(["syscalls", "record", "--root"])
        .arg(root)
        .arg("-o")
        .arg(rec)
        .arg("--")
        .args(argv)
        .current_dir(root)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_program_using_descriptors_it_did_not_open_is_recorded_and_replayed() {
    let Some((dir, root)) = common::recording_dirs() else {
        return;
    };
    std::fs::write(root.join("in.txt"), "input\n").unwrap();
    // `true --version` writes to its inherited stdout and closes it (coreutils' close_stdout);
    // the shell opens a file, copies the descriptor (dup2, which is not recorded), writes
    // through the copy and closes its inherited stdin.
    let programs: [&[&str]; 2] = [
        &["true", "--version"],
        &[
            "sh",
            "-c",
            "exec 3<>made; exec 4<&3; echo x >&4; exec 3<&- 4<&-; exec 0<&-; true",
        ],
    ];
    for (i, argv) in programs.iter().enumerate() {
        let rec = dir.path().join(format!("rec-{i}.jsonl"));
        let out = record(&root, &rec, argv);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{argv:?}: {err}");
        assert!(
            err.contains("did not open") && err.contains("descriptor"),
            "{argv:?}: the calls left out are said: {err}"
        );
        let header: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&rec)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert!(
            header["dropped_inherited"].as_u64().unwrap() > 0,
            "{argv:?}: {header}"
        );
        if let Err(stderr) = common::replay_on_ext4(&rec, dir.path()) {
            panic!("{argv:?}: the replay: {stderr}");
        }
    }
}
