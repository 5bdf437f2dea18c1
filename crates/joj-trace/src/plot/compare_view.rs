//! Journal modes side by side: per mode, the bytes each transaction wrote by class, stacked,
//! with the FS journal written while SQLite synced its log (the journaling of journal) apart
//! from the rest of the FS journal; and the flushes per transaction beside them.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::style::{BLUE, GREEN, GREY, INK, ORANGE, PURPLE, plot_error};
use crate::error::TraceError;

const WIDTH_PX: u32 = 1400;
const HEIGHT_PX: u32 = 720;
/// The bytes panel's share of the width; the flushes panel takes the rest.
const BYTES_WIDTH_PX: u32 = 940;

/// One mode's figures per transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeBar {
    /// `wal`, `delete`, `waldio-gs`, …
    pub mode: String,
    /// What an acknowledged commit survives: `full`, `normal (2 ms window)`, …
    pub durability: String,
    pub database_bytes: f64,
    /// WAL or rollback journal data.
    pub log_bytes: f64,
    pub metadata_bytes: f64,
    /// All FS journal, of which `joj_bytes` was written while SQLite synced its log.
    pub fs_journal_bytes: f64,
    pub joj_bytes: f64,
    pub flushes: f64,
}

/// The largest figure per transaction a bar is drawn with: 1 TiB written, a million flushes
/// (a document saying more was not made by a run; the axis code of the plotting library loops
/// without end on an infinite range, so such figures are refused before it sees them).
const MAX_BYTES_PER_TXN: f64 = (1u64 << 40) as f64;
const MAX_FLUSHES_PER_TXN: f64 = 1e6;

/// Why `b` cannot be drawn, if it cannot.
fn undrawable(b: &ModeBar) -> Option<String> {
    let parts = [
        ("database data", b.database_bytes),
        ("log data", b.log_bytes),
        ("metadata", b.metadata_bytes),
        ("FS journal", b.fs_journal_bytes),
        ("JOJ", b.joj_bytes),
    ];
    let total: f64 = parts.iter().map(|(_, v)| v).sum();
    if let Some((what, v)) = parts
        .iter()
        .find(|(_, v)| !v.is_finite() || *v < 0.0)
        .copied()
        .or((total > MAX_BYTES_PER_TXN).then_some(("bytes in all", total)))
    {
        return Some(format!(
            "{}: {what} per transaction is {v}, not a figure between 0 and {} bytes a run makes",
            b.mode, MAX_BYTES_PER_TXN
        ));
    }
    (!(0.0..=MAX_FLUSHES_PER_TXN).contains(&b.flushes)).then(|| {
        format!(
            "{}: {} flushes per transaction, not a figure between 0 and {MAX_FLUSHES_PER_TXN}",
            b.mode, b.flushes
        )
    })
}

/// The stacked parts of a bar, bottom to top: name, colour, bytes.
fn parts(b: &ModeBar) -> [(&'static str, RGBColor, f64); 5] {
    let other_journal = (b.fs_journal_bytes - b.joj_bytes).max(0.0);
    [
        ("database data", BLUE, b.database_bytes),
        ("log data (WAL or rollback journal)", ORANGE, b.log_bytes),
        ("FS metadata", GREEN, b.metadata_bytes),
        (
            "FS journal while the log was synced (the JOJ)",
            RGBColor(160, 40, 120),
            b.joj_bytes,
        ),
        ("other FS journal", PURPLE, other_journal),
    ]
}

/// The most modes drawn side by side: the panels are a fixed width, and past this many a mode's
/// name no longer fits under its bar (`joj compare` runs nine by default). A comparison of more
/// draws the first ones and says so in its subtitle, so the picture stays the same size.
pub const MAX_MODE_BARS: usize = 16;

/// Render the comparison to an SVG document in memory: the first [`MAX_MODE_BARS`] of `bars`.
pub fn render_compare_svg(
    title: &str,
    subtitle: &str,
    bars: &[ModeBar],
) -> Result<String, TraceError> {
    let more;
    let (bars, subtitle) = if bars.len() > MAX_MODE_BARS {
        more = format!(
            "{subtitle} — the first {MAX_MODE_BARS} of {} modes (the table lists them all)",
            bars.len()
        );
        (&bars[..MAX_MODE_BARS], more.as_str())
    } else {
        (bars, subtitle)
    };
    if let Some(why) = bars.iter().find_map(undrawable) {
        return Err(TraceError::Plot {
            part: "the figures",
            message: why,
        });
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error("the background"))?;
        let area = root
            .titled(title, ("sans-serif", 22).into_font().color(&INK))
            .map_err(plot_error("the title"))?
            .titled(subtitle, ("sans-serif", 15).into_font().color(&GREY))
            .map_err(plot_error("the subtitle"))?;
        let (left, right) = area.split_horizontally(BYTES_WIDTH_PX);
        draw_bytes(&left, bars)?;
        draw_flushes(&right, bars)?;
        root.present().map_err(plot_error("writing out the SVG"))?;
    }
    Ok(super::style::well_formed(svg))
}

/// A mode's durability in two short lines under its bar: the level (`full`, `group ≤ 2 ms`)
/// and, when it has one, what its parenthesis says (`SQLite normal`), each cut to fit.
fn durability_lines(b: &ModeBar) -> (String, String) {
    let fit = |s: &str| s.chars().take(18).collect::<String>();
    match b.durability.split_once(" (") {
        Some((level, rest)) => (fit(level), fit(rest.trim_end_matches(')'))),
        None => (fit(&b.durability), String::new()),
    }
}

/// Text centred on `x` (in data units) below the axis: `dy` pixels down.
fn under_bar(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    x: f64,
    text: &str,
    dy: i32,
    style: TextStyle<'_>,
) -> Result<(), TraceError> {
    let dx = -(text.chars().count() as i32) * 3;
    chart
        .draw_series(std::iter::once(
            EmptyElement::at((x, 0.0)) + Text::new(text.to_string(), (dx, dy), style),
        ))
        .map_err(plot_error("a bar's label"))?;
    Ok(())
}

fn draw_bytes(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    bars: &[ModeBar],
) -> Result<(), TraceError> {
    let kib = 1024.0;
    let top = bars
        .iter()
        .map(|b| parts(b).iter().map(|p| p.2).sum::<f64>() / kib)
        .fold(1.0, f64::max)
        * 1.18;
    let n = bars.len().max(1);
    let mut chart = ChartBuilder::on(area)
        .caption("KiB written per transaction, by class", ("sans-serif", 16))
        .margin(12)
        // Room between the caption and the bars for the legend's row.
        .set_label_area_size(LabelAreaPosition::Top, 28)
        .x_label_area_size(60)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n as f64, 0.0..top)
        .map_err(plot_error("the bytes panel's axes"))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(8)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .y_desc("KiB per transaction")
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .draw()
        .map_err(plot_error("the bytes panel's grid"))?;
    for (i, b) in bars.iter().enumerate() {
        let (x0, x1) = (i as f64 + 0.18, i as f64 + 0.82);
        let mut y = 0.0;
        for (_, color, bytes) in parts(b) {
            let h = bytes / kib;
            if h > 0.0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x0, y), (x1, y + h)],
                        color.filled(),
                    )))
                    .map_err(plot_error("a bar"))?;
            }
            y += h;
        }
        let total = format!("{y:.1}");
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((i as f64 + 0.5, y))
                    + Text::new(
                        total,
                        (-14, -18),
                        ("sans-serif", 13).into_font().color(&INK),
                    ),
            ))
            .map_err(plot_error("a bar's total"))?;
        let x = i as f64 + 0.5;
        under_bar(
            &mut chart,
            x,
            &b.mode,
            8,
            ("sans-serif", 13).into_font().color(&INK),
        )?;
        let (level, why) = durability_lines(b);
        for (text, dy) in [(level, 26), (why, 40)] {
            under_bar(
                &mut chart,
                x,
                &text,
                dy,
                ("sans-serif", 11).into_font().color(&GREY),
            )?;
        }
    }
    draw_legend(area, bars)
}

/// The legend: the parts some mode has, one row between the panel's caption and its bars,
/// hiding nothing.
fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    bars: &[ModeBar],
) -> Result<(), TraceError> {
    let present: Vec<(&str, RGBColor)> = parts(&bars.first().cloned().unwrap_or(ModeBar {
        mode: String::new(),
        durability: String::new(),
        database_bytes: 0.0,
        log_bytes: 0.0,
        metadata_bytes: 0.0,
        fs_journal_bytes: 0.0,
        joj_bytes: 0.0,
        flushes: 0.0,
    }))
    .iter()
    .enumerate()
    .filter(|(k, _)| bars.iter().any(|b| parts(b)[*k].2 > 0.0))
    .map(|(_, p)| (p.0, p.1))
    .collect();
    // The legend: one row between the panel's caption and its bars, hiding nothing.
    let mut x = 78;
    for (name, color) in present {
        let y = 42;
        area.draw(&Rectangle::new([(x, y), (x + 12, y + 12)], color.filled()))
            .map_err(plot_error("the legend"))?;
        area.draw_text(
            name,
            &("sans-serif", 12).into_font().color(&INK),
            (x + 16, y),
        )
        .map_err(plot_error("the legend"))?;
        x += 16 + name.chars().count() as i32 * 6 + 14;
    }
    Ok(())
}

fn draw_flushes(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    bars: &[ModeBar],
) -> Result<(), TraceError> {
    let top = bars.iter().map(|b| b.flushes).fold(1.0, f64::max) * 1.2;
    let n = bars.len().max(1);
    let mut chart = ChartBuilder::on(area)
        .caption("cache flushes per transaction", ("sans-serif", 16))
        .margin(12)
        .set_label_area_size(LabelAreaPosition::Top, 28)
        .x_label_area_size(60)
        .y_label_area_size(44)
        .build_cartesian_2d(0.0..n as f64, 0.0..top)
        .map_err(plot_error("the flushes panel's axes"))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(6)
        .y_label_formatter(&|v| format!("{v:.1}"))
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(plot_error("the flushes panel's grid"))?;
    for (i, b) in bars.iter().enumerate() {
        let (x0, x1) = (i as f64 + 0.2, i as f64 + 0.8);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x1, b.flushes)],
                INK.filled(),
            )))
            .map_err(plot_error("a flush bar"))?;
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((i as f64 + 0.5, b.flushes))
                    + Text::new(
                        format!("{:.2}", b.flushes),
                        (-12, -18),
                        ("sans-serif", 12).into_font().color(&INK),
                    ),
            ))
            .map_err(plot_error("a flush bar's value"))?;
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((i as f64 + 0.5, 0.0))
                    + Text::new(
                        b.mode.clone(),
                        (-(b.mode.chars().count() as i32) * 3, 8),
                        ("sans-serif", 11).into_font().color(&INK),
                    ),
            ))
            .map_err(plot_error("a flush bar's mode"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(mode: &str, durability: &str, log: f64, jnl: f64, joj: f64, flushes: f64) -> ModeBar {
        ModeBar {
            mode: mode.into(),
            durability: durability.into(),
            database_bytes: 0.0,
            log_bytes: log * 1024.0,
            metadata_bytes: 0.0,
            fs_journal_bytes: jnl * 1024.0,
            joj_bytes: joj * 1024.0,
            flushes,
        }
    }

    #[test]
    fn modes_stand_side_by_side_with_totals_durability_and_flushes() {
        let svg = render_compare_svg(
            "insert on ext4",
            "1000 transactions",
            &[
                bar("wal", "full", 8.2, 21.8, 21.8, 1.96),
                bar("waldio-gs", "group ≤ 2 ms", 4.2, 0.0, 0.0, 0.26),
            ],
        )
        .unwrap();
        for text in [
            "KiB written per transaction, by class",
            "cache flushes per transaction",
            "FS journal while the log was synced (the JOJ)",
            "30.0",
            "4.2",
            "1.96",
            "0.26",
            "group ≤ 2 ms",
            "waldio-gs",
        ] {
            assert!(svg.contains(text), "missing {text:?}");
        }
        // A part no mode has is not in the legend.
        assert!(!svg.contains("FS metadata"));
    }

    #[test]
    fn figures_no_run_makes_are_refused_before_the_axes_are_computed() {
        // Two finite parts whose sum is infinite: the plotting library's axis code looped for
        // ever on it (a saved document fed to `joj report`).
        for b in [
            bar("wal", "full", 1e305, 1e305, 0.0, 1.0),
            bar("wal", "full", f64::NAN, 0.0, 0.0, 1.0),
            bar("wal", "full", -1.0, 0.0, 0.0, 1.0),
            bar("wal", "full", 8.0, 20.0, 20.0, f64::INFINITY),
        ] {
            let err = render_compare_svg("t", "s", &[b]).unwrap_err();
            assert!(err.to_string().contains("per transaction"), "{err}");
        }
    }

    #[test]
    fn a_comparison_of_more_modes_than_fit_draws_the_first_and_says_so() {
        // A saved comparison of 200 rows (`joj report` draws any document it is given): the
        // picture keeps its size, and its subtitle says what is left out.
        let bars: Vec<ModeBar> = (0..200)
            .map(|i| bar(&format!("mode{i}"), "full", 8.0, 20.0, 20.0, 2.0))
            .collect();
        let svg = render_compare_svg("t", "s", &bars).unwrap();
        assert!(
            svg.contains("s — the first 16 of 200 modes (the table lists them all)"),
            "the subtitle says how many modes are drawn"
        );
        assert!(svg.contains("mode15") && !svg.contains("mode16"));
        let one = render_compare_svg("t", "s", &bars[..1]).unwrap();
        assert!(
            svg.len() < one.len() * 8,
            "{} bytes, one mode {}",
            svg.len(),
            one.len()
        );
    }
}
