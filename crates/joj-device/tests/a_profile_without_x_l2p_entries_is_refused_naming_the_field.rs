//! `ftl.xl2p_entries` of 0 leaves X-FTL no entry for any page a transaction changes: such a
//! profile is refused at load, naming the field. (Probe 2026-11-28: it was accepted, and every
//! later `bench -j xftl`, `crash device` and `replay --emmc-journal` failed with "the X-L2P
//! table is full (0 entries …)" once the device was formatted.)

use joj_device::{Profile, ProfileError};

#[test]
fn a_profile_without_x_l2p_entries_is_refused_naming_the_field() {
    let mut v: serde_json::Value = serde_json::from_str(
        &serde_json::to_string(&Profile::builtin("openssd").unwrap()).unwrap(),
    )
    .unwrap();
    v["ftl"]["xl2p_entries"] = serde_json::json!(1);
    assert!(Profile::from_json(&v.to_string()).is_ok(), "one entry");
    v["ftl"]["xl2p_entries"] = serde_json::json!(0);
    let e = Profile::from_json(&v.to_string()).unwrap_err();
    assert!(
        matches!(
            e,
            ProfileError::OutOfRange {
                field: "ftl.xl2p_entries",
                value: 0,
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains("ftl.xl2p_entries") && text.contains("fix:"),
        "{text}"
    );
}
