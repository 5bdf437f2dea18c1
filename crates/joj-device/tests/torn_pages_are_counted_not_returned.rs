//! A power cut while cached pages are being programmed in the background tears those programs.
//! Recovery finds the torn pages, counts them (recovery report and device counters), and never
//! returns their contents: each such page reads its previous durable content, and every
//! flushed page reads back exactly.

mod common;

use common::{pattern, tiny_profile};
use joj_device::{BlockDevice, Emmc, WriteFlags};

#[test]
fn torn_pages_are_counted_not_returned() {
    let profile = tiny_profile();
    let page = u64::from(profile.geometry.page_bytes);
    let mut dev = Emmc::new(&profile).unwrap();

    // Durable base: pages 0..8 hold write 1.
    let base = pattern(1, (8 * page) as usize);
    dev.write(0, &base, WriteFlags::NONE).unwrap();
    dev.flush().unwrap();
    assert_eq!(dev.counters().recovery_torn_pages, 0);

    // Six whole cached pages: above the 50 % destage watermark of the 8-page cache, so the
    // oldest are programmed in the background and are still under way when the write returns
    // (a program takes 750 µs, the command tens of µs).
    let newer = pattern(2, (6 * page) as usize);
    dev.write(0, &newer, WriteFlags::NONE).unwrap();
    let cut = dev.power_loss(10_000, 7);
    let (mut dev, report) = Emmc::recover(cut, &profile).unwrap();

    assert!(
        report.torn_pages >= 1,
        "the background programs under way at the cut are torn: {report:?}"
    );
    assert_eq!(report.torn_erase_blocks, 0, "no erase was under way");
    let c = dev.counters();
    assert_eq!(c.recovery_torn_pages, report.torn_pages);
    assert_eq!(c.recovery_torn_erase_blocks, 0);

    // No page reads torn data: each holds its durable content (write 1) — the torn new copies
    // were set aside — since no program of write 2 completed before the cut.
    let mut buf = vec![0u8; (8 * page) as usize];
    dev.read(0, &mut buf).unwrap();
    assert_eq!(buf, base, "every page reads its last durable content");

    // A clean power cycle after a flush tears nothing new: the torn pages found are the old
    // ones, which stay on flash until GC erases their blocks.
    let torn_before = report.torn_pages;
    dev.write(0, &pattern(3, page as usize), WriteFlags::NONE)
        .unwrap();
    dev.flush().unwrap();
    let (mut dev, report) = Emmc::recover(dev.power_loss(0, 1), &profile).unwrap();
    assert_eq!(report.torn_pages, torn_before);
    assert_eq!(dev.counters().recovery_torn_pages, torn_before);
    dev.read(0, &mut buf[..page as usize]).unwrap();
    assert_eq!(&buf[..page as usize], &pattern(3, page as usize)[..]);
}
