//! `joj device format IMG` writes the whole image through a temporary file beside IMG. When
//! the filesystem there has less free space than the image takes, the format is refused before
//! anything is written, naming IMG as given (not the temporary), both sizes and the fix (it
//! used to write until the disk was full and name the temporary file, with no size and no fix).

mod common;

mod tmpfs;

#[test]
fn an_image_larger_than_the_free_space_is_refused_naming_the_path_given_and_the_fix() {
    if !joj_linux::testgate::root_test() {
        return;
    }
    // emmc5's formatted image takes 3.8 MiB (its mapping checkpoint, 4 bytes a logical page).
    let small = tmpfs::Tmpfs::mount("size=1m");
    let img = small.path().join("a.img");
    let (ok, _, err) = common::run_joj_text(&[
        "device",
        "format",
        img.to_str().unwrap(),
        "--device",
        "emmc5",
    ]);
    let left: Vec<_> = std::fs::read_dir(small.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(!ok, "formatted an image larger than the free space: {err}");
    assert!(
        err.contains(&format!("{} ", img.display()))
            && err.contains("3.8 MiB")
            && err.contains("1.0 MiB free")
            && err.contains("nothing was written")
            && err.contains("fix:"),
        "{err}"
    );
    assert!(!err.contains(".a.img."), "names the temporary file: {err}");
    assert!(left.is_empty(), "left behind: {left:?} ({err})");
}
