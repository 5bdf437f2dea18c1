//! `ftl.flush_meta_pages` and `ftl.commit_meta_pages` are pages the model schedules on every
//! flush or commit: beyond 65,536 a profile is refused at load, naming the field and the bound.
//! (Probe 2026-11-28: 4294967295 made one flush burn 30 s of CPU and report 32 TiB programmed
//! on an 8 GiB device.)

use joj_device::config::MAX_META_PAGES;
use joj_device::{Profile, ProfileError};

#[test]
fn a_profile_with_unbounded_meta_pages_is_refused_naming_the_field() {
    assert_eq!(
        MAX_META_PAGES, 65_536,
        "the most `joj device calibrate` derives"
    );
    for field in ["flush_meta_pages", "commit_meta_pages"] {
        let mut v: serde_json::Value = serde_json::from_str(
            &serde_json::to_string(&Profile::builtin("openssd").unwrap()).unwrap(),
        )
        .unwrap();
        v["ftl"][field] = serde_json::json!(MAX_META_PAGES);
        assert!(
            Profile::from_json(&v.to_string()).is_ok(),
            "{field} at the bound"
        );
        for huge in [u64::from(MAX_META_PAGES) + 1, u64::from(u32::MAX)] {
            v["ftl"][field] = serde_json::json!(huge);
            let e = Profile::from_json(&v.to_string()).unwrap_err();
            assert!(
                matches!(
                    e,
                    ProfileError::OutOfRange { field: f, value, .. }
                        if f == format!("ftl.{field}") && value == huge
                ),
                "{field} {huge}: {e:?}"
            );
            let text = e.to_string();
            assert!(text.contains("65536") && text.contains("fix:"), "{text}");
        }
    }
}
