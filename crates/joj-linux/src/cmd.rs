//! Running the filesystem tools (mkfs, debugfs, xfs_db, btrfs) and reporting their failures
//! with the command line and stderr, so the message alone says what went wrong.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use crate::tools::{ToolMissing, find_tool};

/// An external tool that could not be run or that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    #[error(transparent)]
    Missing(#[from] ToolMissing),
    #[error("could not start `{program}`: {source}; fix: check that it is executable")]
    Spawn {
        program: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "`{command}` failed ({status}): {stderr}; fix: see the tool's message above \
         (device busy or too small for this filesystem are the usual causes)"
    )]
    Failed {
        command: String,
        status: std::process::ExitStatus,
        stderr: String,
    },
}

/// Runs `tool` (looked up with [`find_tool`]) and returns its stdout as text.
pub(crate) fn run<I, S>(tool: &str, args: I) -> Result<String, CommandError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let program = find_tool(tool)?;
    let args: Vec<_> = args
        .into_iter()
        .map(|a| a.as_ref().to_os_string())
        .collect();
    let output = Command::new(&program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| CommandError::Spawn {
            program: program.clone(),
            source,
        })?;
    if !output.status.success() {
        let mut command = tool.to_string();
        for a in &args {
            command.push(' ');
            command.push_str(&a.to_string_lossy());
        }
        return Err(CommandError::Failed {
            command,
            status: output.status,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
