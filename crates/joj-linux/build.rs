//! Compiles the BPF observer (`bpf/opens.bpf.c`) with clang for the BPF target; the object is
//! embedded in joj-linux (`supervise::bpf_opens`) and loaded by aya, which relocates its field
//! reads to the running kernel (CO-RE). Needs `clang` and libbpf's headers (Debian: `clang`,
//! `libbpf-dev`; scripts/setup.sh installs both).
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "bpf/opens.bpf.c";
    println!("cargo:rerun-if-changed={src}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets the target arch");
    let (define, multiarch) = match arch.as_str() {
        "x86_64" => ("__TARGET_ARCH_x86", "x86_64-linux-gnu"),
        "aarch64" => ("__TARGET_ARCH_arm64", "aarch64-linux-gnu"),
        other => panic!("joj-linux: no BPF observer for the {other} architecture"),
    };
    let obj = out.join("opens.bpf.o");
    let status = Command::new("clang")
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg(format!("-D{define}"))
        .arg(format!("-I/usr/include/{multiarch}"))
        .args(["-c", src, "-o"])
        .arg(&obj)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("joj-linux: clang failed on {src} ({s})"),
        Err(e) => panic!(
            "joj-linux: cannot run clang to build the BPF observer ({e}); install it with \
             `apt-get install clang libbpf-dev` (scripts/setup.sh does)"
        ),
    }
}
