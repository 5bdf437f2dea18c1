//! What can go wrong reading, importing or replaying a recording of file-system calls. Each
//! message names the file and line, the cause and the fix.

/// Errors of [`crate::syscalls`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyscallsError {
    #[error("cannot read {what}: {source}; fix: check that the file exists and is readable")]
    Read {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{what} is not a joj-syscalls recording (its first line is not a JSON header with \"format\": \"joj-syscalls\"); fix: give a file written by `joj syscalls import-strace` or `joj syscalls record`; strace text is read by `joj syscalls import-strace`"
    )]
    Foreign { what: String },
    #[error(
        "{what} is joj-syscalls version {found}, this joj reads version 1; fix: replay it with the joj that wrote it, or a newer joj"
    )]
    Version { what: String, found: u64 },
    #[error(
        "{what} line {line} is corrupt: {why}; fix: record it again (a recording is not meant to be edited)"
    )]
    Corrupt {
        what: String,
        line: u64,
        why: String,
    },
    #[error(
        "{what} says it holds {header} calls but has {found}; fix: the file was cut short or appended to: record it again"
    )]
    CountMismatch {
        what: String,
        header: u64,
        found: u64,
    },
    #[error("{what} line {line}: {why}; fix: record it again")]
    Invalid {
        what: String,
        line: u64,
        why: String,
    },
    #[error(
        "{what} line {line}: path {path:?} is not inside the recorded root (absolute, empty or climbing out with `..`); fix: paths in a recording are relative to its root: import again with --root set to the directory the program worked in"
    )]
    PathEscapesRoot {
        what: String,
        line: u64,
        path: String,
    },
    #[error(
        "{what} line {line}: {call} on descriptor {fd}, which no earlier open in the recording returned (or which was closed); fix: record from the program's start (strace -f COMMAND, not strace -p), so every file it uses is opened inside the recording"
    )]
    UnknownFd {
        what: String,
        line: u64,
        call: &'static str,
        fd: i32,
    },
    #[error(
        "{what} line {line}: {why}: {text:?}; fix: give the output of `strace -f -ttt -T -y -o FILE COMMAND` (joj syscalls record runs exactly that)"
    )]
    StraceLine {
        what: String,
        line: u64,
        why: super::strace_line::BadLine,
        text: String,
    },
    #[error(
        "{what}: no file-system call inside the root {root}; fix: check --root (the directory the program worked in, as strace shows it), and that strace ran with -f -y"
    )]
    NothingInRoot { what: String, root: String },
    #[error(
        "{what}: --bench-window found {found} syncfs call(s) on the root, a joj bench run makes two (the window's begin and end); fix: record `joj bench` with --trace on a scratch --fs, or import without --bench-window"
    )]
    NoBenchWindow { what: String, found: u64 },
    #[error(
        "{what} line {line}: rename between the root and outside it ({from} -> {to}); fix: record with --root at a directory that holds both"
    )]
    RenameAcrossRoot {
        what: String,
        line: u64,
        from: String,
        to: String,
    },
    #[error(
        "replay: call {seq} ({call}) on {path}: the recording says {recorded}, the replay got {got}; fix: replay on a fresh filesystem (joj syscalls replay makes one); a recording made on another filesystem kind may depend on its behaviour"
    )]
    Diverged {
        seq: u64,
        call: &'static str,
        path: String,
        recorded: String,
        got: String,
    },
}
