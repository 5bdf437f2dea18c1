//! `joj apptxn`: the i-FTL paper's withdraw/deposit — application transactions that each update
//! two databases and append to a plain file — on X-FTL's eMMC or the i-FTL device. The
//! experiment lives in `joj_experiment::withdraw_deposit`.

use clap::Args;
use joj_experiment::withdraw_deposit::{
    MAX_TRANSACTIONS, WithdrawDepositOptions, WithdrawDepositReport, run,
};

use crate::args;
use crate::groups::{DEVICE, Output, STACK, Seed, WORKLOAD};
use crate::output::{CliResult, check_save};

#[derive(Args)]
pub struct ApptxnArgs {
    /// Application transactions (`-n` is its old spelling).
    #[arg(long = "transactions", short_alias = 'n', value_name = "N", default_value_t = 1000, help_heading = WORKLOAD, allow_negative_numbers = true, value_parser = args::within::<u64>(1, MAX_TRANSACTIONS))]
    pub transactions: u64,
    #[command(flatten)]
    pub seed: Seed,
    /// SQLite page size of both databases.
    #[arg(long = "page-size", default_value_t = 4096, help_heading = STACK, allow_negative_numbers = true, value_parser = args::count::<u32>())]
    pub page_size: u32,
    /// The transactional FTL the device runs: xftl (X-FTL's eMMC) or iftl (the i-FTL device)
    /// (`-j` and `--journal` are its old spellings).
    #[arg(long = "ftl", alias = "journal", short_alias = 'j', value_parser = ["xftl", "iftl"], default_value = "iftl", help_heading = DEVICE)]
    pub ftl: String,
    #[arg(long, value_name = "PROFILE", default_value = "openssd-iftl", help_heading = DEVICE, help = crate::groups::profile_help("Device profile", "."))]
    pub device: String,
    #[command(flatten)]
    pub output: Output,
}

pub fn main(a: ApptxnArgs) -> CliResult {
    check_save(a.output.save.as_deref(), a.output.force, Some(&a.device))?;
    let opts = WithdrawDepositOptions {
        profile: joj_device::Profile::load(&a.device)?,
        mode: a.ftl.parse()?,
        transactions: a.transactions,
        page_size: a.page_size,
        seed: a.seed.get(),
    };
    let report = run(&opts)?;
    crate::output::emit(
        &report,
        a.output.save.as_deref(),
        a.output.force,
        a.output.json,
        || summary(&report),
    )
}

fn summary(r: &WithdrawDepositReport) -> String {
    let d = &r.device;
    let nvm = r.xftl.iftl.as_ref().map_or(String::new(), |s| {
        format!(
            ", {} B of metadata to NVM, {} B of data to flash",
            s.metadata_bytes_to_nvm, s.data_bytes_to_flash
        )
    });
    format!(
        "withdraw/deposit on {} ({}): {} application transactions (two databases and a ledger \
         each), {:.1} transactions/s modeled ({:.4} s); {} device commits; {:.3} flash pages \
         programmed for mapping per host page{nvm}; ledger {} B; databases intact, money \
         conserved\n",
        r.mode,
        d.profile,
        r.transactions,
        d.modeled_ops_per_sec,
        d.modeled_s,
        d.txn_commits,
        r.xftl.mapping_programs_per_host_page,
        r.ledger_bytes,
    )
}
