//! `joj cleanup`: removes what dead joj runs left behind (after `kill -9`, an abort, a crash):
//! tracefs instances, mounts, loop devices, images and directories under `/run/joj`, and `--fs
//! host` temporary directories. Every `bench` or `compare` run on a kernel filesystem, and every
//! `restart`, does the same first; this does it on request. The sweep lives in
//! `joj_linux::leftovers`.

use crate::output::CliResult;
use clap::Args;
use joj_linux::leftovers::{self, LeftoverError, Scope};

#[derive(Args)]
pub struct CleanupArgs {}

pub fn main(_: CleanupArgs) -> CliResult {
    // A joj killed while a thread waited on its recording disk is stuck dying until that disk
    // is aborted; then it is dead and its things are found below.
    let aborted = leftovers::abort_dying();
    // Without root only this user's temporary directories can be looked at: those are still
    // removed, and the command then fails saying what it could not look at.
    let (found, not_root) = match leftovers::find(Scope::Everything) {
        Err(e @ LeftoverError::NeedsRoot { .. }) => (leftovers::find(Scope::TempDirs)?, Some(e)),
        found => (found?, None),
    };
    // Remove first, print after: a reader gone from stdout (`| head`) must not stop the
    // removal or hide the status.
    let mut sweep = leftovers::remove(found.remove);
    sweep.add(aborted);
    let printed = print(&found.keep, &sweep);
    for problem in &sweep.problems {
        eprintln!("joj: {problem}");
    }
    if let Some(e) = not_root {
        return Err(e.into());
    }
    if !sweep.problems.is_empty() {
        return Err(format!(
            "{} leftover(s) could not be removed (above, each with its fix)",
            sweep.problems.len()
        )
        .into());
    }
    printed
}

/// What was kept (a live process holds it) and what was removed, one line each.
fn print(keep: &[leftovers::Kept], sweep: &leftovers::Sweep) -> CliResult {
    for kept in keep {
        let things: Vec<String> = kept.resources.iter().map(ToString::to_string).collect();
        outln!(
            "kept {}: process {} ({}) is alive",
            things.join(", "),
            kept.pid,
            kept.command
        )?;
    }
    for line in sweep.lines() {
        outln!("{line}")?;
    }
    if sweep.is_empty() {
        outln!("nothing to clean up")?;
    }
    Ok(())
}
