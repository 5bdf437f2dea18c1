//! `joj device`: format and inspect device image files, and run fio-like synthetic workloads on
//! an emulated device.

use crate::args;
use crate::output::{CliError, CliResult, check_output_file, profile_file};
use crate::progress::Progress;
use clap::{Args, Subcommand};
use joj_device::image::{self, ImageInfo};
use joj_device::{
    DataMode, DeviceRunReport, IoKind, Pattern, Phase, Profile, SyncKind, WallTime, WorkloadSpec,
    run_workload_observed,
};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Requests of one `device run`: hours at the model's ~10^6 requests per wall-clock second.
const MAX_OPS: u64 = 10_000_000_000;
/// Random-write passes over the device before measuring.
const MAX_RANDOM_PASSES: f64 = 100.0;

#[derive(Args)]
pub struct DeviceArgs {
    #[command(subcommand)]
    command: DeviceCommand,
}

#[derive(Subcommand)]
enum DeviceCommand {
    /// Write a freshly formatted device image. An existing file is never overwritten unless
    /// --force is given, and even then only if it is a joj device image.
    Format {
        image: PathBuf,
        #[arg(long = "device", alias = "profile", value_name = "PROFILE", default_value = "emmc5", help_heading = crate::groups::DEVICE, help = crate::groups::profile_help("Device profile", " (`--profile` is its old name)."))]
        profile: String,
        /// Replace an existing joj device image.
        #[arg(long, help_heading = crate::groups::OUTPUT)]
        force: bool,
        /// Store page data (`full`) or only the out-of-band areas (`oob`).
        #[arg(long, value_enum, default_value_t = Data::Full, help_heading = crate::groups::DEVICE)]
        data: Data,
        /// Print one JSON document on stdout and nothing else.
        #[arg(long, help_heading = crate::groups::OUTPUT)]
        json: bool,
    },
    /// Check an image and print its facts; with --device also power it on (recover the
    /// mapping) and report what recovery found, torn pages included.
    Inspect {
        image: PathBuf,
        #[arg(long = "device", alias = "profile", value_name = "PROFILE", help_heading = crate::groups::DEVICE, help = crate::groups::profile_help("Power the image on with this device profile and report what recovery found", " (`--profile` is its old name)."))]
        profile: Option<String>,
        /// Print one JSON document on stdout and nothing else.
        #[arg(long, help_heading = crate::groups::OUTPUT)]
        json: bool,
    },
    /// A synthetic workload (fio-like) on a fresh emulated device.
    Run(Box<RunArgs>),
    /// Measure a real device with O_DIRECT (QD1 4 KiB random write and read latency,
    /// sequential bandwidth, flush latency after N KiB written, O_DSYNC/FUA writes, queue-depth
    /// scaling) and write a device profile derived from those measurements alone, less the same
    /// patterns on a loop device in memory that joj makes (the path a modeled run's host time
    /// already holds; needs root).
    Calibrate(CalibrateArgs),
}

#[derive(Args)]
pub struct CalibrateArgs {
    /// A directory on the disk to measure (a test file is made there and removed), or a block
    /// device (written over: needs --destroy-data).
    pub path: PathBuf,
    /// Size of the test file, or of the region of a block device written over, in MiB.
    #[arg(long = "size-mib", default_value_t = 256, help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(64, 1 << 20))]
    pub size_mib: u64,
    /// Samples of each queue-depth-1 latency.
    #[arg(long, default_value_t = 1000, help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u32>(10, 1_000_000))]
    pub samples: u32,
    /// Allow writing over a block device PATH.
    #[arg(long = "destroy-data", help_heading = crate::groups::WORKLOAD)]
    pub destroy_data: bool,
    #[command(flatten)]
    pub seed: crate::groups::Seed,
    #[command(flatten)]
    pub awake: crate::groups::CpusAwakeArg,
    /// The profile JSON to write (never replaced without --force).
    #[arg(short, long, help_heading = crate::groups::OUTPUT)]
    pub output: PathBuf,
    /// Replace an existing --output file.
    #[arg(long, help_heading = crate::groups::OUTPUT)]
    pub force: bool,
    /// The profile's name [default: the output file's stem].
    #[arg(long, help_heading = crate::groups::OUTPUT)]
    pub name: Option<String>,
    /// Print the measurements and the profile as JSON.
    #[arg(long, help_heading = crate::groups::OUTPUT)]
    pub json: bool,
}

fn calibrate(a: CalibrateArgs) -> CliResult {
    check_output_file("-o/--output", &a.output, a.force, &[])?;
    let name = a.name.clone().unwrap_or_else(|| {
        a.output
            .file_stem()
            .map_or("calibrated".into(), |s| s.to_string_lossy().into_owned())
    });
    // Checked before minutes of measuring: the profile written must load again.
    joj_device::profile_text::check_name(&name)?;
    let opts = joj_experiment::calibrate::CalibrateOptions {
        path: a.path.clone(),
        size_bytes: a.size_mib << 20,
        samples: a.samples,
        destroy_data: a.destroy_data,
        name: name.clone(),
        seed: a.seed.get(),
        cpus_awake: a.awake.cpus_awake,
    };
    let m = joj_experiment::calibrate::measure(&opts)?;
    let profile = joj_experiment::calibrate::profile_from(&m, &name)?;
    // Said whatever the output form: the profile is written (it holds them too), and a reader
    // of `--json` on stdout still sees them on stderr.
    for d in joj_experiment::calibrate::doubts(&m) {
        eprintln!("joj: warning: {}", joj_trace::terminal::escaped(&d));
    }
    joj_trace::output::write_atomically(
        &a.output,
        joj_trace::output::Existing::replace_if(a.force),
        |w| {
            serde_json::to_writer_pretty(w, &profile).map_err(|e| joj_trace::OutputError::Write {
                path: a.output.clone(),
                source: e.into(),
            })
        },
    )?;
    if a.json {
        let doc = joj_experiment::calibrate::CalibrationReport {
            measured: m,
            profile,
        };
        outln!("{}", crate::output::sorted_json(&doc)?)?;
        return Ok(());
    }
    print_measured(&m)?;
    let t = &profile.timing;
    outln!(
        "profile {} written to {}: command {} ns serial + {} ns overlapped, queue depth {}, bus {} MB/s, read {} ns, program {} ns, {} map pages per flush",
        profile.name,
        a.output.display(),
        t.command_overhead_ns,
        t.command_latency_ns,
        t.queue_depth,
        t.host_bytes_per_s / 1_000_000,
        t.read_page_ns,
        t.program_page_ns,
        profile.ftl.flush_meta_pages
    )?;
    Ok(())
}

/// What `calibrate` measured, one line a pattern.
fn print_measured(m: &joj_experiment::calibrate::Measured) -> CliResult {
    let l = |x: &joj_experiment::calibrate::Latency| {
        format!(
            "median {:.1} µs (p10 {:.1}, p90 {:.1})",
            x.median_us, x.p10_us, x.p90_us
        )
    };
    outln!(
        "calibrated {} ({}{}; fua {}, cache {}), load {:.2} → {:.2}",
        m.path,
        m.kind,
        m.device
            .as_ref()
            .map(|d| format!(" on {d}"))
            .unwrap_or_default(),
        m.fua.map_or("?".into(), |f| f.to_string()),
        m.write_cache.as_deref().unwrap_or("?"),
        m.load_before,
        m.load_after
    )?;
    if m.cpus_awake {
        outln!("  the CPUs were held awake (--cpus-awake)")?;
    }
    outln!("  4 KiB random write: {}", l(&m.write_4k))?;
    outln!("  4 KiB random read:  {}", l(&m.read_4k))?;
    outln!("  4 KiB O_DSYNC write: {}", l(&m.dsync_write_4k))?;
    outln!(
        "  sequential 1 MiB: write {:.0} MiB/s, read {:.0} MiB/s",
        m.seq_write_mib_s,
        m.seq_read_mib_s
    )?;
    for f in &m.flush_after {
        outln!("  flush after {:>5} KiB: {}", f.kib, l(&f.latency))?;
    }
    for q in &m.queue_depth {
        outln!(
            "  queue depth {}: {:.0} IOPS, mean latency {:.1} µs",
            q.queue_depth,
            q.iops,
            q.mean_latency_us
        )?;
    }
    if let Some(r) = &m.reference {
        outln!(
            "  reference (a loop device in memory, the path a modeled run's host time holds; taken off the 4 KiB writes and reads and the flushes above): 4 KiB write {:.1} µs, read {:.1} µs, flush {:.1} µs",
            r.write_4k.median_us,
            r.read_4k.median_us,
            r.flush_after_4k.median_us
        )?;
    }
    if let Some(t) = &m.flush_after_4k_clock_ticked {
        let control = match m.reference.and_then(|r| r.flush_after_4k_clock_ticked) {
            Some(c) => format!(
                " (the reference, with the same wait and no file written behind it: {:.1} µs, \
                 against {:.1} µs without the wait)",
                c.median_us,
                m.reference
                    .map(|r| r.flush_after_4k.median_us)
                    .unwrap_or_default()
            ),
            None => String::new(),
        };
        outln!(
            "  flush after 4 KiB written once the clock ticked: {} (where a file is behind the \
             path — the test file, or a loop device's image — what this takes more than the \
             flush after 4 KiB is at most that file's inode, written because its timestamps \
             moved, and the wake-up after the wait before each write{control}; no device does \
             this; kept, not used by the profile, and not less the reference; \
             docs/measurement.md, \"Known limits\")",
            l(t)
        )?;
    }
    Ok(())
}

#[derive(Args)]
pub struct RunArgs {
    /// The access pattern.
    #[arg(long, value_enum, default_value_t = Access::Randwrite, help_heading = crate::groups::WORKLOAD)]
    pub workload: Access,
    /// Request size: bytes, or with a k/m suffix (4k, 16k, 512).
    #[arg(long = "io-size", default_value = "4k", help_heading = crate::groups::WORKLOAD)]
    pub io_size: String,
    /// Fill before measuring: none, full, a percentage (50%) or a share (0.5).
    #[arg(long, default_value = "none", help_heading = crate::groups::WORKLOAD)]
    pub precondition: String,
    /// Device capacities of random page writes after the fill, to reach GC steady state
    /// (default 2 when preconditioning, 0 otherwise).
    #[arg(long = "random-passes", help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true)]
    pub random_passes: Option<f64>,
    /// Requests measured (`--ops` is its old name).
    #[arg(long = "requests", alias = "ops", value_name = "N", default_value_t = 100_000, help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true, allow_negative_numbers = true, value_parser = args::within::<u64>(1, MAX_OPS))]
    pub ops: u64,
    /// A flush after every k-th write.
    #[arg(long = "flush-every", help_heading = crate::groups::WORKLOAD, conflicts_with = "fua_every", allow_negative_numbers = true, value_parser = args::count::<u64>())]
    pub flush_every: Option<u64>,
    /// Every k-th write is a FUA write.
    #[arg(long = "fua-every", help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u64>())]
    pub fua_every: Option<u64>,
    /// Requests in flight from the host (fio's iodepth): N issuers, each issuing its next request
    /// when its previous one completed. The profile's `timing.queue_depth` bounds what the
    /// device overlaps (1: one command at a time, whatever N).
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = crate::groups::WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u32>(1, joj_device::queue::MAX_QUEUE_DEPTH as u64))]
    pub iodepth: u32,
    #[arg(long = "device", alias = "profile", value_name = "PROFILE", default_value = "emmc5", help_heading = crate::groups::DEVICE, help = crate::groups::profile_help("Device profile", " (`--profile` is its old name)."))]
    pub profile: String,
    /// Raw NAND size in GiB, at most 2048 (resizes the profile's blocks per plane; default: the
    /// profile's).
    #[arg(long = "raw-gib", help_heading = crate::groups::DEVICE, allow_negative_numbers = true, allow_negative_numbers = true, value_parser = args::within::<u64>(1, 2048))]
    pub raw_gib: Option<u64>,
    /// Store page data (`full`) or only the out-of-band areas (`oob`, same counters, faster).
    #[arg(long, value_enum, default_value_t = Data::Oob, help_heading = crate::groups::DEVICE)]
    pub data: Data,
    #[command(flatten)]
    pub seed: crate::groups::Seed,
    /// Print one JSON document on stdout and nothing else.
    #[arg(long, help_heading = crate::groups::OUTPUT)]
    pub json: bool,
}

pub fn main(a: DeviceArgs) -> CliResult {
    match a.command {
        DeviceCommand::Calibrate(c) => calibrate(c)?,
        DeviceCommand::Format {
            image: path,
            profile,
            force,
            data,
            json,
        } => {
            // An existing file is `image::format`'s to judge (--force replaces only an image).
            let inputs: Vec<&std::path::Path> = profile_file(&profile).into_iter().collect();
            check_output_file("<IMAGE>", &path, true, &inputs)?;
            let profile = Profile::load(&profile)?.with_data_mode(data.mode());
            let info = image::format(&path, &profile, force)?;
            if json {
                outln!("{}", crate::output::json_for_terminal(&info)?)?;
            } else {
                outln!(
                    "formatted {} as {} ({})",
                    path.display(),
                    joj_device::ProfileRef::from(&profile),
                    describe(&info)
                )?;
            }
        }
        DeviceCommand::Inspect {
            image: path,
            profile,
            json,
        } => {
            let info = image::inspect(&path)?;
            let recovery = match profile {
                None => None,
                Some(name) => {
                    let mode = if info.data_stored {
                        DataMode::Full
                    } else {
                        DataMode::OobOnly
                    };
                    let p = Profile::load(&name)?.with_data_mode(mode);
                    Some(image::open(&path, &p)?.1)
                }
            };
            if json {
                let doc = image::InspectReport {
                    image: info,
                    recovery,
                };
                outln!("{}", crate::output::sorted_json(&doc)?)?;
            } else {
                outln!("{}: {}", path.display(), describe(&info))?;
                if let Some(r) = recovery {
                    outln!(
                        "  power-on recovery: modeled {:.2} ms, checkpoint seq {}, {} OOB reads, \
                         {} pages mapped from the scan, {} torn pages, {} blocks with a torn erase",
                        r.modeled_ns as f64 / 1e6,
                        r.checkpoint_seq,
                        r.oob_reads,
                        r.mapped_from_scan,
                        r.torn_pages,
                        r.torn_erase_blocks
                    )?;
                }
            }
        }
        DeviceCommand::Run(r) => run(*r)?,
    }
    Ok(())
}

fn describe(i: &ImageInfo) -> String {
    // A logical page is a mapping unit: the NAND page unless the image maps sub-page units.
    let unit = if i.mapping_unit_bytes == 0 {
        i.geometry.page_bytes
    } else {
        i.mapping_unit_bytes
    };
    format!(
        "format v{}, {} logical pages of {} B ({:.2} GiB), {} pages programmed, checkpoint seq {}, \
         max erase count {}, page data {}, {} bytes on disk",
        i.version,
        i.logical_pages,
        unit,
        (i.logical_pages * u64::from(unit)) as f64 / (1u64 << 30) as f64,
        i.programmed_pages,
        i.checkpoint_seq,
        i.max_erase_count,
        if i.data_stored {
            "stored"
        } else {
            "not stored"
        },
        i.file_bytes
    )
}

/// What the emulated device stores of each page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Data {
    /// Page data and out-of-band areas.
    Full,
    /// Only the out-of-band areas (same counters, faster).
    #[value(alias = "oob-only")]
    Oob,
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use clap::ValueEnum;
        match self.to_possible_value() {
            Some(v) => f.write_str(v.get_name()),
            None => Ok(()),
        }
    }
}

impl Data {
    fn mode(self) -> DataMode {
        match self {
            Data::Full => DataMode::Full,
            Data::Oob => DataMode::OobOnly,
        }
    }
}

/// A synthetic workload's access pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Access {
    /// Random writes.
    Randwrite,
    /// Sequential writes.
    #[value(alias = "seqwrite")]
    Write,
    /// Random reads.
    Randread,
    /// Sequential reads.
    #[value(alias = "seqread")]
    Read,
}

/// `4k`, `16K`, `1m`, `512`, `4KiB` → bytes.
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("ib").trim_end_matches('b');
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|&n| n > 0 && n <= joj_device::replay::MAX_REQUEST_BYTES)
        .ok_or_else(|| {
            format!(
                "bad --io-size '{s}'; fix: give bytes or a size like 512, 4k, 16k, 1m, at most \
                 {} MiB (a block request is one buffer)",
                joj_device::replay::MAX_REQUEST_BYTES >> 20
            )
        })
}

/// `none`, `full`, `50%`, `0.5` → share of the capacity.
fn parse_fill(s: &str) -> Result<f64, String> {
    let bad =
        || format!("bad --precondition '{s}'; fix: give none, full, a percentage (50%) or 0..1");
    let v = match s {
        "none" => 0.0,
        "full" => 1.0,
        p if p.ends_with('%') => p[..p.len() - 1].parse::<f64>().map_err(|_| bad())? / 100.0,
        x => x.parse::<f64>().map_err(|_| bad())?,
    };
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(bad())
    }
}

fn spec(a: &RunArgs) -> Result<WorkloadSpec, String> {
    let (pattern, kind) = match a.workload {
        Access::Randwrite => (Pattern::Rand, IoKind::Write),
        Access::Write => (Pattern::Seq, IoKind::Write),
        Access::Randread => (Pattern::Rand, IoKind::Read),
        Access::Read => (Pattern::Seq, IoKind::Read),
    };
    let (sync, sync_every) = match (a.flush_every, a.fua_every) {
        (Some(0), _) | (_, Some(0)) => {
            return Err("--flush-every and --fua-every count writes: give 1 or more".into());
        }
        (Some(k), None) => (SyncKind::Flush, k),
        (None, Some(k)) => (SyncKind::Fua, k),
        _ => (SyncKind::None, 1),
    };
    let fill = parse_fill(&a.precondition)?;
    let passes = a
        .random_passes
        .unwrap_or(if fill > 0.0 { 2.0 } else { 0.0 });
    if !(passes.is_finite() && (0.0..=MAX_RANDOM_PASSES).contains(&passes)) {
        return Err(format!(
            "bad --random-passes {passes}; fix: give 0 to {MAX_RANDOM_PASSES} device capacities \
             (2 reach GC steady state)"
        ));
    }
    Ok(WorkloadSpec {
        pattern,
        kind,
        io_bytes: parse_size(&a.io_size)?,
        sync,
        sync_every,
        precondition_fill: fill,
        precondition_random_passes: passes,
        ops: a.ops,
        seed: a.seed.get(),
        data_mode: a.data.mode(),
        issuers: a.iodepth,
    })
}

fn run(a: RunArgs) -> CliResult {
    let spec = spec(&a)?;
    let mut profile = Profile::load(&a.profile)?;
    if let Some(gib) = a.raw_gib {
        profile = profile.with_raw_gib(gib)?;
    }
    let raw_bytes = profile.geometry.physical_pages() * u64::from(profile.geometry.page_bytes);
    check_memory(
        &profile.clone().with_data_mode(spec.data_mode),
        &spec,
        raw_bytes,
    )?;
    let (report, wall) = run_with_progress(&profile, &spec)?;
    let doc = DeviceRunReport::new(report, raw_bytes, wall);
    if a.json {
        outln!("{}", crate::output::sorted_json(&doc)?)?;
        return Ok(());
    }
    print_run(&a, &spec, &doc, profile.timing.queue_depth)
}

/// Refuse, before the run, a device whose model could hold more than joj keeps in memory
/// ([`Profile::model_memory_bytes`] of what the preconditioning and the requests write).
fn check_memory(profile: &Profile, spec: &WorkloadSpec, raw_bytes: u64) -> Result<(), CliError> {
    let page_bytes = u64::from(profile.geometry.page_bytes);
    let written = spec
        .precondition_requests(profile.capacity_bytes(), page_bytes)
        .saturating_mul(page_bytes)
        .saturating_add(spec.ops.saturating_mul(spec.io_bytes));
    let model_bytes = profile.model_memory_bytes(written);
    // The budget `main` set from the machine, `ulimit -v` and the cgroup, as every device's.
    let limit_bytes = joj_device::memory_budget::limit_bytes();
    if joj_device::memory_budget::fits(model_bytes, limit_bytes) {
        return Ok(());
    }
    let full = profile.data_mode == DataMode::Full;
    Err(CliError::DeviceTooLargeForMemory {
        profile: profile.name.clone(),
        raw_bytes,
        model_bytes,
        limit_bytes,
        what: if full {
            "with --data full, the data of every page the run writes, and some 26 B per page"
        } else {
            "some 26 B of out-of-band area, mapping and block state per page"
        },
        fix: if full {
            "--data oob (the same counters, without the pages' data), or a smaller device \
             (--raw-gib)"
        } else {
            "a smaller device (--raw-gib)"
        },
    })
}

/// Run `spec` on a fresh device of `profile` with a progress bar through both phases; the
/// report and how long each phase took on the wall clock.
fn run_with_progress(
    profile: &Profile,
    spec: &WorkloadSpec,
) -> Result<(joj_device::WorkloadReport, WallTime), joj_device::DeviceError> {
    let capacity = profile.capacity_bytes();
    let pre_total = spec.precondition_requests(capacity, u64::from(profile.geometry.page_bytes));
    let progress = Progress::start_counting(pre_total.max(spec.ops), "precondition", "req");
    let counter = progress.counter.clone();
    let mut phase = Phase::Precondition;
    let t0 = Instant::now();
    let mut measure_start = None;
    let mut measure_end = None;
    let report = run_workload_observed(profile, spec, &mut |p, done| {
        if p == Phase::Measure && phase == Phase::Precondition {
            phase = Phase::Measure;
            measure_start = Some(Instant::now());
            progress.restart(spec.ops, "measure");
        }
        if p == Phase::Measure && done == spec.ops {
            measure_end = Some(Instant::now());
        }
        counter.store(done, Ordering::Relaxed);
    });
    drop(progress);
    let report = report?;
    let start = measure_start.unwrap_or(t0);
    let end = measure_end.unwrap_or_else(Instant::now);
    let measured_s = end.duration_since(start).as_secs_f64();
    let wall = WallTime {
        precondition_s: start.duration_since(t0).as_secs_f64(),
        measured_s,
        simulated_requests_per_s: spec.ops as f64 / measured_s.max(1e-9),
    };
    Ok((report, wall))
}

/// The text view of `joj device run`.
/// The run's requests in flight, when more than one: with the device's queue, or without one.
fn iodepth_phrase(issuers: u32, queue_depth: u32) -> String {
    match (issuers, queue_depth) {
        (1, _) => String::new(),
        (n, 1) => format!(
            ", {n} in flight from the host (the profile's queue holds 1 task: one at a time)"
        ),
        (n, q) => format!(", {n} in flight (the profile's queue holds {q} tasks)"),
    }
}

fn print_run(
    a: &RunArgs,
    spec: &WorkloadSpec,
    doc: &DeviceRunReport,
    queue_depth: u32,
) -> CliResult {
    let c = &doc.counters;
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    outln!(
        "{}: {:.2} GiB logical ({:.2} GiB raw); {} {} B, {} requests{}; preconditioned {:.0} % + {} random passes in {:.1} s wall",
        doc.profile,
        gib(doc.capacity_bytes),
        gib(doc.raw_bytes),
        a.workload,
        spec.io_bytes,
        spec.ops,
        iodepth_phrase(spec.issuers, queue_depth),
        spec.precondition_fill * 100.0,
        spec.precondition_random_passes,
        doc.wall.precondition_s
    )?;
    outln!(
        "  model speed: {} requests in {:.2} s wall = {:.0} simulated requests/s on one core",
        spec.ops,
        doc.wall.measured_s,
        doc.wall.simulated_requests_per_s
    )?;
    outln!(
        "  modeled: {:.3} s, {:.0} requests/s; WAF {:.2} (FTL alone {:.2}), {} GC copies, {}, {} flushes, {} FUA writes",
        c.modeled_s,
        c.modeled_ops_per_sec,
        c.waf,
        c.ftl_waf,
        c.gc_copies,
        crate::output::erases_phrase(c.erases, c.map_erases),
        c.flushes,
        c.fua
    )?;
    let (l, of) = if spec.kind == IoKind::Read {
        (&c.latency.read, "reads")
    } else if spec.sync == SyncKind::Fua && spec.sync_every == 1 {
        (&c.latency.fua_write, "FUA writes")
    } else {
        (&c.latency.write, "writes")
    };
    // Each kind apart: the requests/s above hold the flushes' time too, which a write's
    // latency does not.
    let lat_line = |what: &str, l: &joj_device::counters::LatencySummary| {
        format!(
            "  latency µs of the {what}: mean {:.1}, p50 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
            l.mean_us, l.p50_us, l.p99_us, l.p999_us, l.max_us
        )
    };
    outln!("{}", lat_line(of, l))?;
    if c.flushes > 0 {
        outln!("{}", lat_line("flushes", &c.latency.flush))?;
    }
    outln!(
        "  model memory: {:.1} bytes per logical page (page data excluded)",
        doc.bytes_per_logical_page
    )?;
    Ok(())
}
