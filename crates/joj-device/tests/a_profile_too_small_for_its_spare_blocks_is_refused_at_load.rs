//! A profile whose blocks cannot hold the logical pages its over-provisioning leaves plus the
//! FTL's spare blocks (a write frontier per unit, the GC reserve, two more, i-FTL's log blocks)
//! is refused when it is read, naming the profile's fields and the fix, exactly when the device
//! could not be formatted. (Before 2026-11-28 it loaded, and `joj replay` failed at the first
//! request as "trace record 0: geometry too small".)

#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::emmc::Emmc;
use joj_device::iftl_device::IftlDevice;
use joj_device::nand::NandMedium;
use joj_device::{Profile, ProfileError};

#[test]
fn validation_refuses_exactly_the_profiles_no_device_can_be_formatted_from() {
    for name in Profile::builtin_names() {
        let base = Profile::builtin(name).unwrap();
        let mut refused = 0;
        for blocks_per_plane in 1..=48 {
            for op in [1.0, 7.0, 25.0, 60.0] {
                let mut p = base.clone().with_blocks_per_plane(blocks_per_plane);
                p.ftl.over_provisioning_percent = op;
                let formats = if p.iftl.is_some() {
                    // `format`, not `new`: `new` validates first.
                    IftlDevice::format(NandMedium::for_profile(&p), &p).is_ok()
                } else {
                    Emmc::new(&p).is_ok()
                };
                let validates = p.validate();
                assert_eq!(
                    validates.is_ok(),
                    formats,
                    "{name}, {blocks_per_plane} blocks per plane, op {op}: {validates:?}"
                );
                if let Err(e) = validates {
                    refused += 1;
                    assert!(matches!(e, ProfileError::SpareBlocks { .. }), "{e}");
                    let text = e.to_string();
                    assert!(text.contains("fix: more blocks"), "{text}");
                }
            }
        }
        assert!(refused > 0, "{name}: no size was too small");
    }
}

#[test]
fn the_over_provisioning_the_message_names_is_enough() {
    let mut p = Profile::builtin("galaxy-s5")
        .unwrap()
        .with_blocks_per_plane(10);
    let text = p.validate().unwrap_err().to_string();
    let named = text
        .split("over_provisioning_percent ")
        .nth(2)
        .and_then(|t| t.split(' ').next())
        .unwrap();
    p.ftl.over_provisioning_percent = named.parse().unwrap();
    assert!(p.validate().is_ok(), "{text}");
    assert!(Emmc::new(&p).is_ok(), "{text}");
}
