//! `joj replay --device-for DEV=PROFILE …`: every device of a trace through its own profile,
//! with a section per device, the time the host waited for them, and — for a `joj bench`
//! recording — that time composed with the host time it measured.

use crate::output::CliResult;
use joj_experiment::trace_replay::{
    DevicesReplayOptions, DevicesReplayReport, TransactionsFrom, replay_trace_devices,
};

pub fn main(opts: &DevicesReplayOptions, json: bool) -> CliResult {
    let report = replay_trace_devices(opts)?;
    if json {
        outln!("{}", crate::output::sorted_json(&report)?)?;
    } else {
        out!("{}", text(&report))?;
    }
    Ok(())
}

fn text(report: &DevicesReplayReport) -> String {
    let mut s = format!(
        "{} ({}) through {} devices, timed as the host sees them\n",
        report.trace,
        report.format,
        report.devices.len()
    );
    for d in &report.devices {
        let (r, dev) = (&d.replay, &d.device);
        s.push_str(&format!(
            "  {} ({}) through {}: {} reads, {} writes, {} flushes ({}); \
             device clock {:.4} s, waited for {:.4} s; host wrote {} KiB, WAF {:.2}\n",
            d.dev.as_deref().unwrap_or("?"),
            d.named,
            d.profile,
            r.reads,
            r.writes,
            r.flushes,
            flushes_dropped(r.flushes_dropped, r.cache_bytes),
            dev.modeled_s,
            dev.app_wait_s,
            dev.host_write_bytes / 1024,
            dev.waf
        ));
    }
    let h = &report.host;
    s.push_str(&format!(
        "  the devices as the host waited for them: {:.4} s ({:.4} s waited for by the \
         application): {:.1} {basis}/s \
         over {} {basis}{}\n",
        h.modeled_s,
        h.app_wait_s,
        h.modeled_ops_per_sec,
        h.ops,
        counted_from(report.transactions_from, report.header_transactions),
        basis = h.ops_basis
    ));
    if let Some(m) = &report.modeled {
        s.push_str(&crate::modeled_text::modeled_line(m));
        s.push_str(&format!(
            "    (device: every device, as the host waited for them; the host of {}'s profile)\n",
            report.modeled_host_of.as_deref().unwrap_or("?")
        ));
        if !report.modeled_hosts_unused.is_empty() {
            s.push_str(&format!(
                "    not used: {} (a run has one host: {}'s)\n",
                report.modeled_hosts_unused.join("; "),
                report.modeled_host_of.as_deref().unwrap_or("?")
            ));
        }
    } else if let Some(why) = report.modeled_not {
        s.push_str(&format!(
            "  the recording's host time is not composed: {why}\n"
        ));
    }
    s
}

/// How many flushes a replay dropped, and why: a device without a write cache is sent none, as
/// Linux sends none; a device with one is sent every flush.
pub fn flushes_dropped(dropped: u64, cache_bytes: u64) -> String {
    if cache_bytes == 0 {
        format!("{dropped} dropped: no write cache")
    } else {
        format!("{dropped} dropped")
    }
}

/// Where a replay's count of transactions came from, after the count in the text output
/// (nothing when it counts requests).
pub fn counted_from(from: Option<TransactionsFrom>, header: Option<u64>) -> String {
    match (from, header) {
        (None, _) => String::new(),
        (Some(TransactionsFrom::Header), _) => " (the trace's header)".into(),
        (Some(TransactionsFrom::Option), None) => " (--transactions)".into(),
        (Some(TransactionsFrom::Option), Some(n)) => {
            format!(" (--transactions; the trace's header said {n})")
        }
    }
}
