//! What every command prints with: its result type, its JSON document, shared phrases.

/// `print!` that returns the write's error instead of panicking: a reader that went away
/// (`joj … | head -1`) ends the command quietly ([`is_closed_pipe`]) instead of a panic.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `println!` that returns the write's error instead of panicking (see [`out!`]).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// Whether `e` is stdout's reader having gone away: the command stops printing, as `cat` or
/// `grep` do, and exits without an error message.
pub fn is_closed_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Any error the commands report; printed with its chain of causes.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;

/// A command's JSON document: written to `save` when given, and printed on stdout as the only
/// output when `json`. Returns whether the command prints its table instead.
pub fn emit_json<T: serde::Serialize>(
    doc: &T,
    save: Option<&std::path::Path>,
    json: bool,
) -> Result<bool, Box<dyn std::error::Error>> {
    if let Some(path) = save {
        std::fs::write(path, serde_json::to_string_pretty(doc)?)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(doc)?)?;
    }
    Ok(!json)
}

/// "N erases", plus the map-area blocks when the profile erases them (`erase_map_blocks`).
pub fn erases_phrase(data_blocks: u64, map_blocks: u64) -> String {
    if map_blocks == 0 {
        format!("{data_blocks} erases")
    } else {
        format!("{data_blocks} erases (+{map_blocks} map blocks)")
    }
}
