//! `joj compare` says each row's durability (waldio-gs runs SQLite at synchronous=normal and
//! relies on group sync: its row says so, not the header's `full`), says which mode it is
//! running as it goes (even when stderr is no terminal), and draws the modes side by side:
//! bytes per transaction by class, stacked, and flushes per transaction; `--report` writes the
//! report page beside them, under a name of its own (a page already there is kept).

mod common;

#[test]
fn compare_shows_durability_progress_and_the_modes_side_by_side() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    // Someone's page at the name the report would take: kept, the report takes the next name.
    let theirs = out.path().join("compare-ext4-insert.html");
    std::fs::write(&theirs, "someone's page").unwrap();
    let run = common::joj_command()
        .args([
            "compare",
            "--fs",
            "ext4",
            "-n",
            "40",
            "--modes",
            "wal,delete,waldio-gs",
            "--report",
            "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{err}");
    for (i, mode) in ["wal", "delete", "waldio-gs"].iter().enumerate() {
        assert!(
            err.contains(&format!("compare: {mode} ({} of 3)", i + 1)),
            "progress for {mode}: {err}"
        );
    }
    let header = text
        .lines()
        .find(|l| l.starts_with("mode"))
        .expect("a header");
    assert!(header.contains("durability"), "{header}");
    let row = |m: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(m))
            .unwrap_or_else(|| panic!("no {m} row: {text}"))
    };
    assert!(row("wal").contains(" full "), "{}", row("wal"));
    assert!(
        row("waldio-gs").contains("group ≤ 2 ms"),
        "{}",
        row("waldio-gs")
    );
    assert!(text.contains("durability: full = every commit is durable when it returns"));
    // The key explains the labels the rows show, and only those.
    assert!(
        text.contains("group ≤ N ms = commits are written"),
        "{text}"
    );
    for absent in ["full (normal) =", "full (SQLite …) =", "none ="] {
        assert!(!text.contains(absent), "no row is {absent}: {text}");
    }
    let plot = out.path().join("compare-ext4-insert.svg");
    let svg = std::fs::read_to_string(&plot).unwrap_or_else(|e| panic!("{}: {e}", plot.display()));
    for s in [
        "KiB written per transaction, by class",
        "cache flushes per transaction",
        "the JOJ",
        "waldio-gs",
        "group ≤ 2 ms",
    ] {
        assert!(svg.contains(s), "the side-by-side plot lacks {s:?}");
    }
    assert!(text.contains(&format!(
        "plot of the modes side by side: {}",
        plot.display()
    )));
    // --report: the page beside the trace, named after the plot, and not over someone's page.
    assert!(
        std::fs::read_to_string(&theirs).unwrap() == "someone's page",
        "--report replaced a page it did not write"
    );
    let page = out.path().join("compare-ext4-insert-2.html");
    let html = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    assert!(html.contains("group ≤ 2 ms (SQLite normal)") && html.contains("What this means"));
    // The page names where its result came from: the run, not the page itself.
    assert!(
        html.contains("from the run this page was written for (--report)")
            && !html.contains("compare-ext4-insert-2.html</p>"),
        "{html}"
    );
    assert!(
        err.contains(&format!("report: {}", page.display())),
        "{err}"
    );
}

/// A row run on the device model itself (X-FTL, i-FTL) has no kernel trace, so no bar: the plot
/// names it and says why, instead of leaving it out unsaid; and its subtitle speaks of waldio
/// rows only when there are some.
#[test]
fn the_side_by_side_plot_names_the_rows_it_cannot_draw() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .args([
            "compare",
            "--fs",
            "ext4",
            "--device",
            "galaxy-s5",
            "--workload",
            "xftl-synthetic",
            "--pages-per-txn",
            "5",
            "--page-size",
            "8192",
            "-n",
            "30",
            "--modes",
            "wal,xftl",
            "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let plot = out.path().join("compare-ext4-xftl-synthetic.svg");
    let svg = std::fs::read_to_string(&plot).unwrap_or_else(|e| panic!("{}: {e}", plot.display()));
    assert!(
        svg.contains("not drawn: xftl (run on the device model itself: no kernel trace"),
        "the plot does not say that the xftl row is left out, nor why: {svg}"
    );
    assert!(
        !svg.contains("waldio rows"),
        "the subtitle speaks of waldio rows in a comparison without any"
    );
}
