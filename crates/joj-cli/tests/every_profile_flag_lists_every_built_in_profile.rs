//! The help of `--device` in `device run`, `device format` and `replay` listed four built-in
//! profiles while six are compiled in (openssd-iftl and zero-latency were missing). Every flag
//! that takes a profile (`<PROFILE>`, `<DEV=PROFILE>`), in every command, lists every built-in
//! profile: the files in crates/joj-device/profiles, read here so the test follows them.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

fn help(path: &[String]) -> String {
    let out = common::joj_command()
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{path:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists under `Commands:`, `help` left out.
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Each flag entry of a `--help` that takes a profile, with its help joined into one line.
fn profile_flags(text: &str) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('-') && line.len() - t.len() <= 6 {
            entries.push(t.to_string());
        } else if !line.starts_with(' ') {
            entries.push(String::new());
        } else if let Some(last) = entries.last_mut() {
            last.push(' ');
            last.push_str(t);
        }
    }
    entries
        .into_iter()
        .filter(|e| e.contains("PROFILE>"))
        .map(|e| e.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn every_profile_flag_lists_every_built_in_profile() {
    let mut builtins: Vec<String> = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../joj-device/profiles"
    ))
    .unwrap()
    .map(|e| e.unwrap().path())
    .filter(|p| p.extension().is_some_and(|x| x == "json"))
    .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
    .collect();
    builtins.sort();
    assert!(builtins.len() >= 6, "{builtins:?}");
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    let mut flags_seen = 0;
    while let Some(path) = todo.pop() {
        let text = help(&path);
        for sub in subcommands(&text) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
        for flag in profile_flags(&text) {
            flags_seen += 1;
            let missing: Vec<&String> = builtins
                .iter()
                .filter(|b| !flag.contains(&format!("{b},")) && !flag.contains(&format!("{b})")))
                .collect();
            assert!(
                missing.is_empty(),
                "joj {} lacks {missing:?}: {flag}",
                path.join(" ")
            );
        }
    }
    // bench, compare, syscalls, trace, replay (two), restart, crash device, device format,
    // inspect and run, apptxn.
    assert!(flags_seen >= 12, "{flags_seen} profile flags found");
}
