//! joj's one vocabulary: the help headings every command sorts its flags under, and the
//! argument groups several commands share, flattened into each (`#[command(flatten)]`), so a
//! flag has one name, one meaning and one default wherever it appears (docs/cli.md).

use crate::args;
use clap::Args;
use joj_experiment::{DevicePlan, PaceRequest};
use std::path::PathBuf;

/// What the run does: operation, workload, sizes, counts, seed.
pub const WORKLOAD: &str = "Workload";
/// What the run goes through: filesystem, journal mode, SQLite's settings, scratch images.
pub const STACK: &str = "Stack";
/// The emulated device a run is replayed through or runs on.
pub const DEVICE: &str = "Device";
/// What the command prints and writes.
pub const OUTPUT: &str = "Output";
/// Mobibench's own short flags, with Mobibench's meanings and units.
pub const MOBIBENCH: &str = "Mobibench compatibility";

/// The headings, in the order `--help` shows them.
#[cfg(test)]
pub const HEADINGS: [&str; 5] = [WORKLOAD, STACK, DEVICE, OUTPUT, MOBIBENCH];

/// The help of a flag that takes a device profile: `lead`, then what a profile may be, the
/// built-in names taken from `joj_device::Profile::builtin_names` (so the list cannot fall
/// behind the profiles compiled in), and the rule for a file of a built-in's name; then `tail`.
pub fn profile_help(lead: &str, tail: &str) -> String {
    format!(
        "{lead}: a built-in name ({}) or a profile JSON file; a built-in name is taken before a \
         file of that name (give ./NAME for the file){tail}",
        joj_device::Profile::builtin_names().join(", ")
    )
}

/// `--seed` when not given, in every command.
pub const DEFAULT_SEED: u64 = 42;

/// `--seed`: the one seed every random choice of a run comes from.
#[derive(Args, Clone, Debug, Default)]
pub struct Seed {
    /// Seed of every random choice of the run; the same seed reruns it exactly [default: 42].
    #[arg(long = "seed", value_name = "SEED", help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::count::<u64>())]
    seed: Option<u64>,
}

impl Seed {
    /// The seed given, or [`DEFAULT_SEED`].
    pub fn get(&self) -> u64 {
        self.seed.unwrap_or(DEFAULT_SEED)
    }

    /// The seed, if one was given (a saved log may supply it otherwise).
    pub fn given(&self) -> Option<u64> {
        self.seed
    }
}

/// `--json`, `--save`, `--force`: the command's one JSON document, printed and kept.
#[derive(Args, Clone, Debug, Default)]
pub struct Output {
    /// Print one JSON document on stdout and nothing else.
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,
    /// Also write the JSON document to this file (after printing the result); checked before
    /// the run.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub save: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long, help_heading = OUTPUT)]
    pub force: bool,
}

/// `--out`: the folder a run's evidence goes to (traces, plots, logs).
#[derive(Args, Clone, Debug)]
pub struct OutDir {
    /// Directory for the run's files: trace files and SVG plots (created if missing). A run
    /// never replaces another's files: when `<label>.trace.jsonl` or `<label>.svg` is taken,
    /// both get the first free `<label>-2`, `<label>-3`, …
    #[arg(long, value_name = "DIR", default_value = "joj-out", help_heading = OUTPUT)]
    pub out: PathBuf,
}

/// `--cpus-awake` (`bench`, `compare`, `device calibrate`): the CPUs held out of idle states.
#[derive(Args, Clone, Debug, Default)]
pub struct CpusAwakeArg {
    /// Hold every CPU out of its idle states for each run (a calibration, or each mode of a
    /// compare): a PM QoS CPU latency request of 0 µs (/dev/cpu_dma_latency, as cyclictest
    /// makes it), dropped when the run ends or joj dies. An idle CPU then polls instead of
    /// sleeping, and no completion waits for one to wake: on a VM whose idle CPUs halt at once,
    /// I/O-bound runs are faster and vary less (docs/device-model.md, "CPUs held awake"). The
    /// JSON says which (`cpus_awake`).
    #[arg(long = "cpus-awake", help_heading = STACK)]
    pub cpus_awake: bool,
}

/// The device group of `bench` and `compare`: the emulated device a run is replayed through,
/// and how. Every other flag of the group requires `--device` (clap refuses it alone, naming
/// `--device`), so [`DeviceGroup::plan`] has nothing left to refuse.
#[derive(Args, Clone, Debug, Default)]
#[command(group(
    clap::ArgGroup::new("completion_model")
        .args(["completion", "wakeup_us"])
        .multiple(true)
        .requires("device")
))]
pub struct DeviceGroup {
    #[arg(long, value_name = "PROFILE", help_heading = DEVICE, help = profile_help(
        "Replay the run's block trace through this emulated device profile",
        ". Adds a `device` section; implies --trace. `--journal xftl` runs on it."
    ))]
    pub device: Option<String>,
    /// Age the device before the run so GC victims hold about this share of valid pages, in
    /// percent (X-FTL's 30, 50, 70); needs --device.
    #[arg(long = "gc-validity", value_name = "PERCENT", requires = "device", help_heading = DEVICE, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub gc_validity: Option<u32>,
    /// With --device: replay the run's trace with the eMMC paper's optimized journal (each ext4
    /// journal transaction one packed command of reliable writes, metadata checkpointed later;
    /// docs/device-model.md); the `device` section gets an `emmc_journal` part.
    #[arg(long = "emmc-journal", requires = "device", help_heading = DEVICE)]
    pub emmc_journal: bool,
    /// The optimized journal's region in MiB (with --emmc-journal; default 256).
    #[arg(long = "journal-region-mib", value_name = "MIB", requires = "emmc_journal", help_heading = DEVICE, allow_negative_numbers = true, value_parser = crate::args::within::<u64>(1, crate::args::MAX_JOURNAL_REGION_MIB))]
    pub journal_region_mib: Option<u64>,
    #[arg(long = "journal-device", value_name = "PROFILE", requires = "device", help_heading = DEVICE, help = crate::groups::profile_help("With --device and --fs ext4-extjournal: replay the external journal device through this profile", ", and the filesystem's device through --device's, each its own emulated device, timed as the host sees them; the JSON gets a `devices` section per device."))]
    pub journal_device: Option<String>,
    /// The host completion model on the replay (needs --device; docs/polling.md).
    #[command(flatten)]
    pub completion: crate::completion_args::CompletionArgs,
    /// Run the host at the device's speed: after each sync call and transaction wait until a
    /// model of --device, fed live from the kernel, has finished the requests so far. The
    /// kernel's clock (file timestamps, jbd2's commit timer) then runs as on the device. This
    /// is the default for SQLite runs with --device on a kernel filesystem; --pace makes it an
    /// error where it cannot be done. The run takes about the modeled time.
    #[arg(long, conflicts_with = "no_pace", requires = "device", help_heading = DEVICE)]
    pub pace: bool,
    /// Do not pace (see --pace): faster, but the modeled figures then follow this machine's
    /// speed wherever the kernel journals by the clock; the output says so.
    #[arg(long = "no-pace", requires = "device", help_heading = DEVICE)]
    pub no_pace: bool,
}

impl DeviceGroup {
    /// The run's device and its options (`None` without `--device`); the profiles are loaded
    /// here, so a bad name fails at once.
    pub fn plan(&self) -> Result<Option<DevicePlan>, Box<dyn std::error::Error>> {
        let Some(name) = self.device.as_deref() else {
            return Ok(None);
        };
        let pacing = match (self.pace, self.no_pace) {
            (true, _) => PaceRequest::Paced,
            (false, true) => PaceRequest::Unpaced,
            (false, false) => PaceRequest::Default,
        };
        Ok(Some(DevicePlan {
            profile: joj_device::Profile::load(name)?,
            aging_validity: self.gc_validity,
            completion: self.completion.host()?,
            journal_device: self
                .journal_device
                .as_deref()
                .map(joj_device::Profile::load)
                .transpose()?,
            emmc_journal_mib: self.emmc_journal.then(|| {
                self.journal_region_mib
                    .unwrap_or(joj_device::ejournal::DEFAULT_REGION_MIB)
            }),
            pacing,
        }))
    }
}
