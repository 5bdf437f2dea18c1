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

/// A part of a bar under this share of the bytes axis is about a pixel high: no one sees it,
/// so the legend does not list it (a note under the panels says it instead).
const VISIBLE_SHARE: f64 = 1.0 / 400.0;
/// The height of a line of the notes under the panels.
const NOTE_LINE_PX: u32 = 18;
/// Room right of the flushes panel, so that its frame does not touch the picture's edge.
const RIGHT_EDGE_PX: u32 = 36;

/// Render the comparison to an SVG document in memory: the first [`MAX_MODE_BARS`] of `bars`,
/// with `notes` (rows the caller could not draw, and why) a line each under the panels.
pub fn render_compare_svg(
    title: &str,
    subtitle: &str,
    bars: &[ModeBar],
    notes: &[String],
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
        let mut notes = notes.to_vec();
        notes.extend(too_thin_note(bars));
        let (_, h) = area.dim_in_pixel();
        let notes_px = if notes.is_empty() {
            0
        } else {
            NOTE_LINE_PX * notes.len() as u32 + 10
        };
        let (panels, under) = area.split_vertically(h.saturating_sub(notes_px));
        let (left, right) = panels.split_horizontally(BYTES_WIDTH_PX);
        draw_bytes(&left, bars)?;
        draw_flushes(&right, bars)?;
        for (i, note) in notes.iter().enumerate() {
            under
                .draw_text(
                    note,
                    &("sans-serif", 15).into_font().color(&GREY),
                    (16, 4 + i as i32 * NOTE_LINE_PX as i32),
                )
                .map_err(plot_error("a note under the panels"))?;
        }
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
    let top = bytes_top_kib(bars);
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

/// The top of the bytes axis: the tallest bar and room above it for its total.
fn bytes_top_kib(bars: &[ModeBar]) -> f64 {
    bars.iter()
        .map(|b| parts(b).iter().map(|p| p.2).sum::<f64>() / 1024.0)
        .fold(1.0, f64::max)
        * 1.18
}

/// Per part (in [`parts`]' order), the most bytes per transaction any bar has of it.
fn most_of_each_part(bars: &[ModeBar]) -> [f64; 5] {
    let mut most = [0.0f64; 5];
    for b in bars {
        for (m, p) in most.iter_mut().zip(parts(b)) {
            *m = m.max(p.2);
        }
    }
    most
}

/// Whether a part of `bytes` per transaction shows on a bar, the axis going up to `top_kib`.
fn visible(bytes: f64, top_kib: f64) -> bool {
    bytes / 1024.0 >= top_kib * VISIBLE_SHARE
}

/// The note naming the parts some mode has but no bar shows (each under a pixel high).
fn too_thin_note(bars: &[ModeBar]) -> Option<String> {
    let top = bytes_top_kib(bars);
    let names = parts(bars.first()?).map(|p| p.0);
    let thin: Vec<String> = most_of_each_part(bars)
        .iter()
        .zip(names)
        .filter(|(most, _)| **most > 0.0 && !visible(**most, top))
        .map(|(most, name)| format!("{name} (at most {:.3} KiB)", most / 1024.0))
        .collect();
    (!thin.is_empty()).then(|| {
        format!(
            "too thin to see on these bars, so not in the legend: {} per transaction",
            thin.join(", ")
        )
    })
}

/// About how wide `text` is in plotters' sans-serif font of `size` (the SVG backend cannot
/// measure it, and plotters' own estimate gives every letter one width): for the legend's
/// spacing. plotters writes a font of size `s` as `font-size` `s / 1.24`.
fn text_width_px(text: &str, size: f64) -> i32 {
    let px = size / 1.24;
    let ems: f64 = text
        .chars()
        // Widths in ems of Arial's and Liberation Sans's letters, near enough: the legend's
        // names measured 61, 143, 196 and 69 px in Chromium; this gives 61, 143, 200 and 70.
        .map(|c| match c {
            'i' | 'j' | 'l' => 0.22,
            '.' | ',' | '\'' | '|' | '!' | ':' | ';' | ' ' | 'f' | 't' => 0.28,
            'r' | '(' | ')' | '[' | ']' | '-' | 'I' => 0.33,
            'c' | 'k' | 's' | 'v' | 'x' | 'y' | 'z' => 0.5,
            'm' | 'M' => 0.83,
            'w' | 'W' => 0.72,
            c if c.is_ascii_uppercase() => 0.68,
            _ => 0.556,
        })
        .sum();
    (ems * px).ceil() as i32
}

/// The legend: the parts some bar shows, one row between the panel's caption and its bars,
/// evenly spaced.
fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    bars: &[ModeBar],
) -> Result<(), TraceError> {
    let Some(first) = bars.first() else {
        return Ok(());
    };
    let top = bytes_top_kib(bars);
    let shown: Vec<(&str, RGBColor)> = parts(first)
        .iter()
        .zip(most_of_each_part(bars))
        .filter(|(_, most)| *most > 0.0 && visible(*most, top))
        .map(|(p, _)| (p.0, p.1))
        .collect();
    let mut x = 78;
    for (name, color) in shown {
        let y = 42;
        area.draw(&Rectangle::new([(x, y), (x + 12, y + 12)], color.filled()))
            .map_err(plot_error("the legend"))?;
        area.draw_text(
            name,
            &("sans-serif", 12).into_font().color(&INK),
            (x + 17, y),
        )
        .map_err(plot_error("the legend"))?;
        x += 17 + text_width_px(name, 12.0) + 24;
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
        .margin_right(RIGHT_EDGE_PX)
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
    use crate::plot::svg_texts as texts;

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
            &[],
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

    /// ext4's truncate row of `joj compare -n 1000` wrote 8 KiB of FS metadata in all: 8 B per
    /// transaction on a bar of 68.8 KiB, a sliver no one sees. The legend names the classes a
    /// bar shows, not that one (issue 34); the metadata is said in a note instead.
    #[test]
    fn the_legend_lists_only_the_classes_a_bar_shows() {
        let mut truncate = bar("truncate", "full", 24.1, 44.7, 43.9, 6.03);
        truncate.metadata_bytes = 8.2;
        let svg = render_compare_svg(
            "insert on ext4",
            "1000 transactions",
            &[bar("wal", "full", 8.4, 19.0, 18.9, 1.95), truncate],
            &[],
        )
        .unwrap();
        let texts = texts(&svg);
        assert!(
            !texts.iter().any(|t| t == "FS metadata"),
            "a legend entry for FS metadata, which no bar shows: {texts:?}"
        );
        for shown in [
            "log data (WAL or rollback journal)",
            "FS journal while the log was synced (the JOJ)",
            "other FS journal",
        ] {
            assert!(
                texts.iter().any(|t| t == shown),
                "no legend entry {shown:?}"
            );
        }
        assert!(
            texts.iter().any(|t| t
                == "too thin to see on these bars, so not in the legend: FS metadata (at most \
                    0.008 KiB) per transaction"),
            "no note for the metadata: {texts:?}"
        );
    }

    /// Rows the caller could not draw are named under the panels, a line each.
    #[test]
    fn the_notes_are_drawn_under_the_panels() {
        let note = "not drawn: xftl (run on the device model itself: no kernel trace)";
        let svg = render_compare_svg(
            "t",
            "s",
            &[bar("wal", "full", 8.4, 19.0, 18.9, 1.95)],
            &[note.to_string()],
        )
        .unwrap();
        assert!(texts(&svg).iter().any(|t| t == note), "{svg}");
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
            let err = render_compare_svg("t", "s", &[b], &[]).unwrap_err();
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
        let svg = render_compare_svg("t", "s", &bars, &[]).unwrap();
        assert!(
            svg.contains("s — the first 16 of 200 modes (the table lists them all)"),
            "the subtitle says how many modes are drawn"
        );
        assert!(svg.contains("mode15") && !svg.contains("mode16"));
        let one = render_compare_svg("t", "s", &bars[..1], &[]).unwrap();
        assert!(
            svg.len() < one.len() * 8,
            "{} bytes, one mode {}",
            svg.len(),
            one.len()
        );
    }
}
