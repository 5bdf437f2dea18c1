//! The picture of a comparison: per mode, the bytes each transaction wrote by class, stacked
//! (the JOJ apart from the rest of the FS journal), and the flushes per transaction, drawn by
//! [`joj_trace::plot::render_compare_svg`] from the rows' figures. (The comparison itself does
//! not know its picture: this module depends on it, not the other way round.)

use std::io::Write;
use std::path::Path;

use joj_trace::output::OutputDir;
use joj_trace::plot::{ModeBar, render_compare_svg};
use joj_trace::{OutputError, TraceError};

use crate::compare::{CompareRow, Comparison};
use crate::error::ExperimentError;
use crate::stack::RunOptions;
use joj_workload::DbWorkload;

/// A traced row's figures per transaction; `None` for a row that was not traced.
pub fn bar_of(row: &CompareRow) -> Option<ModeBar> {
    let res = &row.result;
    let b = res.block_per_txn.as_ref()?;
    let n = res.transactions.max(1) as f64;
    let joj = res
        .fs_journal_by_synced_file
        .map(|f| (f.wal + f.rollback_journal) as f64 / n)
        .unwrap_or(0.0);
    Some(ModeBar {
        mode: row.mode.clone(),
        durability: row.durability.clone().unwrap_or_default(),
        database_bytes: b.data_by_role.database,
        log_bytes: b.data_by_role.wal + b.data_by_role.rollback_journal,
        metadata_bytes: b.metadata_bytes,
        fs_journal_bytes: b.fs_journal_bytes,
        joj_bytes: joj.min(b.fs_journal_bytes),
        flushes: b.flushes,
    })
}

/// The comparison's SVG, rendered in memory: a bar per traced row, and under the panels the
/// rows without one named, with why.
pub fn render(title: &str, subtitle: &str, c: &Comparison) -> Result<String, TraceError> {
    let bars: Vec<ModeBar> = c.rows.iter().filter_map(bar_of).collect();
    render_compare_svg(title, subtitle, &bars, &not_drawn(c))
}

/// The lines naming the rows that have no bar: those run on the device model itself (X-FTL,
/// i-FTL: no kernel trace, so no bytes by class), and any other row without block figures.
fn not_drawn(c: &Comparison) -> Vec<String> {
    let (on_device, untraced): (Vec<&CompareRow>, Vec<&CompareRow>) = c
        .rows
        .iter()
        .filter(|r| bar_of(r).is_none())
        .partition(|r| r.result.device.is_some() && r.result.block.is_none());
    let names = |rows: &[&CompareRow]| {
        rows.iter()
            .map(|r| r.mode.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut lines = Vec::new();
    if !on_device.is_empty() {
        lines.push(format!(
            "not drawn: {} (run on the device model itself: no kernel trace, so no bytes by \
             class; the table gives their figures)",
            names(&on_device)
        ));
    }
    if !untraced.is_empty() {
        lines.push(format!(
            "not drawn: {} (not traced: no block figures)",
            names(&untraced)
        ));
    }
    lines
}

/// Whether the comparison has a waldio row (`waldio`, `waldio-gs`, …).
fn has_waldio(c: &Comparison) -> bool {
    c.rows.iter().any(|r| r.mode.starts_with("waldio"))
}

/// With an output folder in `opts`, draw `c` there as `compare-<fs>-<op>.svg` (`-2`, … when
/// taken) and name the file in `c.plot_file`.
pub fn write_beside(
    c: &mut Comparison,
    base: &DbWorkload,
    opts: &RunOptions,
) -> Result<(), ExperimentError> {
    let Some(out) = &opts.out_dir else {
        return Ok(());
    };
    let name = format!("compare-{}-{}", opts.fs.name(), base.name());
    let title = format!(
        "{} on {}: the journal modes side by side, {} transactions",
        base.name(),
        opts.fs.name(),
        base.transactions
    );
    let waldio = if has_waldio(c) {
        " (waldio rows: as their durability says)"
    } else {
        ""
    };
    let subtitle = format!(
        "synchronous={}{waldio}; the JOJ: FS journal written while SQLite synced its log",
        base.synchronous
    );
    c.plot_file = Some(write(out, &name, &title, &subtitle, c)?);
    Ok(())
}

/// Write `<name>.svg` into `out` (`<name>-2.svg`, … when taken) and return its path.
fn write(
    out: &Path,
    name: &str,
    title: &str,
    subtitle: &str,
    c: &Comparison,
) -> Result<String, ExperimentError> {
    let svg = render(title, subtitle, c)?;
    let held = OutputDir::open(out).map_err(TraceError::from)?;
    let file = format!("{name}.svg");
    let staged = held.stage(&file, |w| {
        w.write_all(svg.as_bytes()).map_err(|source| {
            TraceError::from(OutputError::Write {
                path: out.join(&file),
                source,
            })
        })
    })?;
    let [path] = held
        .publish_unique(name, [(".svg", staged)])
        .map_err(TraceError::from)?;
    Ok(path.to_string_lossy().into_owned())
}
