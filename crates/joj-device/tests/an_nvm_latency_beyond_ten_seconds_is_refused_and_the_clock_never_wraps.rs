//! `iftl.nvm.*_latency_ns` is a step time like the NAND's: beyond 10 s (`MAX_STEP_NS`) a
//! profile is refused naming the field, and an NVM whose latency still carries its clock past
//! `u64` (built without a profile) fails the access rather than wrapping to an earlier time.
//! (Probe 2026-11-28: a write latency of 2e18 ns reported a run 5× faster than 156 ns.)

use joj_device::config::MAX_STEP_NS;
use joj_device::{Nvm, NvmTiming, Profile, ProfileError};

#[test]
fn an_nvm_latency_beyond_ten_seconds_is_refused_naming_the_field() {
    for field in ["read_latency_ns", "write_latency_ns"] {
        let mut p = Profile::builtin("openssd-iftl").unwrap();
        let set = |p: &mut Profile, v: u64| {
            let nvm = &mut p.iftl.as_mut().unwrap().nvm;
            match field {
                "read_latency_ns" => nvm.read_latency_ns = v,
                _ => nvm.write_latency_ns = v,
            }
        };
        set(&mut p, MAX_STEP_NS);
        assert!(p.validate().is_ok(), "{field} at 10 s");
        for huge in [MAX_STEP_NS + 1, 2_000_000_000_000_000_000, u64::MAX] {
            set(&mut p, huge);
            let e = p.validate().unwrap_err();
            assert!(
                matches!(
                    e,
                    ProfileError::OutOfRange { field: f, value, max: MAX_STEP_NS, .. }
                        if f == format!("iftl.nvm.{field}") && value == huge
                ),
                "{field} {huge}: {e:?}"
            );
            assert!(e.to_string().contains("fix:"), "{e}");
        }
    }
}

#[test]
fn an_nvm_access_past_the_clock_is_an_error_not_a_wrapped_time() {
    let timing = NvmTiming {
        read_latency_ns: u64::MAX / 2,
        write_latency_ns: u64::MAX / 2,
        bytes_per_s: 2_132_000_000,
    };
    let mut nvm = Nvm::new(4096, timing);
    let first = nvm.store(0, &[1; 8], 0).unwrap();
    assert!(first >= u64::MAX / 2);
    let second = nvm.store(8, &[2; 8], 0);
    assert!(
        second.is_err(),
        "the second store ends past u64: {second:?}"
    );
    assert!(nvm.read(0, &mut [0; 8], u64::MAX - 10).is_err());
    assert_eq!(
        nvm.peek(8, 8).unwrap(),
        &[0; 8],
        "a refused store changes nothing"
    );
}
