//! Shared by joj-cli's tests: starting joj and the workflow's scripts, and, for the tests that kill
//! or signal a `joj` run, what a process left on the machine,
//! found by the pid joj puts in every name (`joj_linux::names`), and signals without a crate.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test
#![allow(dead_code)]

pub mod long_trace;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What a process's pid names on the machine: loop devices whose image carries it, mounts and
/// directories under `/run/joj`, tracefs instances.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Held {
    pub loops: Vec<String>,
    pub mounts: Vec<String>,
    pub dirs: Vec<String>,
    pub instances: Vec<String>,
}

impl Held {
    /// Everything a traced scratch run holds in its window.
    pub fn all_there(&self) -> bool {
        !self.loops.is_empty()
            && !self.mounts.is_empty()
            && !self.dirs.is_empty()
            && !self.instances.is_empty()
    }

    pub fn nothing(&self) -> bool {
        *self == Held::default()
    }
}

fn names_in(dir: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// What `pid` holds now.
pub fn held_by(pid: u32) -> Held {
    let tag = format!("-{pid}-");
    let loops = names_in("/sys/block")
        .into_iter()
        .filter(|n| {
            std::fs::read_to_string(format!("/sys/block/{n}/loop/backing_file"))
                .unwrap_or_default()
                .contains(&tag)
        })
        .map(|n| format!("/dev/{n}"))
        .collect();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(str::to_string))
        .filter(|m| m.starts_with("/run/joj/") && m.contains(&tag))
        .collect();
    let dirs = names_in("/run/joj")
        .into_iter()
        .filter(|n| n.contains(&tag))
        .map(|n| format!("/run/joj/{n}"))
        .collect();
    let instances = names_in("/sys/kernel/tracing/instances")
        .into_iter()
        .filter(|n| n.starts_with(&format!("joj-{pid}-")))
        .collect();
    Held {
        loops,
        mounts,
        dirs,
        instances,
    }
}

/// A started `joj`; a test that fails before it ends stops it with Ctrl-C (so it cleans up)
/// rather than leave it running.
pub struct Run(pub Child);

impl Run {
    pub fn id(&self) -> u32 {
        self.0.id()
    }

    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.0.wait().unwrap()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            signal(self.0.id(), SIGINT);
            let _ = self.0.wait();
        }
    }
}

/// `joj` with `args` and `--out out`, working in `out` (where a core file would go), stdout and
/// stderr discarded, started.
pub fn spawn_joj(args: &[&str], out: &Path) -> Run {
    let child = joj_command()
        .args(args)
        .arg("--out")
        .arg(out)
        .current_dir(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Run(child)
}

/// The path of the `joj` under test, for a test that has another program start it.
pub const JOJ: &str = env!("CARGO_BIN_EXE_joj");

/// The `joj` under test, to give arguments, a directory, an environment or stdin to: every CLI
/// test starts joj through this (or [`run_joj`]).
pub fn joj_command() -> Command {
    Command::new(JOJ)
}

/// `joj` with `args`, started with its stdout and stderr piped to the test, not waited for.
pub fn spawn_joj_piped(args: &[&str]) -> std::process::Child {
    joj_command()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// `joj` with `args`, run to its end.
pub fn run_joj(args: &[&str]) -> Output {
    joj_command().args(args).output().unwrap()
}

/// `joj` with `args` (text or paths), run to its end, which must be a success (else the test
/// fails with joj's stderr): its stdout.
pub fn joj_ok<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> Vec<u8> {
    let out = joj_command().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `joj` with `args`, run to its end: (exit ok, stdout, stderr) as text.
pub fn run_joj_text(args: &[&str]) -> (bool, String, String) {
    let out = run_joj(args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `joj ARGS` whose stdout is one JSON document: (exit ok, the document, stderr). Afterwards
/// nothing the run made is left: no FUSE mount, loop device, mount or directory with its pid.
pub fn joj_json_leaving_nothing(args: &[&str]) -> (bool, serde_json::Value, String) {
    let child = joj_command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {stderr}"));
    let left = held_by(pid);
    assert!(left.nothing(), "the run left {left:?}");
    (out.status.success(), doc, stderr)
}

/// `doc[key]` as a count, or a panic naming the key.
pub fn count(doc: &serde_json::Value, key: &str) -> u64 {
    doc[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing: {doc}"))
}

/// A `--fs host` run long enough to be signalled, with `TMPDIR=tmp` and `--out out`, started
/// and waited for until its database is in its temporary directory.
pub fn long_host_run(tmp: &Path, out: &Path) -> Child {
    let child = joj_command()
        .args([
            "bench",
            "--fs",
            "host",
            "-n",
            "100000",
            "--interval-ms",
            "2",
        ])
        .arg("--out")
        .arg(out)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !temp_dirs_of(child.id(), tmp)
        .first()
        .is_some_and(|d| d.join("joj-0.db").exists())
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// A traced run on a scratch ext4 long enough to be killed in its window.
pub const LONG_TRACED_BENCH: [&str; 10] = [
    "bench",
    "--fs",
    "ext4",
    "--trace",
    "-n",
    "100000",
    "--interval-ms",
    "2",
    "--image-mib",
    "64",
];

/// Waits until `pid` holds everything a traced scratch run holds in its window.
pub fn wait_for_the_window(pid: u32) {
    let t0 = Instant::now();
    while !held_by(pid).all_there() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never started: {:?}",
            held_by(pid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
}

/// Sends `sig` to `pid`.
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: plain kill(2) on a child of this test.
    assert_eq!(unsafe { libc_kill(pid as i32, sig) }, 0);
}

pub const SIGINT: i32 = 2;
pub const SIGABRT: i32 = 6;
pub const SIGKILL: i32 = 9;
pub const SIGTERM: i32 = 15;

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// The host temporary directories `pid` made in `tmp` (`joj-<pid>-XXXXXX`).
pub fn temp_dirs_of(pid: u32, tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("joj-{pid}-"))
                })
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Starts a long traced scratch run, kills it with `sig` (one joj does not handle) in its
/// window, and returns its pid and what it left, which must be everything it held.
pub fn traced_run_killed_by(sig: i32, out: &Path) -> (u32, Held) {
    let mut killed = spawn_joj(&LONG_TRACED_BENCH, out);
    let pid = killed.id();
    wait_for_the_window(pid);
    signal(pid, sig);
    killed.wait();
    let left = held_by(pid);
    assert!(
        left.all_there(),
        "signal {sig} left nothing to sweep: {left:?}"
    );
    (pid, left)
}

/// Runs a short untraced scratch run and checks that it removed what `pid` `left`, in one
/// stderr line listing each thing in removal order.
pub fn next_run_removes(pid: u32, left: &Held, out: &Path) {
    let next = joj_command()
        .args(["bench", "--fs", "ext4", "-n", "5", "--image-mib", "64"])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{stderr}");
    let prefix = format!("joj: removed leftovers of dead joj {pid}: ");
    let line = stderr
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in:\n{stderr}"));
    let mut expected: Vec<String> = left
        .instances
        .iter()
        .map(|i| format!("tracefs instance {i}"))
        .collect();
    // A scratch directory's own mount is the tmpfs of its images, unmounted after the loops.
    let (memory, mounts): (Vec<_>, Vec<_>) =
        left.mounts.iter().partition(|m| left.dirs.contains(m));
    expected.extend(mounts.iter().map(|m| format!("{m} (mount)")));
    expected.extend(left.loops.iter().cloned());
    expected.extend(memory.iter().map(|m| format!("{m} (tmpfs of its images)")));
    expected.extend(
        left.dirs
            .iter()
            .map(|d| format!("{d} (images and directory)")),
    );
    assert_eq!(line, format!("{prefix}{}", expected.join(", ")));
    assert!(
        held_by(pid).nothing(),
        "left after the sweep: {:?}",
        held_by(pid)
    );
}

/// `joj report RESULTS -o PAGE`: its output, whatever it was.
pub fn joj_report(results: &Path, page: &Path) -> Output {
    joj_report_with(results, page, &[])
}

/// `joj report RESULTS -o PAGE OPTIONS…`.
pub fn joj_report_with(results: &Path, page: &Path, options: &[&str]) -> Output {
    joj_command()
        .arg("report")
        .arg(results)
        .arg("-o")
        .arg(page)
        .args(options)
        .output()
        .unwrap()
}

/// `joj trace --json --out <temp> OPTIONS -- COMMAND…`: its JSON document. Panics with joj's
/// stderr when joj (or the command) failed.
pub fn joj_trace_json(options: &[&str], command: &[&str]) -> serde_json::Value {
    joj_trace_json_in(None, options, command)
}

/// [`joj_trace_json`] started in `dir` (else in the test's own directory).
pub fn joj_trace_json_in(
    dir: Option<&std::path::Path>,
    options: &[&str],
    command: &[&str],
) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let mut joj = joj_command();
    if let Some(dir) = dir {
        joj.current_dir(dir);
    }
    let run = joj
        .args(["trace", "--json"])
        .args(options)
        .arg("--out")
        .arg(out.path())
        .arg("--")
        .args(command)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "joj trace {options:?} -- {command:?}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_slice(&run.stdout).unwrap()
}

/// The per-file row of `path` in a `joj trace` document.
pub fn traced_file<'a>(doc: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    let files = doc["command"]["files"].as_array().expect("command.files");
    files
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no {path} row in {files:?}"))
}

/// The header of a synthetic trace of one loop device (`7:0`, the main device) whose
/// transactions are `transactions`: what the replay tests write before `joj replay`.
pub fn loop0_header(transactions: u64) -> joj_trace::TraceHeader {
    let mut meta = serde_json::Map::new();
    meta.insert("transactions".into(), transactions.into());
    joj_trace::TraceHeader {
        clock: joj_trace::Clock::Relative,
        devices: vec![joj_trace::TraceDevice {
            dev: "7:0".into(),
            role: joj_trace::DeviceRole::Main,
            name: "/dev/loop0".into(),
        }],
        source: joj_trace::TraceSource::Tracefs,
        meta,
    }
}

/// `DIR/two.trace.jsonl`: a synthetic trace of two loop devices (`7:0` and `7:1`, both main
/// devices, as the two-device replay tests give them) holding `records`.
pub fn two_device_trace(
    dir: &std::path::Path,
    records: &[joj_trace::TraceRecord],
) -> std::path::PathBuf {
    let header = joj_trace::TraceHeader {
        clock: joj_trace::Clock::Mono,
        devices: ["7:0", "7:1"]
            .map(|dev| joj_trace::TraceDevice {
                dev: dev.to_string(),
                role: joj_trace::DeviceRole::Main,
                name: format!("/dev/loop-{dev}"),
            })
            .to_vec(),
        source: joj_trace::TraceSource::Tracefs,
        meta: Default::default(),
    };
    let path = dir.join("two.trace.jsonl");
    let file = std::fs::File::create(&path).unwrap();
    joj_trace::write_trace(file, &header, records).unwrap();
    path
}

/// How a bounded run of `joj` ended.
#[derive(Debug)]
pub struct Bounded {
    /// The exit status; `None` when it was killed (by the deadline, or an abort).
    pub code: Option<i32>,
    pub stderr: String,
    pub pid: u32,
}

/// `joj ARGS` with 4 GiB of address space and a 60-second deadline (then SIGKILL): a hostile
/// input that would make joj allocate without bound or block for ever fails the test quickly
/// instead of taking the machine's memory or hanging it. Afterwards nothing the run made may
/// be left.
pub fn joj_bounded(args: &[&str]) -> Bounded {
    joj_limited(&[], None, args)
}

/// [`joj_bounded`] with more `prlimit` options (`--nofile=100:300`) and, when `cgroup` names a
/// cgroup directory, joj moved into it before it starts.
pub fn joj_limited(limits: &[&str], cgroup: Option<&Path>, args: &[&str]) -> Bounded {
    joj_limited_to(limits, cgroup, args, Stdio::null())
}

/// [`joj_bounded`], its standard output written to `out`.
pub fn joj_bounded_to(args: &[&str], out: &Path) -> Bounded {
    joj_limited_to(&[], None, args, std::fs::File::create(out).unwrap().into())
}

fn joj_limited_to(limits: &[&str], cgroup: Option<&Path>, args: &[&str], stdout: Stdio) -> Bounded {
    let mut cmd = Command::new("sh");
    // The shell moves itself into the cgroup, then becomes prlimit, which becomes joj: one pid.
    let join = match cgroup {
        Some(c) => format!("echo $$ > '{}/cgroup.procs' && ", c.display()),
        None => String::new(),
    };
    cmd.arg("-c")
        .arg(format!("{join}exec \"$@\""))
        .arg("sh")
        .arg("prlimit")
        .arg(format!("--as={}", 4u64 << 30))
        .args(limits)
        .arg("--")
        .arg(JOJ)
        .args(args);
    let mut child = cmd.stdout(stdout).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() >= deadline {
            signal(pid, SIGKILL);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    let left = held_by(pid);
    assert!(left.nothing(), "joj {args:?} left {left:?}");
    Bounded {
        code: status.and_then(|s| s.code()),
        stderr,
        pid,
    }
}

/// A joj-blocklog whose base image is an ext4 filesystem made by `mkfs.ext4 -d staging` (so
/// it holds whatever `staging` holds: symbolic links, FIFOs, device nodes), written to
/// `dir/crafted.blocklog` as version 1 (no labels) with a correct checksum, as a hostile log
/// would be. Its records: one transaction begun, a write of the image's first block with the
/// same bytes, a flush, the transaction acknowledged.
pub fn crafted_ext4_log(staging: &Path, dir: &Path) -> PathBuf {
    crafted_ext4_log_edited(staging, dir, |_| {})
}

/// The 64 MiB ext4 image `mkfs.ext4 -d staging` makes (in `dir`, removed after), with `edit`
/// changing its bytes: as a log's base image, and its first block.
fn crafted_ext4_base(
    staging: &Path,
    dir: &Path,
    edit: impl FnOnce(&mut [u8]),
) -> (joj_linux::record::SparseImage, Vec<u8>) {
    use joj_linux::record::{BLOCK_BYTES, SparseImage};
    let image = dir.join("crafted.img");
    let size_bytes = 64u64 << 20;
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(size_bytes))
        .unwrap();
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-b", "4096", "-d"])
        .arg(staging)
        .arg(&image)
        .output()
        .unwrap();
    assert!(
        mkfs.status.success(),
        "mkfs.ext4 -d: {}",
        String::from_utf8_lossy(&mkfs.stderr)
    );
    let mut bytes = std::fs::read(&image).unwrap();
    std::fs::remove_file(&image).unwrap();
    edit(&mut bytes);
    let mut base = SparseImage::zeroed(size_bytes);
    for (i, block) in bytes.chunks(BLOCK_BYTES as usize).enumerate() {
        if block.iter().any(|&b| b != 0) {
            base.write(i as u64 * BLOCK_BYTES, block);
        }
    }
    bytes.truncate(BLOCK_BYTES as usize);
    (base, bytes)
}

/// Waits up to `within` for nothing of the run `pid` to be held (mounts, loop devices, trace
/// instances, directories: [`held_by`]), and fails the test, saying what is left `after`, if
/// something still is.
pub fn assert_nothing_left_by(pid: u32, within: std::time::Duration, after: &str) {
    let t0 = std::time::Instant::now();
    while !held_by(pid).nothing() && t0.elapsed() < within {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        held_by(pid).nothing(),
        "left behind {after}: {:?}",
        held_by(pid)
    );
}

/// A staging folder for [`crafted_ext4_log_of`] holding the empty `joj/` a run makes, or
/// `None` where this machine runs no kernel test on ext4 (`testgate::kernel_test` says why, and
/// fails the test where kernel tests are required).
pub fn ext4_staging() -> Option<tempfile::TempDir> {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return None;
    }
    let staging = tempfile::tempdir().unwrap();
    std::fs::create_dir(staging.path().join("joj")).unwrap();
    Some(staging)
}

/// A joj-blocklog (version 2) whose base image `mkfs.ext4 -d staging` makes, with `labels`
/// and the records `ops`, written to `dir/crafted.blocklog` with a correct checksum, as a
/// hostile log would be.
pub fn crafted_ext4_log_of(
    staging: &Path,
    dir: &Path,
    labels: &[(&str, &str)],
    ops: Vec<joj_linux::record::LogOp>,
) -> PathBuf {
    use joj_linux::record::BlockLog;
    let (base, _) = crafted_ext4_base(staging, dir, |_| {});
    let log = BlockLog {
        base,
        ops,
        labels: (labels.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    let path = dir.join("crafted.blocklog");
    log.write_to(std::io::BufWriter::new(
        std::fs::File::create(&path).unwrap(),
    ))
    .unwrap();
    path
}

/// [`crafted_ext4_log`], with `edit` changing the image's bytes after `mkfs.ext4 -d`.
pub fn crafted_ext4_log_edited(
    staging: &Path,
    dir: &Path,
    edit: impl FnOnce(&mut [u8]),
) -> PathBuf {
    use joj_linux::record::{BlockLog, LogOp, Mark};
    let (base, first) = crafted_ext4_base(staging, dir, edit);
    let log = BlockLog {
        base,
        ops: vec![
            LogOp::Mark(Mark::Begun(1)),
            LogOp::Write {
                offset_bytes: 0,
                data: first,
            },
            LogOp::Flush,
            LogOp::Mark(Mark::Acknowledged(1)),
        ],
        ..BlockLog::default()
    };
    let mut bytes = Vec::new();
    log.write_to(&mut bytes).unwrap();
    // As a version-1 log (before labels): the same bytes with version 1, the label length's
    // place reserved (0, as there are no labels), and the checksum made again.
    assert!(log.labels.is_empty() && bytes[20..24] == [0; 4]);
    bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
    let end = bytes.len() - 4;
    let crc = crc32(&bytes[..end]);
    bytes[end..].copy_from_slice(&crc.to_le_bytes());
    let path = dir.join("crafted.blocklog");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// CRC-32/ISO-HDLC, the joj-blocklog checksum.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// `joj ARGS` run to its end: its output, and what its pid left on the machine.
pub fn joj_leaving(args: &[&str]) -> (Output, Held) {
    let child = joj_command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    (out, held_by(pid))
}

/// One of the workflow's scripts (`workflow/scripts/NAME`) run with the system Python
/// (`/usr/bin/python3`, which the tests of the workflow's scripts need: without it they fail and
/// name it), with `args`.
pub fn workflow_script(name: &str, args: &[&str]) -> Output {
    let p = "/usr/bin/python3";
    assert!(
        Path::new(p).is_file(),
        "{p} is missing: this test runs the workflow's {name}; install python3"
    );
    Command::new(p)
        .arg(format!(
            "{}/../../workflow/scripts/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .args(args)
        .output()
        .unwrap()
}

/// Fails, naming the fix, when strace is missing: `joj syscalls record` runs the command under
/// it.
pub fn need_strace() {
    assert!(
        Path::new("/usr/bin/strace").is_file(),
        "strace is missing (joj syscalls record runs the command under it); fix: apt-get install strace"
    );
}

/// For a test that records a command with `joj syscalls record` on ext4: `None` when
/// kernel-level tests are skipped on purpose; else a temporary directory and, made in it, the
/// `work` directory the command runs in.
pub fn recording_dirs() -> Option<(tempfile::TempDir, PathBuf)> {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return None;
    }
    need_strace();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir(&root).unwrap();
    Some((dir, root))
}

/// `joj syscalls replay REC --fs ext4 --timing fast --out OUT`: its stderr if it failed.
pub fn replay_on_ext4(rec: &Path, out: &Path) -> Result<(), String> {
    let replayed = joj_command()
        .args(["syscalls", "replay"])
        .arg(rec)
        .args(["--fs", "ext4", "--timing", "fast", "--out"])
        .arg(out)
        .output()
        .unwrap();
    if replayed.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&replayed.stderr).into_owned())
    }
}

/// What `joj device calibrate DIR` (64 MiB, 10 samples) did to a directory it should refuse.
pub struct RefusedCalibration {
    pub ok: bool,
    pub err: String,
    /// The names left in DIR afterwards.
    pub left: Vec<std::ffi::OsString>,
    /// Whether a profile was written.
    pub profile_written: bool,
}

/// Calibrate `dir` with the smallest test file, writing the profile elsewhere.
pub fn calibrate_small(dir: &Path) -> RefusedCalibration {
    let out = tempfile::tempdir().unwrap();
    let profile = out.path().join("o.json");
    let (ok, _, err) = run_joj_text(&[
        "device",
        "calibrate",
        dir.to_str().unwrap(),
        "-o",
        profile.to_str().unwrap(),
        "--size-mib",
        "64",
        "--samples",
        "10",
    ]);
    let left = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    RefusedCalibration {
        ok,
        err,
        left,
        profile_written: profile.exists(),
    }
}

/// The built-in profile `name` as its JSON file holds it, changed by `edit`, written to
/// `dir/FILE_NAME.json` (a profile file, as a user would give one): its path.
pub fn edited_profile(
    dir: &Path,
    name: &str,
    file_name: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> PathBuf {
    let builtin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../joj-device/profiles")
        .join(format!("{name}.json"));
    let mut p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(builtin).unwrap()).unwrap();
    edit(&mut p);
    let path = dir.join(format!("{file_name}.json"));
    std::fs::write(&path, p.to_string()).unwrap();
    path
}
