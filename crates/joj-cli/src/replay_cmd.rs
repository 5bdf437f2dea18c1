//! `joj replay`: a block trace (joj-trace file or blkparse text) through an emulated device.

use crate::output::{CliError, CliResult};
use clap::Args;
use joj_device::{EjournalStats, HostCompletion, ReplayReport};
use joj_experiment::trace_replay::{
    DEFAULT_REGION_MIB, DevicesReplayOptions, TraceReplay, TraceReplayOptions, TraceReplayReport,
    replay_trace,
};
use std::path::PathBuf;

#[derive(Args)]
pub struct ReplayArgs {
    /// A joj-trace file (`joj bench --trace` writes them) or blkparse text output.
    pub trace: PathBuf,
    /// Transactions the traced run ran: modeled throughput is then per transaction
    /// (`ops_basis: transactions`) rather than per request. Overrides the count a trace's header
    /// gives (`meta.transactions`, which `joj bench --trace` writes); the output says which
    /// count it used. Also with --device-for.
    #[arg(long = "transactions", value_name = "N", help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true, value_parser = crate::args::within::<u64>(1, joj_experiment::trace_replay::MAX_TRANSACTIONS))]
    pub transactions: Option<u64>,
    #[arg(long = "device", alias = "profile", value_name = "PROFILE", default_value = "emmc5", help_heading = crate::groups::DEVICE, help = crate::groups::profile_help("Device profile", " (`--profile` is its old name)."))]
    pub profile: String,
    /// Replay only this device of the trace (`major:minor`).
    // A value such as `-1:0` reaches joj's own message (the trace's devices and the fix), not
    // clap's "unexpected argument".
    #[arg(long, allow_hyphen_values = true, help_heading = crate::groups::DEVICE)]
    pub dev: Option<String>,
    /// Replay every device of the trace as a partition of the one emulated device.
    #[arg(long, help_heading = crate::groups::DEVICE)]
    pub partitions: bool,
    #[arg(long = "device-for", alias = "profile-for", value_name = "DEV=PROFILE", allow_hyphen_values = true, conflicts_with_all = ["dev", "partitions", "profile"], help_heading = crate::groups::DEVICE, help = crate::groups::profile_help("Replay device DEV of the trace (`DEV=PROFILE`; DEV is `major:minor`, or `main` / `journal` as the trace's header names them) through its own emulated device of PROFILE", ". Repeat for every device of the trace; the run is timed as the host sees it (docs/device-model.md, \"Several devices, each with its profile\"; `--profile-for` is its old name)."))]
    pub profile_for: Vec<String>,
    /// Allow one profile for two devices of --device-for (two separate devices of one kind;
    /// `--same-profile-ok` is its old name).
    #[arg(long = "same-device-ok", alias = "same-profile-ok", requires = "profile_for", help_heading = crate::groups::DEVICE)]
    pub same_profile_ok: bool,
    /// Keep the trace's gaps between requests as idle time (default: back to back).
    #[arg(long = "honor-timestamps", help_heading = crate::groups::DEVICE)]
    pub honor_timestamps: bool,
    /// Replay with the eMMC paper's optimized journal: each ext4 journal transaction becomes one
    /// packed command of reliable writes to a journal region, metadata checkpointed later
    /// (docs/device-model.md, "The optimized journal"); sets the profile's
    /// `ftl.reliable_write_atomicity = "command"`.
    #[arg(long = "emmc-journal", conflicts_with = "profile_for", help_heading = crate::groups::DEVICE)]
    pub emmc_journal: bool,
    /// Size of the optimized journal's region in MiB (with --emmc-journal; the paper: 32–512).
    #[arg(long = "journal-region-mib", value_name = "MIB", conflicts_with = "profile_for", help_heading = crate::groups::DEVICE, allow_negative_numbers = true, value_parser = crate::args::within::<u64>(1, crate::args::MAX_JOURNAL_REGION_MIB))]
    pub journal_region_mib: Option<u64>,
    #[command(flatten)]
    pub completion: crate::completion_args::CompletionArgs,
    /// Print one JSON document on stdout and nothing else.
    #[arg(long, help_heading = crate::groups::OUTPUT)]
    pub json: bool,
}

/// The completion model `a` asks for, checked against the rest of its options.
fn host_completion(a: &ReplayArgs) -> Result<Option<HostCompletion>, CliError> {
    let host = a.completion.host()?;
    if host.is_some() && a.honor_timestamps {
        return Err(CliError::CompletionWithTimestamps);
    }
    Ok(host)
}

pub fn main(a: ReplayArgs) -> CliResult {
    let host = host_completion(&a)?;
    if !a.profile_for.is_empty() {
        if host.is_some() {
            return Err(CliError::CompletionWithDevices.into());
        }
        return crate::replay_devices_cmd::main(
            &DevicesReplayOptions {
                trace: &a.trace,
                profile_for: &a.profile_for,
                same_profile_ok: a.same_profile_ok,
                honor_timestamps: a.honor_timestamps,
                transactions: a.transactions,
            },
            a.json,
        );
    }
    // Refused before the trace (which may be large) is read.
    if a.journal_region_mib.is_some() && !a.emmc_journal {
        return Err(CliError::RegionWithoutEmmcJournal.into());
    }
    let TraceReplay { report, replayed } = replay_trace(&TraceReplayOptions {
        trace: &a.trace,
        profile: &a.profile,
        dev: a.dev.clone(),
        partitions: a.partitions,
        honor_timestamps: a.honor_timestamps,
        emmc_journal_mib: a
            .emmc_journal
            .then(|| a.journal_region_mib.unwrap_or(DEFAULT_REGION_MIB)),
        completion: host,
        transactions: a.transactions,
    })?;
    if a.json {
        outln!("{}", crate::output::sorted_json(&report)?)?;
    } else {
        out!("{}", text(&a, &report, &replayed))?;
        if let Some(e) = &report.emmc_journal {
            out!("{}", ejournal_text(e))?;
        }
        if let Some(m) = &report.modeled {
            out!("{}", crate::modeled_text::modeled_line(m))?;
        } else if let Some(why) = report.modeled_not {
            out!("  the recording's host time is not composed: {why}\n")?;
        }
    }
    Ok(())
}

fn text(a: &ReplayArgs, report: &TraceReplayReport, r: &ReplayReport) -> String {
    let (c, d, format) = (&r.device, &report.device, report.format);
    let basis = match d.ops_basis {
        joj_device::OpsBasis::Transactions => "transactions",
        joj_device::OpsBasis::Requests => "requests",
    };
    let mut s = format!(
        "{} ({format}) through {}{}\n",
        a.trace.display(),
        r.profile,
        r.dev
            .as_deref()
            .map(|d| format!(", device {d}"))
            .unwrap_or_default()
    );
    // A device with a write cache is sent every flush: its count needs no note.
    let dropped = if r.cache_bytes == 0 || r.flushes_dropped > 0 {
        format!(
            " ({})",
            crate::replay_devices_cmd::flushes_dropped(r.flushes_dropped, r.cache_bytes)
        )
    } else {
        String::new()
    };
    s.push_str(&format!(
        "  {} requests: {} reads, {} writes, {} flushes{dropped}, {} discards ({} other skipped)\n",
        r.records, r.reads, r.writes, r.flushes, r.discards, r.skipped_other
    ));
    s.push_str(&format!(
        "  modeled {:.4} s ({:.4} s waited for by the application): {:.1} {basis}/s over {} {basis}{}\n",
        d.modeled_s,
        d.app_wait_s,
        d.modeled_ops_per_sec,
        d.ops,
        crate::replay_devices_cmd::counted_from(report.transactions_from, report.header_transactions)
    ));
    s.push_str(&format!(
        "  host wrote {} KiB; NAND programmed {} KiB (WAF {:.2}), {}, {} GC copies, {} FUA writes\n",
        d.host_write_bytes / 1024,
        d.nand_program_bytes / 1024,
        d.waf,
        crate::output::erases_phrase(d.erases, d.map_erases),
        d.gc_copies,
        d.fua
    ));
    s.push_str(&format!(
        "  mean latency µs: write {:.1}, FUA write {:.1}, flush {:.1}, read {:.1}; {} read-modify-writes\n",
        c.latency.write.mean_us,
        c.latency.fua_write.mean_us,
        c.latency.flush.mean_us,
        c.latency.read.mean_us,
        c.rmw_reads
    ));
    if let Some(h) = &d.completion {
        s.push_str(&crate::completion_args::completion_line(
            h,
            basis.trim_end_matches('s'),
        ));
    }
    s
}

/// The optimized journal's lines of the text report.
pub fn ejournal_text(e: &EjournalStats) -> String {
    format!(
        "  optimized journal ({} MiB region, reliable write atomic per command): {} jbd2 \
         (ext4 journal) transactions coalesced from {} journal writes into {} packed commands ({:.1} pages each)\n  \
         {} metadata writes deferred; {} checkpoints ({} forced, {} final): {} writes, {} pages\n  \
         flushes: {} preflushes and {} post-commit flushes dropped, {} kept to order data before a \
         commit, {} added by checkpoints; {} FUA commits replaced; {} journal writes after the last commit replayed unchanged\n",
        e.region_mib,
        e.transactions,
        e.journal_writes_coalesced,
        e.packed_commands,
        e.pages_per_command(),
        e.metadata_writes_deferred,
        e.checkpoints_forced + e.checkpoints_final,
        e.checkpoints_forced,
        e.checkpoints_final,
        e.checkpoint_writes,
        e.checkpoint_pages,
        e.flushes_dropped,
        e.postflushes_dropped,
        e.flushes_kept_for_ordering,
        e.flushes_added,
        e.fua_replaced,
        e.unterminated_journal_writes,
    )
}
