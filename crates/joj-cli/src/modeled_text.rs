//! The line `joj bench` and `joj replay` (through one device or several) print for a modeled
//! figure: host plus device, the host's share, and whether the kernel was paced. A leaf module,
//! so that the commands that print it need not import each other.

/// The modeled figure: host plus device, with the host's share and whether it was paced.
pub fn modeled_line(m: &joj_experiment::Modeled) -> String {
    let t = &m.time;
    format!(
        "  modeled on {} (host: {}, CPU ×{:.2}): {:.1} transactions/s = host {:.4} s ({:.0} %) + \
         device {:.4} s ({:.0} %); {}\n",
        m.profile,
        t.host,
        t.cpu_factor,
        t.modeled_ops_per_sec,
        t.host_s,
        t.host_share * 100.0,
        t.device_s,
        (1.0 - t.host_share) * 100.0,
        m.pacing
    )
}
