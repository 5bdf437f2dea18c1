//! `joj replay --device-for DEV=PROFILE …`: every device of a trace through its own profile,
//! with a section per device and the run's host time.

use crate::output::{CliError, CliResult};
use joj_device::{DeviceProfile, DeviceSummary, Profile, ReplayOptions, load_trace};

/// What `joj replay` was given for a replay with a profile per device.
pub struct DevicesArgs<'a> {
    pub trace: &'a std::path::Path,
    pub profile_for: &'a [String],
    pub same_profile_ok: bool,
    pub honor_timestamps: bool,
    pub json: bool,
}

pub fn main(a: &DevicesArgs) -> CliResult {
    let trace = load_trace(a.trace)?;
    let mut assign = Vec::with_capacity(a.profile_for.len());
    let mut names = Vec::with_capacity(a.profile_for.len());
    for given in a.profile_for {
        let (name, profile) = given
            .split_once('=')
            .filter(|(d, p)| !d.is_empty() && !p.is_empty())
            .ok_or_else(|| CliError::ProfileForSyntax {
                given: given.clone(),
            })?;
        let dev = joj_device::resolve_device(name, &trace.header)?;
        assign.push(DeviceProfile {
            dev,
            profile: Profile::load(profile)?,
        });
        names.push(name.to_string());
    }
    let opts = ReplayOptions {
        honor_timestamps: a.honor_timestamps,
        ..ReplayOptions::default()
    };
    let report = joj_device::replay_devices(&trace.records, &assign, &opts, a.same_profile_ok)?;
    let txns = trace.transactions();
    let ops = txns.unwrap_or_else(|| {
        report
            .devices
            .iter()
            .map(|d| d.device.host_read_requests + d.device.host_write_requests)
            .sum()
    });
    let per_sec = if report.host_modeled_s > 0.0 {
        ops as f64 / report.host_modeled_s
    } else {
        0.0
    };
    let basis = if txns.is_some() {
        "transactions"
    } else {
        "requests"
    };
    let sections: Vec<serde_json::Value> = report
        .devices
        .iter()
        .zip(&names)
        .map(|(r, name)| {
            serde_json::json!({
                "dev": r.dev,
                "named": name,
                "profile": r.profile,
                "replay": {
                    "records": r.records,
                    "reads": r.reads,
                    "writes": r.writes,
                    "flushes": r.flushes,
                    "flushes_dropped": r.flushes_dropped,
                    "discards": r.discards,
                    "skipped_other": r.skipped_other,
                },
                "device": DeviceSummary::from_replay(r, txns),
                "counters": r.device,
            })
        })
        .collect();
    if a.json {
        let doc = serde_json::json!({
            "trace": a.trace.display().to_string(),
            "format": trace.format,
            "honor_timestamps": a.honor_timestamps,
            "devices": sections,
            "host": {
                "modeled_s": report.host_modeled_s,
                "app_wait_s": report.host_app_wait_s,
                "modeled_ops_per_sec": per_sec,
                "ops": ops,
                "ops_basis": basis,
            },
        });
        outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    let mut s = format!(
        "{} ({}) through {} devices, timed as the host sees them\n",
        a.trace.display(),
        trace.format,
        report.devices.len()
    );
    for (r, name) in report.devices.iter().zip(&names) {
        let d = DeviceSummary::from_replay(r, txns);
        s.push_str(&format!(
            "  {} ({name}) through {}: {} reads, {} writes, {} flushes ({} dropped: no cache); \
             device clock {:.4} s, waited for {:.4} s; host wrote {} KiB, WAF {:.2}\n",
            r.dev.as_deref().unwrap_or("?"),
            r.profile,
            r.reads,
            r.writes,
            r.flushes,
            r.flushes_dropped,
            d.modeled_s,
            d.app_wait_s,
            d.host_write_bytes / 1024,
            d.waf
        ));
    }
    s.push_str(&format!(
        "  host: modeled {:.4} s ({:.4} s waited for by the application): {per_sec:.1} {basis}/s \
         over {ops} {basis}\n",
        report.host_modeled_s, report.host_app_wait_s
    ));
    out!("{s}")?;
    Ok(())
}
