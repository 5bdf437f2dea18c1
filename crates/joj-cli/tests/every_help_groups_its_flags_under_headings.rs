//! Every command's `--help` sorts its flags under joj's headings (Workload, Stack, Device,
//! Output, Mobibench compatibility), in that order; clap's own "Options" holds only `--help`.
//! The commands are found through `--help` itself, so a new one is checked too.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

const HEADINGS: [&str; 5] = [
    "Workload:",
    "Stack:",
    "Device:",
    "Output:",
    "Mobibench compatibility:",
];

fn help(command: &[&str]) -> String {
    let out = common::run_joj(&[command, &["--help"]].concat());
    assert!(out.status.success(), "{command:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a `--help` lists, `help` aside.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// The section titles of a `--help`, in order.
fn sections(help: &str) -> Vec<&str> {
    help.lines()
        .filter(|l| !l.starts_with(' ') && l.ends_with(':') && !l.starts_with("Usage"))
        .collect()
}

#[test]
fn every_help_groups_its_flags_under_headings() {
    let mut todo: Vec<Vec<String>> = subcommands(&help(&[]))
        .into_iter()
        .map(|c| vec![c])
        .collect();
    let mut checked = 0;
    while let Some(command) = todo.pop() {
        let words: Vec<&str> = command.iter().map(String::as_str).collect();
        let text = help(&words);
        for sub in subcommands(&text) {
            todo.push([command.clone(), vec![sub]].concat());
        }
        let options: Vec<&str> = text
            .lines()
            .skip_while(|l| *l != "Options:")
            .skip(1)
            .take_while(|l| !l.is_empty())
            .filter(|l| l.trim_start().starts_with('-'))
            .collect();
        assert!(
            options.iter().all(|l| l.contains("--help")),
            "joj {words:?}: flags under no heading: {options:?}"
        );
        let titles: Vec<&str> = sections(&text)
            .into_iter()
            .filter(|t| HEADINGS.contains(t))
            .collect();
        let mut in_order = titles.clone();
        in_order.sort_by_key(|t| HEADINGS.iter().position(|h| h == t));
        assert_eq!(titles, in_order, "joj {words:?}: headings out of order");
        checked += 1;
    }
    assert!(checked >= 24, "only {checked} commands found");
}
