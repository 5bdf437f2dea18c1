//! `joj compare --device` puts host + device figures and, for the rows that run on the device
//! model itself (xftl, iftl), the device's time alone in one column: the second kind is marked
//! and said under the table, so that a reader does not take their ratio for the model's; the
//! report page shows the modeled figures too, marked the same way.

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

#[test]
fn a_device_only_row_is_marked_and_said() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let run = common::joj_command()
        .args([
            "compare", "--fs", "ext4", "--device", "emmc5", "-n", "20", "--modes", "wal,xftl",
            "--report", "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let row = |m: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{m} ")))
            .unwrap_or_else(|| panic!("no {m} row: {text}"))
            .to_string()
    };
    let (wal, xftl) = (row("wal"), row("xftl"));
    assert!(!wal.contains('*'), "host + device: {wal}");
    assert!(xftl.contains("* "), "device time only, marked: {xftl}");
    assert!(text.contains("* device time only"), "{text}");
    // The device columns line up: the marked figure ends where the host + device one does.
    let end = |l: &str, f: &str| l.find(f).map(|i| i + f.len());
    // The first figure of the device columns (after the third `|`).
    let modeled = |l: &str| {
        l.split('|')
            .nth(3)
            .and_then(|c| c.split_whitespace().next())
            .unwrap()
            .to_string()
    };
    let (wal_fig, xftl_fig) = (modeled(&wal), modeled(&xftl));
    assert_eq!(end(&wal, &wal_fig), end(&xftl, &xftl_fig), "{wal}\n{xftl}");
    let page = out.path().join("compare-ext4-insert.html");
    let html = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    assert!(
        html.contains("<th>modeled txn/s</th><th>host share</th>"),
        "{html}"
    );
    assert!(
        html.contains(&format!("<td class=\"n\">{xftl_fig}</td>")),
        "{html}"
    );
    assert!(html.contains("* device time only"), "{html}");
}
