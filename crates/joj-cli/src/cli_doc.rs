//! docs/cli.md's tables, made from the command line itself: every flag name once, with its one
//! meaning, its help heading and the commands that take it; and the renamed spellings. A test
//! checks that docs/cli.md holds exactly what this makes, so the page cannot drift from the
//! CLI; `JOJ_BLESS=1 cargo test -p joj-cli docs_cli_md` rewrites it.

use std::collections::{BTreeMap, BTreeSet};

/// The one meaning of every flag name (a long name, or a short one Mobibench has alone).
const MEANINGS: &[(&str, &str)] = &[
    (
        "--attached",
        "databases attached to each connection besides the main one",
    ),
    (
        "--autoincrement",
        "keys as `INTEGER PRIMARY KEY AUTOINCREMENT` (Mobibench before 2017)",
    ),
    ("--axis", "the x axis of a plot: time or sequence"),
    (
        "--bench-window",
        "the recording is of `joj bench --trace`: its two `syncfs` calls bound the measured window",
    ),
    (
        "--blocks-per-plane",
        "blocks per plane of the emulated device (resizes the profile)",
    ),
    (
        "--buffer-kib",
        "per-CPU size of the kernel's buffer of block events, in KiB",
    ),
    (
        "--canary",
        "a variant broken on purpose that the crash check must catch",
    ),
    (
        "--completion",
        "the host completion model: interrupt or poll (docs/polling.md)",
    ),
    (
        "--cpus-awake",
        "hold every CPU out of its idle states for the run",
    ),
    ("--cuts", "power cuts to make"),
    (
        "--data",
        "what an emulated device image stores: page data (full) or out-of-band areas only (oob)",
    ),
    ("--destroy-data", "allow writing over a block device"),
    (
        "--dev",
        "the device of a block trace to replay (`major:minor`)",
    ),
    (
        "--device",
        "the emulated device profile: a built-in name or a profile JSON file",
    ),
    (
        "--device-for",
        "one device of a trace and the profile it is replayed through (`DEV=PROFILE`)",
    ),
    (
        "--dir",
        "the directory the workload runs in (made when missing)",
    ),
    (
        "--emmc-journal",
        "the eMMC paper's optimized journal: each jbd2 transaction one packed reliable write",
    ),
    (
        "--empty",
        "run the traced command in an empty directory of the scratch filesystem",
    ),
    (
        "--fail-batch-one-in",
        "one batch commit in N fails, so SQLite retries it with a rollback journal",
    ),
    ("--file-kib", "file size per thread in KiB (file workloads)"),
    (
        "--file-sync",
        "how a file workload makes its writes durable",
    ),
    ("--flush-every", "a flush after every k-th write"),
    ("--force", "replace an existing output file"),
    (
        "--from-log",
        "check a saved joj-blocklog instead of recording a run",
    ),
    (
        "--fs",
        "the filesystem: `host` (a host directory) or a scratch filesystem joj makes on a loop device",
    ),
    ("--ftl", "the transactional FTL a device runs: xftl or iftl"),
    ("--fua-every", "every k-th write is a FUA write"),
    (
        "--gc-validity",
        "age the device so GC victims hold this percentage of valid pages",
    ),
    (
        "--honor-timestamps",
        "keep a trace's gaps between requests as idle time",
    ),
    (
        "--image-dir",
        "the directory the scratch filesystem images live in",
    ),
    ("--image-mib", "size of the scratch filesystem image in MiB"),
    (
        "--interval-ms",
        "interval between transactions in milliseconds",
    ),
    ("--io-size", "request size of a synthetic device workload"),
    (
        "--iodepth",
        "requests in flight from the host in a synthetic device workload",
    ),
    (
        "--journal",
        "SQLite's journal mode (or joj's: waldio, xftl, iftl)",
    ),
    (
        "--journal-device",
        "the profile the external journal device of ext4-extjournal is replayed through",
    ),
    (
        "--journal-region-mib",
        "size of the optimized journal's region in MiB",
    ),
    (
        "--json",
        "print one JSON document on stdout and nothing else",
    ),
    (
        "--judge-as",
        "judge crash states against the mode's window or against full durability",
    ),
    (
        "--keep-strace",
        "also keep strace's own output in this file",
    ),
    ("--keys", "key order: sequential or random"),
    (
        "--link-root",
        "the folder a report page's paper-figure links may lead into",
    ),
    (
        "--loop-direct-io",
        "attach the scratch loop devices with direct I/O",
    ),
    (
        "--max-delay-us",
        "how far after the failed command a power cut may come, in µs",
    ),
    ("--modes", "journal modes, comma-separated"),
    ("--name", "the name of a written device profile"),
    (
        "--no-pace",
        "do not run the host at the modeled device's speed",
    ),
    ("--op", "the operation: a SQLite one or a file access"),
    ("--ops", "operations, comma-separated"),
    (
        "--out",
        "the directory a run's files go to: traces, plots, logs, violating states",
    ),
    (
        "--output",
        "the file the command makes (a trace, recording, page or profile)",
    ),
    (
        "--overlay",
        "show the traced command its starting directory through an overlay even when it could be copied",
    ),
    (
        "--pace",
        "run the host at the modeled device's speed, or fail where that cannot be done",
    ),
    ("--page-size", "SQLite page size in bytes"),
    (
        "--pages-per-txn",
        "xftl-synthetic: rows read and updated per transaction",
    ),
    (
        "--partitions",
        "replay every device of a trace as a partition of one emulated device",
    ),
    (
        "--precondition",
        "fill the device before measuring: none, full, a percentage or a share",
    ),
    (
        "--prefill-kib",
        "pre-fill each table with at least this many KiB",
    ),
    (
        "--random-passes",
        "device capacities of random writes after the fill",
    ),
    ("--raw-gib", "raw NAND size of the emulated device in GiB"),
    ("--record-bytes", "bytes per record in SQLite workloads"),
    ("--record-kib", "record size in KiB (file workloads)"),
    (
        "--record-only",
        "record a run and save its log, checking no state",
    ),
    (
        "--report",
        "also write the HTML report page beside the run's files",
    ),
    ("--requests", "requests of a synthetic device workload"),
    (
        "--rl-divisor",
        "rl-bench: divide the benchmark's row and statement counts by this",
    ),
    ("--root", "the directory a recorded program worked in"),
    (
        "--rounds",
        "rounds, each running every operation in every mode once",
    ),
    ("--runs", "power cuts per mode"),
    (
        "--same-device-ok",
        "allow one profile for two devices of --device-for",
    ),
    ("--samples", "samples of each measured latency"),
    (
        "--save",
        "also write the command's JSON document to this file",
    ),
    (
        "--save-log",
        "save the recorded run's log even when no state violates",
    ),
    (
        "--seed",
        "the seed every random choice of a run comes from (default 42)",
    ),
    (
        "--shard",
        "check only the K-th of N shares of the crash states (`K/N`)",
    ),
    ("--size-mib", "size of the test file or region in MiB"),
    ("--start", "the state a run starts from: fresh or steady"),
    (
        "--statements",
        "statements on every table in each transaction",
    ),
    ("--states", "crash states to check"),
    (
        "--sync-call",
        "the system call joj's VFS issues when SQLite syncs: fdatasync or fsync",
    ),
    ("--synchronous", "SQLite's `PRAGMA synchronous`"),
    ("--tables", "tables per database"),
    ("--threads", "threads, each with its own database or file"),
    (
        "--timing",
        "when a replayed call runs: at its recorded time, or as soon as it may",
    ),
    ("--trace", "capture and classify the run's block requests"),
    (
        "--transactions",
        "the workload's transactions: how many run, or for a recorded command or a replayed trace how many it ran",
    ),
    ("--verbose", "say more in the text output"),
    ("--wakeup-us", "cost of one interrupt-driven wakeup in µs"),
    ("--warehouses", "tpcc-*: warehouses"),
    (
        "--workload",
        "the named workload a run executes (the choices are the command's)",
    ),
    ("-D", "Mobibench: databases in all"),
    ("-R", "Mobibench: random keys"),
    ("-a", "Mobibench: file access mode"),
    ("-d", "Mobibench: DB mode"),
    ("-f", "Mobibench: file size in KiB in all"),
    ("-n", "Mobibench: transactions in all"),
    ("-y", "Mobibench: file sync mode"),
];

/// How a flag name is used across the commands.
#[derive(Default)]
struct Use {
    /// Each short name the flag has, with the commands that take it: a command whose flag of
    /// this name has no short (or only a hidden old spelling, docs/cli.md's renamed table) is
    /// not among them.
    short: BTreeMap<char, Vec<String>>,
    headings: BTreeSet<String>,
    commands: Vec<String>,
}

/// Every visible flag of `cmd` and its subcommands, by name (`--long`, or `-x` for a flag
/// with a short name only).
fn uses(cmd: &clap::Command) -> BTreeMap<String, Use> {
    let mut found = BTreeMap::new();
    walk(cmd, "", &mut found);
    found
}

fn walk(cmd: &clap::Command, path: &str, found: &mut BTreeMap<String, Use>) {
    for arg in cmd.get_arguments() {
        if arg.is_hide_set()
            || arg.is_positional()
            || ["help", "version"].contains(&arg.get_id().as_str())
        {
            continue;
        }
        let name = match (arg.get_long(), arg.get_short()) {
            (Some(long), _) => format!("--{long}"),
            (None, Some(short)) => format!("-{short}"),
            (None, None) => continue,
        };
        let u = found.entry(name).or_default();
        if let (Some(_), Some(short)) = (arg.get_long(), arg.get_short()) {
            u.short.entry(short).or_default().push(path.to_string());
        }
        u.headings
            .insert(arg.get_help_heading().unwrap_or("-").to_string());
        u.commands.push(path.to_string());
    }
    for sub in cmd.get_subcommands() {
        if sub.get_name() != "help" {
            let path = format!("{path} {}", sub.get_name());
            walk(sub, path.trim(), found);
        }
    }
}

/// The commands a user runs: those without subcommands, by their words after `joj`.
pub fn leaf_commands(cmd: &clap::Command) -> Vec<String> {
    fn go(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        let subs: Vec<_> = cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .collect();
        if subs.is_empty()
            || !cmd
                .get_arguments()
                .all(|a| ["help", "version"].contains(&a.get_id().as_str()))
        {
            out.push(path.trim().to_string());
        }
        for sub in subs {
            go(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut out = Vec::new();
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        go(sub, sub.get_name(), &mut out);
    }
    out
}

/// The flag table of docs/cli.md, and the names it lacks a meaning for.
fn flag_table(cmd: &clap::Command) -> (String, Vec<String>) {
    let meanings: BTreeMap<&str, &str> = MEANINGS.iter().copied().collect();
    let mut missing = Vec::new();
    let mut t =
        String::from("| Flag | Short | Heading | Meaning | Commands |\n|---|---|---|---|---|\n");
    for (name, u) in uses(cmd) {
        let meaning = meanings.get(name.as_str()).copied().unwrap_or_else(|| {
            missing.push(name.clone());
            "?"
        });
        let short: Vec<String> = u
            .short
            .iter()
            .map(|(c, on)| format!("`-{c}` ({})", on.join(", ")))
            .collect();
        let headings: Vec<&str> = u.headings.iter().map(String::as_str).collect();
        t.push_str(&format!(
            "| `{name}` | {} | {} | {meaning} | {} |\n",
            short.join(" "),
            headings.join(", "),
            u.commands.join(", ")
        ));
    }
    (t, missing)
}

/// The renamed spellings table of docs/cli.md.
fn renamed_table() -> String {
    let mut t = String::from("| Command | Old spelling | New spelling |\n|---|---|---|\n");
    t.push_str("| `joj crash` (no subcommand) | `joj crash …` | `joj crash device …`, or `joj crash fs …` with `--fs`/`--from-log` |\n");
    for r in crate::renamed::RENAMED {
        t.push_str(&format!(
            "| `joj {}` | `{}` | `{}` |\n",
            r.command, r.old, r.new
        ));
    }
    t
}

/// Counts docs/cli.md gives: commands, flags over all commands, distinct names.
fn counts(cmd: &clap::Command) -> String {
    let u = uses(cmd);
    let flags: usize = u.values().map(|u| u.commands.len()).sum();
    format!(
        "{} runnable commands, {flags} flags over them, {} distinct flag names.\n",
        leaf_commands(cmd).len(),
        u.len()
    )
}

/// `doc` with the text between `<!-- begin NAME -->` and `<!-- end NAME -->` replaced by `body`.
fn fill(doc: &str, name: &str, body: &str) -> Option<String> {
    let begin = format!(
        "<!-- begin {name} (made by the CLI: JOJ_BLESS=1 cargo test -p joj-cli docs_cli_md) -->\n"
    );
    let end = format!("<!-- end {name} -->");
    let from = doc.find(&begin)? + begin.len();
    let to = from + doc[from..].find(&end)?;
    Some(format!("{}{body}{}", &doc[..from], &doc[to..]))
}

/// docs/cli.md with its made parts made anew from `cmd`, and the flag names without a meaning.
pub fn render(doc: &str, cmd: &clap::Command) -> (Option<String>, Vec<String>) {
    let (flags, missing) = flag_table(cmd);
    let doc = fill(doc, "counts", &counts(cmd))
        .and_then(|d| fill(&d, "flags", &flags))
        .and_then(|d| fill(&d, "renamed", &renamed_table()));
    (doc, missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn docs_cli_md_lists_every_flag_with_its_one_meaning() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
        let doc = std::fs::read_to_string(&path).expect("docs/cli.md");
        let cmd = crate::Cli::command();
        let (made, missing) = render(&doc, &cmd);
        assert!(
            missing.is_empty(),
            "flags without a meaning in cli_doc.rs MEANINGS: {missing:?}"
        );
        let named: BTreeSet<String> = uses(&cmd).into_keys().collect();
        let stale: Vec<&str> = MEANINGS
            .iter()
            .map(|m| m.0)
            .filter(|n| !named.contains(*n))
            .collect();
        assert!(
            stale.is_empty(),
            "meanings of flags no command has: {stale:?}"
        );
        let made = made.expect("docs/cli.md keeps its begin/end markers");
        if std::env::var_os("JOJ_BLESS").is_some() {
            std::fs::write(&path, &made).expect("write docs/cli.md");
            return;
        }
        assert!(
            made == doc,
            "docs/cli.md differs from the CLI; rerun with JOJ_BLESS=1 to rewrite it"
        );
    }

    /// Every (command, short flag) the Short column claims: a short with commands in
    /// parentheses works on those, one without on every command of its row.
    fn claimed_shorts(table: &str) -> Vec<(String, char)> {
        let mut claims = Vec::new();
        for line in table.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
            let (short, commands) = (cells[1].trim(), cells[cells.len() - 1].trim());
            for part in short.split("`-").skip(1) {
                let c = part.chars().next().expect("a short name");
                let on = part
                    .split_once('(')
                    .map_or(commands, |(_, rest)| rest.split(')').next().unwrap_or(""));
                for command in on.split(", ") {
                    claims.push((command.trim().to_string(), c));
                }
            }
        }
        claims
    }

    /// docs/cli.md claimed `-p` for `trace` and `-s` for `crash fs` because a flag's shorts
    /// were pooled over every command with its long name; clap refused both. Each short the
    /// table names must be one the command's `--help` shows and clap takes there.
    #[test]
    fn every_short_flag_the_table_names_works_on_each_command_it_names() {
        let cmd = crate::Cli::command();
        let (table, _) = flag_table(&cmd);
        let claims = claimed_shorts(&table);
        assert!(
            claims.iter().any(|(c, s)| c == "bench" && *s == 'p'),
            "the table names `-p` for bench: {claims:?}"
        );
        let mut wrong = Vec::new();
        for (command, short) in &claims {
            let words: Vec<&str> = command.split(' ').collect();
            let mut sub = &cmd;
            for w in &words {
                sub = sub
                    .find_subcommand(w)
                    .unwrap_or_else(|| panic!("no command `joj {command}`"));
            }
            let Some(arg) = sub.get_arguments().find(|a| a.get_short() == Some(*short)) else {
                wrong.push(format!("joj {command} has no visible -{short}"));
                continue;
            };
            let mut argv: Vec<String> = std::iter::once("joj")
                .chain(words.iter().copied())
                .map(String::from)
                .collect();
            argv.push(format!("-{short}"));
            if arg.get_num_args().is_some_and(|n| n.takes_values()) {
                let value = arg
                    .get_possible_values()
                    .first()
                    .map(|v| v.get_name().to_string())
                    .or_else(|| {
                        arg.get_default_values()
                            .first()
                            .map(|v| v.to_string_lossy().into_owned())
                    })
                    .unwrap_or_else(|| "1".into());
                argv.push(value);
            }
            if let Err(e) = crate::Cli::command().try_get_matches_from(&argv) {
                let said = e.to_string();
                if e.kind() == clap::error::ErrorKind::UnknownArgument
                    || said.contains(&format!("'-{short}'"))
                {
                    wrong.push(format!(
                        "{}: {}",
                        argv.join(" "),
                        said.lines().next().unwrap_or("")
                    ));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "short flags docs/cli.md names on a command that refuses them: {wrong:#?}"
        );
    }

    /// `-n -1` must reach the flag's own parser (one message naming the range), not be taken
    /// by clap for an unknown flag (`unexpected argument '-1'`).
    #[test]
    fn every_number_flag_takes_a_negative_number_to_refuse_it_itself() {
        use std::any::TypeId;
        let numbers = [
            TypeId::of::<u8>(),
            TypeId::of::<u16>(),
            TypeId::of::<u32>(),
            TypeId::of::<u64>(),
            TypeId::of::<usize>(),
            TypeId::of::<i32>(),
            TypeId::of::<i64>(),
            TypeId::of::<f32>(),
            TypeId::of::<f64>(),
        ];
        let mut without = Vec::new();
        fn go(cmd: &clap::Command, path: &str, numbers: &[TypeId], without: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let takes = arg.get_num_args().is_some_and(|n| n.takes_values());
                let number = numbers
                    .iter()
                    .any(|t| arg.get_value_parser().type_id() == *t);
                if takes && number && !arg.is_allow_negative_numbers_set() {
                    without.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                go(sub, &format!("{path} {}", sub.get_name()), numbers, without);
            }
        }
        let mut cmd = crate::Cli::command();
        cmd.build();
        go(&cmd, "joj", &numbers, &mut without);
        assert!(
            without.is_empty(),
            "number flags without allow_negative_numbers: {without:?}"
        );
    }

    #[test]
    fn every_flag_of_every_command_is_under_a_heading() {
        let mut bare = Vec::new();
        fn go(cmd: &clap::Command, path: &str, bare: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if arg.is_positional() || arg.is_hide_set() || id == "help" || id == "version" {
                    continue;
                }
                match arg.get_help_heading() {
                    Some(h) if crate::groups::HEADINGS.contains(&h) => {}
                    _ => bare.push(format!("{path} {id}")),
                }
            }
            for sub in cmd.get_subcommands() {
                go(sub, &format!("{path} {}", sub.get_name()), bare);
            }
        }
        go(&crate::Cli::command(), "joj", &mut bare);
        assert!(bare.is_empty(), "flags under no heading: {bare:?}");
    }
}
