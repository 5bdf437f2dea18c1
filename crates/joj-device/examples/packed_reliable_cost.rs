//! What reliable write atomic across its command costs: the modeled latency of one packed
//! command of reliable 4 KiB writes (1, 4 and 16 writes, 28 KiB apart), with per-page
//! atomicity (`page`, every built-in profile) and whole-command atomicity (`command`, one X-FTL
//! transaction per command of several pages). Mean of 100 commands on a fresh device, 10 ms of
//! idle time between them (`docs/device-model.md`, "Reliable write across a packed command").
//!
//! `cargo run -p joj-device --release --example packed_reliable_cost`

use joj_device::{BlockDevice, Emmc, PackedWrite, Profile, ReliableWriteAtomicity, WriteFlags};

const COMMANDS: u64 = 100;

fn mean_latency_ns(profile: &Profile, writes: u64) -> u64 {
    let mut dev = Emmc::new(profile).expect("a fresh device");
    let data = vec![1u8; 4096];
    let packed: Vec<PackedWrite> = (0..writes)
        .map(|i| PackedWrite {
            offset_bytes: i * 7 * 4096,
            data: &data,
        })
        .collect();
    let mut total = 0;
    for _ in 0..COMMANDS {
        let start = dev.now_ns();
        dev.write_packed(&packed, WriteFlags::RELIABLE)
            .expect("the command fits the device");
        total += dev.now_ns() - start;
        let idle = dev.now_ns() + 10_000_000;
        dev.advance_to(idle).expect("idle time");
    }
    total / COMMANDS
}

fn main() {
    println!("profile     writes   page µs   command µs");
    for name in ["emmc5", "galaxy-s5", "openssd"] {
        for writes in [1u64, 4, 16] {
            let us: Vec<u64> = [
                ReliableWriteAtomicity::Page,
                ReliableWriteAtomicity::Command,
            ]
            .into_iter()
            .map(|a| {
                let mut p = Profile::builtin(name)
                    .expect("a built-in profile")
                    .with_blocks_per_plane(64);
                p.ftl.reliable_write_atomicity = a;
                mean_latency_ns(&p, writes) / 1000
            })
            .collect();
            println!("{name:<11} {writes:>6} {:>9} {:>12}", us[0], us[1]);
        }
    }
}
