//! The parts of one document's section on the `joj report` page: its facts, table, plot and
//! "what this means" lines (see [`crate::report_page`]).

use joj_linux::Beneath;
use std::fmt::Write as _;

use joj_experiment::RunResult;
use joj_experiment::compare::Comparison;

use crate::report_doc::{
    Document, Keep, Kind, Plots, esc, esc_within, inline_svg, plot_beside, scalar,
};

/// Rows of a flattened crash or replay document shown at most.
const MAX_FIELDS: usize = 80;
/// Characters of each key in a flattened field's name kept (a longer key is cut, `…`).
const MAX_KEY_CHARS: usize = 64;
/// Bytes of a cell (a value, a column's name), escaped, at most.
const MAX_CELL_BYTES: usize = 400;
/// Tables of a document's arrays built at most, and the bytes of the section past which no
/// more are built: what one section shows of a document, whatever it holds.
const MAX_TABLES: usize = 16;
const MAX_FIELDS_SECTION_BYTES: usize = 4 << 20;
/// Items of a document's array of objects shown as table rows at most, and their columns.
const MAX_ITEMS: usize = 100;
const MAX_COLUMNS: usize = 12;

/// A document's section, below its heading; its plots are placed in `plots`, the page's.
pub fn body(d: &Document, plots: &mut Plots) -> String {
    let dir = &d.dir;
    match &d.kind {
        Kind::Compare(c) => compare(c, dir, plots),
        Kind::Run(r) => run(r, dir, plots),
        Kind::Crash(v) | Kind::Replay(v) | Kind::Other(_, v) => fields(v),
        // Its links need the whole page: `report_page` draws it.
        Kind::PaperFigures(_) => String::new(),
    }
}

/// `(name, value)` rows as a two-column table.
fn facts(rows: &[(&str, String)]) -> String {
    let mut h = String::from("<table class=\"facts\">\n");
    for (k, v) in rows.iter().filter(|(_, v)| !v.is_empty()) {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    h.push_str("</table>\n");
    h
}

/// The run's facts: where and how it ran.
fn run_facts(r: &RunResult) -> Vec<(&'static str, String)> {
    let c = &r.config;
    let mut rows = vec![
        ("kernel", c.kernel.clone()),
        ("filesystem", c.fs.clone()),
        ("mount options", c.mount_options.clone().unwrap_or_default()),
        ("SQLite", c.sqlite_version.clone()),
        ("joj", c.joj_version.clone()),
        ("workload", format!("{} {}", c.workload, c.op)),
        ("journal mode", c.journal_mode.clone().unwrap_or_default()),
        ("synchronous", c.synchronous.clone().unwrap_or_default()),
        ("transactions", r.transactions.to_string()),
        ("elapsed", format!("{:.3} s", r.elapsed_s)),
    ];
    if let Some(m) = &r.modeled {
        rows.push(("device profile (modeled)", m.profile.to_string()));
    }
    if let Some(p) = &r.pace {
        rows.push(("paced on", p.profile.to_string()));
    }
    if c.cpus_awake {
        rows.push(("CPUs", "held awake (--cpus-awake)".into()));
    }
    rows
}

/// "What this means": the lines under the header, as a list.
fn meaning(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim_end() == "what this means:")
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h3>What this means</h3>\n<ul class=\"meaning\">\n");
    for l in lines {
        let _ = writeln!(h, "<li>{}</li>", esc(l.trim()));
    }
    h.push_str("</ul>\n");
    h
}

/// A row's modeled transactions per second and the host's share of its modeled time; a row
/// run on the device model itself has its device's time alone, marked as in the text table.
fn modeled_cells(row: &joj_experiment::compare::CompareRow) -> [String; 2] {
    match joj_experiment::compare::modeled_figure(row) {
        Some((ops, Some(host))) => [format!("{ops:.1}"), format!("{:.0} %", host * 100.0)],
        Some((ops, None)) => [format!("{ops:.1}*"), "–".into()],
        None => ["–".into(), "–".into()],
    }
}

/// The comparison's table: per mode its durability, rate, KiB per transaction by class and
/// flushes, and with a device the modeled rate and the host's share (a row run on the device
/// model itself marked and said under the table).
fn compare_table(c: &Comparison) -> String {
    let mut h = String::new();
    let device = c.rows.iter().any(|r| r.result.device.is_some());
    let (modeled_head, modeled_unit) = if device {
        (
            "<th>modeled txn/s</th><th>host share</th>",
            "<th colspan=\"2\">host + device</th>",
        )
    } else {
        ("", "")
    };
    let _ = writeln!(
        h,
        "<table>\n<tr><th>mode</th><th>durability</th><th>txn/s</th><th>db</th><th>log</th>\
         <th>FS metadata</th><th>FS journal</th><th>(JOJ)</th><th>total</th>\
         <th>flushes</th>{modeled_head}</tr>\n<tr><th></th><th></th><th></th>\
         <th colspan=\"6\">KiB written per transaction</th><th>per txn</th>{modeled_unit}</tr>"
    );
    for row in c.rows.iter().take(MAX_ITEMS) {
        let kib = |b: f64| format!("{:.1}", b / 1024.0);
        let cells = match joj_experiment::compare_plot::bar_of(row) {
            Some(b) => [
                kib(b.database_bytes),
                kib(b.log_bytes),
                kib(b.metadata_bytes),
                kib(b.fs_journal_bytes),
                kib(b.joj_bytes),
                kib(b.database_bytes + b.log_bytes + b.metadata_bytes + b.fs_journal_bytes),
                format!("{:.2}", b.flushes),
            ],
            None => Default::default(),
        };
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{:.1}</td>",
            esc(&row.mode),
            esc(row.durability.as_deref().unwrap_or("not recorded")),
            row.result.ops_per_sec
        );
        for cell in cells {
            let _ = write!(h, "<td class=\"n\">{}</td>", esc(&cell));
        }
        if device {
            for cell in modeled_cells(row) {
                let _ = write!(h, "<td class=\"n\">{}</td>", esc(&cell));
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    if c.rows.len() > MAX_ITEMS {
        let _ = writeln!(
            h,
            "<p class=\"left-out\">and {} more rows (a table shows the first {MAX_ITEMS}; \
             open the document itself)</p>",
            c.rows.len() - MAX_ITEMS
        );
    }
    if c.rows.iter().any(joj_experiment::compare::device_time_only) {
        let _ = writeln!(
            h,
            "<p class=\"src\">{}</p>",
            esc(joj_experiment::compare::DEVICE_TIME_ONLY.trim())
        );
    }
    h
}

fn compare(c: &Comparison, dir: &Beneath, plots: &mut Plots) -> String {
    let Some(first) = c.rows.first() else {
        return "<p>no rows</p>\n".into();
    };
    // The rows share these; the journal mode is each row's own.
    let shared: Vec<(&str, String)> = run_facts(&first.result)
        .into_iter()
        .filter(|(k, _)| !["journal mode", "elapsed"].contains(k))
        .collect();
    let mut h = facts(&shared);
    h.push_str(&compare_table(c));
    h.push_str("<ul class=\"src\">\n");
    let key = joj_experiment::compare::durability_key(
        c.rows.iter().filter_map(|r| r.durability.as_deref()),
    );
    for line in key.lines() {
        let _ = writeln!(h, "<li>{}</li>", esc(line.trim()));
    }
    h.push_str("</ul>\n");
    let cfg = &first.result.config;
    let title = format!("{} on {}: the journal modes side by side", cfg.op, cfg.fs);
    let subtitle = format!(
        "{} transactions, synchronous={}",
        first.result.transactions,
        cfg.synchronous.as_deref().unwrap_or("?")
    );
    match joj_experiment::compare_plot::render(&title, &subtitle, c) {
        Ok(svg) => h.push_str(&inline_svg(&svg, &title, plots)),
        Err(e) => {
            let _ = writeln!(
                h,
                "<p>the plot could not be drawn: {}</p>",
                esc(&e.to_string())
            );
        }
    }
    h.push_str(&meaning(&crate::meaning::of_compare(c, &cfg.fs)));
    // A file several rows name is inlined once; the later rows refer to it.
    let each: Vec<String> = c
        .rows
        .iter()
        .take(MAX_ITEMS)
        .filter_map(|r| r.result.plot_file.as_deref())
        .filter_map(|p| plot_beside(dir, p, plots))
        .collect();
    if !each.is_empty() {
        h.push_str("<details><summary>each mode's trace plot</summary>\n");
        h.extend(each);
        h.push_str("</details>\n");
    }
    h
}

fn run(r: &RunResult, dir: &Beneath, plots: &mut Plots) -> String {
    let mut h = facts(&run_facts(r));
    if let Some(c) = &r.command {
        h.push_str(&databases(c));
    } else if let Some(b) = &r.block_per_txn {
        let kib = |x: f64| format!("{:.1}", x / 1024.0);
        h.push_str(&facts(&[
            ("KiB written per transaction", kib(b.write_bytes)),
            ("  db", kib(b.data_by_role.database)),
            (
                "  log",
                kib(b.data_by_role.wal + b.data_by_role.rollback_journal),
            ),
            ("  FS metadata", kib(b.metadata_bytes)),
            ("  FS journal", kib(b.fs_journal_bytes)),
            ("flushes per transaction", format!("{:.2}", b.flushes)),
        ]));
    }
    if let Some(p) = r
        .plot_file
        .as_deref()
        .and_then(|p| plot_beside(dir, p, plots))
    {
        h.push_str(&p);
    }
    h.push_str(&meaning(&crate::meaning::of_trace(r)));
    let text = if r.command.is_some() {
        crate::trace_report::table(r, false)
    } else {
        crate::bench::summary(r)
    };
    let _ = writeln!(
        h,
        "<details><summary>joj's text report</summary><pre>{}</pre></details>",
        esc(&text)
    );
    h
}

/// A traced command's databases, per commit.
fn databases(c: &joj_experiment::result::CommandReport) -> String {
    if c.databases.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<table>\n<tr><th>database</th><th>journal mode</th><th>commits</th>\
         <th>db</th><th>log</th><th>FS journal*</th><th>(JOJ)</th>\
         <th>syncs</th><th>counted by</th></tr>\n<tr><th></th><th></th><th></th>\
         <th colspan=\"4\">KiB written per commit</th><th>per commit</th><th></th></tr>\n",
    );
    for d in c.databases.iter().take(MAX_ITEMS) {
        let per = |f: fn(&joj_experiment::run::PerCommit) -> f64, div: f64| {
            d.per_commit
                .as_ref()
                .map_or("—".to_string(), |p| format!("{:.1}", f(p) / div))
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&d.path),
            esc(&d.mode_said()),
            d.commits.map_or("not counted".into(), |n| n.to_string()),
            per(|p| p.data_bytes - p.log_data_bytes, 1024.0),
            per(|p| p.log_data_bytes, 1024.0),
            per(|p| p.fs_journal_bytes_in_syncs, 1024.0),
            per(|p| p.joj_bytes, 1024.0),
            per(|p| p.syncs, 1.0),
            esc(&d.commits_counted_by)
        );
    }
    h.push_str("</table>\n");
    if c.databases.len() > MAX_ITEMS {
        let _ = writeln!(
            h,
            "<p class=\"left-out\">and {} more databases (a table shows the first \
             {MAX_ITEMS}; open the document itself)</p>",
            c.databases.len() - MAX_ITEMS
        );
    }
    h.push_str(
        "<p class=\"src\">db: data written to the database file; log: to its WAL or rollback \
         journal; * FS journal written while the database's files were synced; (JOJ): the part \
         of it written while its log was synced.</p>\n",
    );
    h
}

/// A crash or replay document, its scalar fields flattened (`device.flushes`), arrays as
/// their length; then its arrays of objects as tables.
///
/// The work is bounded by what is shown, whatever the document holds (docs/robustness.md H23,
/// H24): fields past [`MAX_FIELDS`] are counted, not built; a key is cut to [`MAX_KEY_CHARS`]
/// characters and a cell to [`MAX_CELL_BYTES`]; at most [`MAX_TABLES`] tables are built, and
/// none once the section holds [`MAX_FIELDS_SECTION_BYTES`]. What is cut is said.
fn fields(v: &serde_json::Value) -> String {
    let mut f = Fields::default();
    flatten(&mut String::new(), v, 0, &mut f);
    let mut h = String::from("<table>\n");
    for (k, val) in &f.rows {
        let _ = writeln!(h, "<tr><th>{k}</th><td>{val}</td></tr>");
    }
    h.push_str("</table>\n");
    if f.count > f.rows.len() {
        let _ = writeln!(
            h,
            "<p>and {} more fields (a section shows the first {MAX_FIELDS}; open the document \
             itself for the rest)</p>",
            f.count - f.rows.len()
        );
    }
    let Some(m) = v.as_object() else {
        return h;
    };
    let arrays = m.iter().filter_map(|(k, x)| Some((k, x.as_array()?)));
    let (mut tables, mut left) = (0, 0);
    for (k, a) in arrays {
        if tables >= MAX_TABLES || h.len() >= MAX_FIELDS_SECTION_BYTES {
            left += 1;
            continue;
        }
        let t = array_table(k, a);
        if !t.is_empty() {
            tables += 1;
            h.push_str(&t);
        }
    }
    if left > 0 {
        let _ = writeln!(
            h,
            "<p class=\"left-out\">{}</p>",
            esc(&format!(
                "and {left} more array(s) not shown as tables: a section shows at most \
                 {MAX_TABLES} tables and {} of them; open the document itself for the rest",
                crate::report_doc::mib(MAX_FIELDS_SECTION_BYTES as u64)
            ))
        );
    }
    h
}

/// A value as the text of a cell, escaped and cut to [`MAX_CELL_BYTES`]: a measured figure to
/// three decimals (1284.402, not 1284.4018527085716).
fn cell(v: &serde_json::Value) -> String {
    let text = match v {
        serde_json::Value::String(s) => {
            return esc_within(s, MAX_CELL_BYTES, Keep::Start);
        }
        serde_json::Value::Number(n) if n.is_f64() => {
            format!("{:.3}", n.as_f64().unwrap_or(f64::NAN))
        }
        x => scalar(x).unwrap_or_default(),
    };
    esc_within(&text, MAX_CELL_BYTES, Keep::Start)
}

/// An array of objects as a table: one row per item (at most [`MAX_ITEMS`]), one column per
/// scalar field of the first item (at most [`MAX_COLUMNS`]); other arrays are left as counted.
fn array_table(name: &str, a: &[serde_json::Value]) -> String {
    let Some(first) = a.first().and_then(|x| x.as_object()) else {
        return String::new();
    };
    let cols: Vec<&String> = first
        .iter()
        .filter(|(_, x)| scalar(x).is_some())
        .map(|(k, _)| k)
        .take(MAX_COLUMNS)
        .collect();
    if cols.is_empty() {
        return String::new();
    }
    let mut h = format!(
        "<p><b>{}</b></p>\n<table>\n<tr>",
        esc_within(name, MAX_CELL_BYTES, Keep::Start)
    );
    for c in &cols {
        let _ = write!(h, "<th>{}</th>", esc_within(c, MAX_CELL_BYTES, Keep::Start));
    }
    h.push_str("</tr>\n");
    for item in a.iter().take(MAX_ITEMS) {
        h.push_str("<tr>");
        for c in &cols {
            let text = item.get(c.as_str()).map(cell).unwrap_or_default();
            let _ = write!(h, "<td>{text}</td>");
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    if a.len() > MAX_ITEMS {
        let _ = writeln!(h, "<p>and {} more</p>", a.len() - MAX_ITEMS);
    }
    h
}

/// The flattened fields of a document: the first [`MAX_FIELDS`] built (key and value escaped
/// and cut), all of them counted.
#[derive(Default)]
struct Fields {
    rows: Vec<(String, String)>,
    count: usize,
}

impl Fields {
    /// A field at `key`, its value made only when it is shown.
    fn push(&mut self, key: &str, value: impl FnOnce() -> String) {
        self.count += 1;
        if self.rows.len() < MAX_FIELDS {
            self.rows.push((esc(key), value()));
        }
    }
}

/// Flatten `v` at `prefix` (a dotted path, each key in it cut to [`MAX_KEY_CHARS`], so it stays
/// a few hundred bytes at most: it is extended and cut back in place, never copied per child).
fn flatten(prefix: &mut String, v: &serde_json::Value, depth: usize, out: &mut Fields) {
    match v {
        serde_json::Value::Array(a) => out.push(prefix, || format!("{} item(s)", a.len())),
        serde_json::Value::Object(m) if depth < 3 => {
            for (k, x) in m {
                let len = prefix.len();
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                match k.char_indices().nth(MAX_KEY_CHARS) {
                    Some((cut, _)) => {
                        prefix.push_str(&k[..cut]);
                        prefix.push('…');
                    }
                    None => prefix.push_str(k),
                }
                flatten(prefix, x, depth + 1, out);
                prefix.truncate(len);
            }
        }
        serde_json::Value::Object(_) => out.push(prefix, || "…".into()),
        x => out.push(prefix, || cell(x)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparison of 150 modes (docs/robustness.md H24): its table shows 100 rows and counts
    /// the rest.
    #[test]
    fn a_comparisons_table_is_bounded_and_what_is_left_out_said() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/report/compare.json"
        );
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let row = v["rows"][0].clone();
        v["rows"] = serde_json::Value::Array(vec![row; 150]);
        let c: Comparison = serde_json::from_value(v).unwrap();
        let h = compare_table(&c);
        assert_eq!(h.matches("<tr><td>").count(), MAX_ITEMS);
        assert!(
            h.contains("and 50 more rows (a table shows the first 100"),
            "{h}"
        );
    }

    /// A document with one 100 KB key holding 1,000 fields (docs/robustness.md H23): the
    /// section shows 80 fields with the key cut, and counts the rest.
    #[test]
    fn a_documents_fields_are_counted_past_those_shown_and_long_keys_cut() {
        let mut inner = serde_json::Map::new();
        for i in 0..1000 {
            inner.insert(format!("{i:x}"), 0.into());
        }
        let mut doc = serde_json::Map::new();
        doc.insert("cuts".into(), 1.into());
        doc.insert("K".repeat(100_000), inner.into());
        let h = fields(&serde_json::Value::Object(doc));
        assert!(h.len() < 50_000, "a section of {} bytes", h.len());
        assert!(h.contains("and 921 more fields"), "{h}");
        assert!(h.contains(&format!("{}….0", "K".repeat(MAX_KEY_CHARS))));
    }

    /// A document of hundreds of arrays of 12-column rows of 309-digit figures and long
    /// strings (docs/robustness.md H24): a few tables of cut cells are built, and the page
    /// says how many arrays are left out.
    #[test]
    fn a_documents_tables_are_bounded_and_what_is_left_out_said() {
        let row: serde_json::Value = serde_json::from_str(&format!(
            "{{{}}}",
            (b'a'..b'l')
                .map(|c| format!("\"{}\": 1e308", char::from(c)))
                .chain(std::iter::once(format!("\"s\": \"{}\"", "x".repeat(2000))))
                .collect::<Vec<_>>()
                .join(",")
        ))
        .unwrap();
        let array = serde_json::Value::Array(vec![row; 101]);
        let mut doc = serde_json::Map::new();
        for i in 0..300 {
            doc.insert(format!("t{i:03}"), array.clone());
        }
        let h = fields(&serde_json::Value::Object(doc));
        assert!(
            h.len() <= MAX_FIELDS_SECTION_BYTES + (4 << 20),
            "{} bytes",
            h.len()
        );
        assert!(h.contains("and 1 more"), "each table's rows cut");
        let left = 300 - h.matches("<table>").count() + 1;
        assert!(
            h.contains(&format!("and {left} more array(s) not shown as tables")),
            "{}",
            &h[h.len() - 500..]
        );
    }
}
