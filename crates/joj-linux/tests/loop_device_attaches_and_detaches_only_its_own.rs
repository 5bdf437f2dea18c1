//! A loop device serves our image while attached (also with direct I/O), and is gone from sysfs
//! once detached; a device cleared behind our back is not "detached" again.

mod common;

use joj_linux::{LoopDevice, LoopOptions};

fn backing_of(lo_name: &str) -> Option<String> {
    std::fs::read_to_string(format!("/sys/block/{lo_name}/loop/backing_file"))
        .ok()
        .map(|s| s.trim().to_string())
}

#[test]
fn attach_then_detach_round_trips() {
    if !common::machine_ready(&[]) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    for direct_io in [false, true] {
        let image = dir.path().join(format!("img-{direct_io}"));
        std::fs::File::create(&image)
            .unwrap()
            .set_len(8 << 20)
            .unwrap();
        let lo = LoopDevice::attach(
            &image,
            &LoopOptions {
                direct_io,
                block_size: None,
            },
        )
        .unwrap();
        let name = format!("loop{}", lo.index());
        assert_eq!(lo.path(), std::path::Path::new(&format!("/dev/{name}")));
        assert_eq!(backing_of(&name).as_deref(), image.to_str());
        let dio = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).unwrap();
        assert_eq!(dio.trim(), if direct_io { "1" } else { "0" });
        assert!(lo.is_ours().unwrap());
        lo.detach().unwrap();
        assert_ne!(
            backing_of(&name).as_deref(),
            image.to_str(),
            "{name} still serves our image"
        );
    }
}

#[test]
fn several_attaches_get_distinct_devices() {
    if !common::machine_ready(&[]) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let devices: Vec<LoopDevice> = (0..3)
        .map(|i| {
            let image = dir.path().join(format!("img{i}"));
            std::fs::File::create(&image)
                .unwrap()
                .set_len(1 << 20)
                .unwrap();
            LoopDevice::attach(&image, &LoopOptions::default()).unwrap()
        })
        .collect();
    let mut indexes: Vec<u32> = devices.iter().map(LoopDevice::index).collect();
    indexes.sort();
    indexes.dedup();
    assert_eq!(indexes.len(), 3);
    assert_eq!(common::loops_backed_under(dir.path()).len(), 3);
    drop(devices);
    assert!(
        common::loops_backed_under(dir.path()).is_empty(),
        "drop detaches"
    );
}
