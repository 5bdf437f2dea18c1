//! A trace plot answers at a glance: each class present in a lane of its own labelled with its
//! total, none that is absent; flushes as a count and a rate, readable at thousands; what was
//! written so far beside it; integer axes with units.

use joj_trace::plot::{PlotAxis, render_svg};
use joj_trace::{BlockClass, FileRole, Op, TraceRecord};

fn rec(
    i: u64,
    op: Op,
    sector: u64,
    sectors: u64,
    class: BlockClass,
    file: Option<FileRole>,
) -> TraceRecord {
    TraceRecord {
        class,
        file,
        ..TraceRecord::new(1_000_000 + i * 500_000, "7:0", op, sector, sectors)
    }
}

/// A DELETE-mode-like trace: per commit, rollback journal data, database data, FS journal and
/// four flushes, 1000 commits.
fn delete_mode() -> Vec<TraceRecord> {
    let mut v = Vec::new();
    for c in 0..1000u64 {
        let t = c * 10;
        v.push(rec(
            t,
            Op::Write,
            270_000 + c * 8,
            16,
            BlockClass::Data,
            Some(FileRole::RollbackJournal),
        ));
        v.push(rec(t + 1, Op::Flush, 0, 0, BlockClass::Flush, None));
        v.push(rec(
            t + 2,
            Op::Write,
            2048,
            8,
            BlockClass::Data,
            Some(FileRole::Database),
        ));
        v.push(rec(
            t + 3,
            Op::Write,
            1_050_000 + c * 64,
            64,
            BlockClass::FsJournal,
            None,
        ));
        for k in 4..7 {
            v.push(rec(t + k, Op::Flush, 0, 0, BlockClass::Flush, None));
        }
    }
    v
}

fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>'))
        .filter_map(|(_, rest)| rest.split_once("</text>"))
        .map(|(text, _)| text.trim().to_string())
        .collect()
}

#[test]
fn each_class_present_is_labelled_with_its_total_and_none_absent() {
    let t = texts(&render_svg("ext4 · python3 app.py", &delete_mode(), PlotAxis::Time).unwrap());
    let has = |s: &str| t.iter().any(|x| x.contains(s));
    assert!(has("rollback journal data — 7.8 MiB"), "{t:?}");
    assert!(has("database data — 3.9 MiB"), "{t:?}");
    assert!(has("FS journal — 31.2 MiB"), "{t:?}");
    for absent in [
        "WAL data",
        "FS metadata",
        "other file data",
        "unclassified",
        "read",
    ] {
        assert!(!has(absent), "{absent} is not in the trace: {t:?}");
    }
}

#[test]
fn four_thousand_flushes_are_a_count_and_a_rate_not_a_black_bar() {
    let svg = render_svg("t", &delete_mode(), PlotAxis::Time).unwrap();
    let t = texts(&svg);
    assert!(
        t.iter()
            .any(|x| x.contains("cache flushes (incl. preflush) — 4,000")),
        "{t:?}"
    );
    assert!(t.iter().any(|x| x.contains("flushes per ms")), "{t:?}");
    // A bar per time bin (ink-filled rectangles), not a tick per flush.
    let bars = svg.matches(r##"fill="#1E1E1E""##).count();
    assert!(bars > 0 && bars <= 200, "{bars} bars for 4000 flushes");
}

#[test]
fn axes_read_as_integers_with_units_and_what_was_written_so_far_is_beside() {
    let t = texts(&render_svg("t", &delete_mode(), PlotAxis::Time).unwrap());
    assert!(
        t.iter().any(|x| x == "time since the first request (ms)"),
        "{t:?}"
    );
    assert!(
        t.iter()
            .any(|x| x.starts_with("block address (4 KiB blocks)")),
        "{t:?}"
    );
    assert!(
        t.iter().any(|x| x == "5,000"),
        "integer time labels with separators: {t:?}"
    );
    assert!(!t.iter().any(|x| x == "1000.0" || x == "5000.0"), "{t:?}");
    // No axis, the flush rate's included, labels a whole number with a decimal.
    assert!(!t.iter().any(|x| x.ends_with(".0")), "{t:?}");
    assert!(
        t.iter().any(|x| x.starts_with("written so far: 43.0 MiB")),
        "{t:?}"
    );
}
