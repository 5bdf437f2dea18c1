//! A profile whose host bus, NAND channel or NVM moves 2^64 − 1 bytes a second (a bus nothing
//! has, each transfer at the model's smallest time) was accepted; it is refused at load, naming
//! the field, its range and a value to give. The `zero-latency` reference's 10^18 B/s, the
//! fastest a profile may give, still loads.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use joj_device::{Profile, ProfileError};

/// `joj_device::config::MAX_BYTES_PER_S`.
const MAX_BYTES_PER_S: u64 = 1_000_000_000_000_000_000;

fn refused(builtin: &str, field: &'static str, set: impl Fn(&mut serde_json::Value, u64)) {
    let mut v = serde_json::to_value(Profile::builtin(builtin).unwrap()).unwrap();
    set(&mut v, MAX_BYTES_PER_S);
    assert!(
        Profile::from_json(&v.to_string()).is_ok(),
        "{field} at 10^18"
    );
    set(&mut v, u64::MAX);
    let e = Profile::from_json(&v.to_string()).unwrap_err();
    assert!(
        matches!(
            e,
            ProfileError::OutOfRange {
                field: f,
                value: u64::MAX,
                max: MAX_BYTES_PER_S,
                ..
            } if f == field
        ),
        "{field}: {e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains(field)
            && text.contains("1000000..=1000000000000000000")
            && text.contains("fix:"),
        "{text}"
    );
}

#[test]
fn a_bus_faster_than_any_is_refused_naming_the_field() {
    refused("emmc5", "timing.host_bytes_per_s", |v, b| {
        v["timing"]["host_bytes_per_s"] = b.into()
    });
    refused("emmc5", "timing.channel_bytes_per_s", |v, b| {
        v["timing"]["channel_bytes_per_s"] = b.into()
    });
    refused("openssd-iftl", "iftl.nvm.bytes_per_s", |v, b| {
        v["iftl"]["nvm"]["bytes_per_s"] = b.into()
    });
    assert!(Profile::load("zero-latency").is_ok());
}
