//! What can go wrong reading, importing or replaying a recording of file-system calls. Each
//! message names the file and line, the cause and the fix; what a message repeats of the input
//! (a path, a line, a parser's complaint) is cut to a few dozen characters
//! ([`joj_trace::input::quoted`]).

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
    /// The file cannot be read as an input: not a regular file, too large.
    #[error(transparent)]
    Input(#[from] joj_trace::InputError),
    #[error(
        "{what} line {line} is longer than {limit_bytes} bytes, and no line of a recording is \
         near that long; fix: check that this is the file meant (a joj-syscalls recording)"
    )]
    LineTooLong {
        what: String,
        line: u64,
        limit_bytes: usize,
    },
    #[error(
        "{what} is not a joj-syscalls recording (its first line is not a JSON header with \"format\": \"joj-syscalls\"); fix: give a file written by `joj syscalls import-strace` or `joj syscalls record`; strace text is read by `joj syscalls import-strace`"
    )]
    Foreign { what: String },
    #[error(
        "{what} is joj-syscalls version {found}, this joj reads version 1; fix: replay it with the joj that wrote it, or a newer joj"
    )]
    Version { what: String, found: u64 },
    /// `why` is the parser's complaint, cut ([`joj_trace::input::quoted`]).
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
    /// A call a replay cannot make as recorded: a length past one buffer, an offset past
    /// `off_t`, a negative descriptor, an unknown `whence` or flag, a path longer than
    /// `PATH_MAX`, the root itself removed.
    #[error(
        "{what} line {line}: {why}; fix: a recording of a real program never holds this: \
         record the program again (joj syscalls record) rather than editing the file"
    )]
    OutOfBounds {
        what: String,
        line: u64,
        why: String,
    },
    /// `path` is quoted and cut ([`joj_trace::input::quoted`]).
    #[error(
        "{what} line {line}: path {path} is not inside the recorded root (absolute, empty or climbing out with `..`); fix: paths in a recording are relative to its root: import again with --root set to the directory the program worked in"
    )]
    PathEscapesRoot {
        what: String,
        line: u64,
        path: String,
    },
    /// A call on a descriptor no earlier open of a recording read returned: an edited file (an
    /// import leaves such calls out, [`crate::syscalls::strace`]).
    #[error(
        "{what} line {line}: {call} on descriptor {fd}, which no earlier open in the recording returned (or which was closed); fix: a recording joj writes never holds this (its import leaves out, and counts, the calls on descriptors the program did not open): record the program again (joj syscalls record, or strace -f COMMAND and joj syscalls import-strace) rather than editing the file"
    )]
    UnknownFd {
        what: String,
        line: u64,
        call: &'static str,
        fd: i32,
    },
    /// `text` is the line quoted and cut ([`joj_trace::input::quoted`]).
    #[error(
        "{what} line {line}: {why}: {text}; fix: give the output of `strace -f -ttt -T -y -o FILE COMMAND` (joj syscalls record runs exactly that)"
    )]
    StraceLine {
        what: String,
        line: u64,
        why: super::strace_line::BadLine,
        text: String,
    },
    /// A call strace shows that no kernel returns (more bytes than asked for, a negative
    /// offset, a count that is not a number) or that is past a recording's bounds.
    #[error(
        "{what} line {line}: {call}: {why}; fix: give strace's output unedited (`strace -f -ttt -T -y -o FILE COMMAND`); a call past joj's bounds cannot be replayed"
    )]
    StraceCall {
        what: String,
        line: u64,
        call: String,
        why: String,
    },
    #[error(
        "{what}: no file-system call inside the root {root}; fix: check --root (the directory the program worked in, as strace shows it), and that strace ran with -f -y"
    )]
    NothingInRoot { what: String, root: String },
    #[error(
        "{what}: --bench-window found {found} syncfs call(s) on the root, a joj bench run makes two (the window's begin and end); fix: record `joj bench` with --trace on a scratch --fs, or import without --bench-window"
    )]
    NoBenchWindow { what: String, found: u64 },
    /// `from` and `to` are quoted and cut.
    #[error(
        "{what} line {line}: rename between the root and outside it ({from} -> {to}); fix: record with --root at a directory that holds both"
    )]
    RenameAcrossRoot {
        what: String,
        line: u64,
        from: String,
        to: String,
    },
    /// A replayed call whose outcome differs from the recorded one; `fix` follows from what the
    /// replay got (a full filesystem, the descriptor limit, a size the filesystem refuses).
    #[error(
        "replay: call {seq} ({call}) on {path}: the recording says {recorded}, the replay got {got}; fix: {fix}"
    )]
    Diverged {
        seq: u64,
        call: &'static str,
        path: String,
        recorded: String,
        got: String,
        fix: String,
    },
    /// A recording of more threads than a replay starts (one OS thread per recorded thread).
    #[error(
        "replay: the recording holds calls of {threads} threads, and a replay starts one thread per recorded thread, at most {limit}; fix: record the part of the program that does the I/O of interest, or replay a recording of fewer threads"
    )]
    TooManyThreads { threads: u64, limit: u64 },
    /// The replay could not start one of its threads (one per recorded thread); the threads
    /// started were stopped.
    #[error(
        "replay: cannot start replay thread {started_plus_one} of {threads} (one per recorded thread): {source}; fix: the process or pids-cgroup limit is too low for this recording (`ulimit -u`, pids.max of joj's cgroup): raise it, or replay a recording of fewer threads"
    )]
    Thread {
        started_plus_one: u64,
        threads: u64,
        #[source]
        source: std::io::Error,
    },
    /// A replay thread could not be kept to one CPU (`sched_setaffinity`).
    #[error(
        "replay: cannot keep replay thread {thread} to one CPU (sched_setaffinity): {source}; fix: run joj where it may set its threads' CPU affinity (a container or cgroup that forbids it: allow it, or give joj at least one CPU of its own)"
    )]
    Affinity {
        thread: u64,
        #[source]
        source: std::io::Error,
    },
    /// The recording holds more descriptors open at once than this process may open.
    #[error(
        "replay: the recording holds {needed} descriptors open at once and joj needs about {margin} of its own, but its hard limit is {hard} (ulimit -Hn); fix: raise the hard limit of open files (`ulimit -Hn {}` as root, or LimitNOFILE) and replay again",
        .needed + .margin
    )]
    TooManyDescriptors { needed: u64, margin: u64, hard: u64 },
}

impl SyscallsError {
    /// The error with the line it names, `line`, replaced by `to(line)`: a recording's line by
    /// the line of the strace text its call was imported from, say.
    pub(crate) fn on_line(mut self, to: impl FnOnce(u64) -> u64) -> SyscallsError {
        if let SyscallsError::Invalid { line, .. }
        | SyscallsError::OutOfBounds { line, .. }
        | SyscallsError::PathEscapesRoot { line, .. }
        | SyscallsError::UnknownFd { line, .. } = &mut self
        {
            *line = to(*line);
        }
        self
    }
}
