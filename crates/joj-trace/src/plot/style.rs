//! What the plots share: the axis choice, the run's words above a picture, the colours, and
//! how numbers and sizes are written.

use plotters::style::RGBColor;

use crate::error::TraceError;

/// What the x axis shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotAxis {
    /// Time since the earliest record (ms, or s for a trace longer than 20 s).
    Time,
    /// Position of the request in the trace (0, 1, 2, …): issue order without idle gaps.
    Sequence,
}

/// What a trace picture says about its run, above and beside the data.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlotInfo<'a> {
    /// What ran: filesystem, command or workload, mode.
    pub title: &'a str,
    /// A second line: databases and their modes, commits.
    pub subtitle: Option<&'a str>,
    /// Transactions (commits) in the trace, for per-transaction figures.
    pub transactions: Option<u64>,
    /// The run's own figures per transaction, its one-time set-up apart (its document's
    /// `block_per_txn`): given, the captions say these rather than the trace's totals divided
    /// by `transactions`, so the picture and the run's text give the same figure.
    pub per_transaction: Option<PerTransaction>,
    /// One-time set-up inside the trace (its document's `command.setup.block`): in the totals,
    /// said apart, and kept out of the per-transaction figures.
    pub setup: Option<SetupApart>,
}

/// What a transaction wrote and flushed, set-up apart.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PerTransaction {
    pub write_bytes: f64,
    pub flushes: f64,
}

/// What the one-time set-up of a run wrote and flushed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetupApart {
    pub write_bytes: u64,
    pub flushes: u64,
}

// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
pub(crate) const BLUE: RGBColor = RGBColor(0, 114, 178);
pub(crate) const VERMILION: RGBColor = RGBColor(213, 94, 0);
pub(crate) const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub(crate) const SKY: RGBColor = RGBColor(86, 180, 233);
pub(crate) const GREEN: RGBColor = RGBColor(0, 158, 115);
pub(crate) const PURPLE: RGBColor = RGBColor(204, 121, 167);
pub(crate) const GREY: RGBColor = RGBColor(110, 110, 110);
/// Text and flushes.
pub(crate) const INK: RGBColor = RGBColor(30, 30, 30);

/// How a failure of plotters while drawing `part` of the chart is reported.
pub(crate) fn plot_error<E: std::fmt::Display>(part: &'static str) -> impl FnOnce(E) -> TraceError {
    move |e| TraceError::Plot {
        part,
        message: e.to_string(),
    }
}

/// `1234567` → `"1,234,567"`.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An axis label as an integer with thousands separators (`1000.0` → `"1,000"`); a value
/// between integers, on a short axis, keeps one decimal, and one below 0.05 two significant
/// digits (the ticks of a trace shorter than a tenth of a millisecond all read `0.0` else).
pub(crate) fn integer_label(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-6 || v.abs() >= 100.0 {
        let r = v.round();
        let sign = if r < 0.0 { "-" } else { "" };
        format!("{sign}{}", grouped(r.abs() as u64))
    } else if v.abs() >= 0.05 {
        format!("{v:.1}")
    } else {
        // 1 - the exponent of the leading digit: two significant digits; at most 12 decimals.
        let places = (1.0 - v.abs().log10().floor()).clamp(2.0, 12.0) as usize;
        let text = format!("{v:.places$}");
        text.trim_end_matches('0').to_owned()
    }
}

/// A byte count in B, KiB, MiB or GiB with one decimal.
pub(crate) fn size(bytes: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// `svg` with every character that acts on a terminal, but the line breaks plotters writes
/// between elements, and the two noncharacters XML 1.0 refuses as well (U+FFFE, U+FFFF),
/// written as its escape (`\u{1b}`): the titles name a command and its files, which someone
/// else may have named, and an ESC or U+FFFF in a title makes the whole picture unreadable
/// ("not well-formed"). What shows is the name's characters; the bidirectional ones would
/// reorder the text around them.
pub(crate) fn well_formed(svg: String) -> String {
    let refused = |c: char| {
        (c != '\n' && crate::terminal::acts_on_terminal(c)) || c == '\u{fffe}' || c == '\u{ffff}'
    };
    match crate::terminal::escaped_where(&svg, refused) {
        std::borrow::Cow::Borrowed(_) => svg,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(integer_label(&1000.0), "1,000");
        assert_eq!(integer_label(&-2000.0), "-2,000");
        assert_eq!(integer_label(&2.5), "2.5");
        assert_eq!(integer_label(&0.5), "0.5");
        assert_eq!(integer_label(&0.0004), "0.0004");
        assert_eq!(integer_label(&0.03), "0.03");
        assert_eq!(integer_label(&-0.000012), "-0.000012");
        assert_eq!(size(512.0), "512 B");
        assert_eq!(size(16384.0), "16.0 KiB");
        assert_eq!(size(45.1 * 1024.0 * 1024.0), "45.1 MiB");
    }
}
