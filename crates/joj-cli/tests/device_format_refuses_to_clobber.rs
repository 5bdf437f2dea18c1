//! `joj device format` never overwrites an existing file silently: it refuses, saying why and
//! how to replace it; `--force` replaces a joj device image but still refuses any other file.

mod common;

fn joj(args: &[&str]) -> (bool, String) {
    let (ok, _, err) = common::run_joj_text(args);
    (ok, err)
}

#[test]
fn device_format_refuses_to_clobber() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("dev.img");
    let img_s = img.to_str().unwrap();
    let fmt = ["device", "format", img_s, "--device", "galaxy-s5"];

    let (ok, err) = joj(&fmt);
    assert!(ok, "{err}");
    let first = std::fs::read(&img).unwrap();
    assert!(first.starts_with(b"JOJDEVIM"));

    let (ok, err) = joj(&fmt);
    assert!(!ok, "a second format of the same path must fail");
    assert!(err.contains("exists") && err.contains("--force"), "{err}");
    assert_eq!(
        std::fs::read(&img).unwrap(),
        first,
        "the refused image is untouched"
    );

    let (ok, err) = joj(&[&fmt[..], &["--force"]].concat());
    assert!(ok, "{err}");

    let (ok, err) = joj(&["device", "inspect", img_s, "--device", "galaxy-s5"]);
    assert!(ok, "{err}");

    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, b"not an image").unwrap();
    let (ok, err) = joj(&[
        "device",
        "format",
        notes.to_str().unwrap(),
        "--device",
        "galaxy-s5",
        "--force",
    ]);
    assert!(!ok);
    assert!(err.contains("not a joj device image"), "{err}");
    assert_eq!(std::fs::read(&notes).unwrap(), b"not an image");
}
