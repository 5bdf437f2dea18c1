//! Print a profile's self-check: `cargo run -p joj-device --release --example selfcheck -- emmc5`
//! (a built-in name or a profile JSON path; no argument checks every built-in profile).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let names: Vec<String> = if args.is_empty() {
        joj_device::Profile::builtin_names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        args
    };
    for name in names {
        let profile = joj_device::Profile::load(&name)?;
        let report = joj_device::self_check(&profile)?;
        println!("{report}");
    }
    Ok(())
}
