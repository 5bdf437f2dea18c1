//! `joj speed --modes wal,xftl` used to say "add --device <profile>", an option speed does not
//! have. It now says that speed times modes on a real filesystem, that xftl and iftl run on an
//! emulated device, and where to time them instead — before any run.

mod common;

use common::run_joj;

#[test]
fn speed_refuses_device_modes_naming_where_they_run() {
    for mode in ["xftl", "iftl"] {
        let modes = format!("wal,{mode}");
        let out = run_joj(&[
            "speed",
            "--fs",
            "host",
            "--modes",
            &modes,
            "--transactions",
            "5",
            "--rounds",
            "1",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "{mode} runs SQLite on an emulated transactional device"
            )) && stderr.contains("it has no --device")
                && stderr.contains(&format!("fix: drop {mode} from --modes"))
                && stderr.contains(&format!("joj bench -j {mode} --device <profile>")),
            "{stderr}"
        );
        assert!(!stderr.contains("add --device"), "{stderr}");
    }
}
