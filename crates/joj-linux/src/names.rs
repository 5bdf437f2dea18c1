//! The names joj gives what it makes on the machine, written once here so that the code making
//! a resource and the sweep that recognises a dead run's leftovers ([`crate::leftovers`]) agree.
//! Every name carries the pid of the process that made it:
//!
//! | resource | name | where |
//! |---|---|---|
//! | scratch directory | `<fs>-<pid>-XXXXXX` (a crash copy: `<fs>-<pid>-crash-XXXXXX`) | [`crate::scratch::RUN_DIR`] |
//! | image file | `<fs>-<pid>-<role>-XXXXXX.img` (in a crash copy: `<role>.img`) | its scratch directory |
//! | tracefs instance | `joj-<pid>-<n>`, or `joj-<pid>-<n>-ns<inode>` outside the initial pid namespace | `/sys/kernel/tracing/instances` |
//! | host temporary directory | `joj-<pid>-XXXXXX`, mode 0700 | `$TMPDIR` or `/tmp` |
//! | recording disk (a FUSE mount, holding images) | `rec-<pid>-XXXXXX` | [`crate::scratch::RUN_DIR`] |
//!
//! `XXXXXX` is [`RANDOM_CHARS`] random ASCII letters and digits (tempfile's), `<fs>` a
//! [`FsKind`] name, `<n>` a per-process counter. Parsing is pure and strict: a name gives its
//! pid only if it has exactly one of these shapes.
//!
//! tracefs instances are seen by every pid namespace on the kernel (a container's joj and the
//! host's), while a pid means something only in its own namespace: an instance's name carries
//! its maker's pid-namespace inode unless that is the initial namespace, and only names of our
//! own namespace give a pid. Mounts are per mount namespace and images are recognised by their
//! path under [`crate::scratch::RUN_DIR`], so they need no tag.

use crate::fs::FsKind;

/// Random characters at the end of a scratch or temporary directory's name.
pub const RANDOM_CHARS: usize = 6;

/// Prefix of the host temporary directories joj makes for `--fs host` runs.
const TEMP_DIR_PREFIX: &str = "joj-";
/// Prefix of a recording disk's directory (no [`FsKind`] name starts with it).
const RECORDING_DIR_PREFIX: &str = "rec-";
/// Prefix of joj's tracefs instances.
const TRACE_INSTANCE_PREFIX: &str = "joj-";
/// The roles an image file can have, as they appear in its name.
const IMAGE_ROLES: [&str; 2] = ["main", "journal"];

/// Prefix of a scratch directory of `kind` made by `pid` (tempfile adds the random part).
pub fn scratch_dir_prefix(kind: FsKind, pid: u32) -> String {
    format!("{}-{pid}-", kind.name())
}

/// Prefix of the scratch directory of a crash copy.
pub fn crash_dir_prefix(kind: FsKind, pid: u32) -> String {
    format!("{}-{pid}-crash-", kind.name())
}

/// Prefix of an image file (`role` is `main` or `journal`); its suffix is `.img`.
pub fn image_prefix(kind: FsKind, pid: u32, role: &str) -> String {
    format!("{}-{pid}-{role}-", kind.name())
}

/// Prefix of the directory of a recording disk ([`crate::record::RecordingDisk`]) of `pid`.
pub fn recording_dir_prefix(pid: u32) -> String {
    format!("{RECORDING_DIR_PREFIX}{pid}-")
}

/// The pid in a recording disk's directory name (`rec-<pid>-XXXXXX`).
pub fn recording_dir_pid(name: &str) -> Option<u32> {
    let (pid, random) = pid_and_rest(name.strip_prefix(RECORDING_DIR_PREFIX)?)?;
    is_random(random).then_some(pid)
}

/// The inode of the initial pid namespace (`PROC_PID_INIT_INO` in the kernel).
pub const INITIAL_PID_NAMESPACE: u64 = 0xEFFF_FFFC;

/// The inode of this process's pid namespace, read once (`/proc/self/ns/pid`); the initial
/// namespace's when it cannot be read.
pub fn own_pid_namespace() -> u64 {
    use std::os::unix::fs::MetadataExt;
    static NS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *NS.get_or_init(|| {
        std::fs::metadata("/proc/self/ns/pid").map_or(INITIAL_PID_NAMESPACE, |m| m.ino())
    })
}

/// The `n`-th tracefs instance name of `pid` in the pid namespace of inode `ns`.
pub fn trace_instance(pid: u32, n: u64, ns: u64) -> String {
    if ns == INITIAL_PID_NAMESPACE {
        format!("{TRACE_INSTANCE_PREFIX}{pid}-{n}")
    } else {
        format!("{TRACE_INSTANCE_PREFIX}{pid}-{n}-ns{ns}")
    }
}

/// Prefix of a host temporary directory of `pid`.
pub fn temp_dir_prefix(pid: u32) -> String {
    format!("{TEMP_DIR_PREFIX}{pid}-")
}

/// A pid as joj writes it: decimal digits only, no sign, no leading zero, not 0.
fn pid(s: &str) -> Option<u32> {
    let plain = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0');
    plain.then(|| s.parse().ok()).flatten()
}

/// `s` split as `<pid>-<rest>` with a non-empty rest.
fn pid_and_rest(s: &str) -> Option<(u32, &str)> {
    let (p, rest) = s.split_once('-')?;
    Some((pid(p)?, rest)).filter(|(_, r)| !r.is_empty())
}

fn is_random(s: &str) -> bool {
    s.len() == RANDOM_CHARS && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// What follows `<fs>-` in `name`, once for every kind whose name `name` starts with (`ext4`
/// and `ext4-writeback` both for `ext4-writeback-...`; only one can be followed by a pid).
fn after_kind(name: &str) -> impl Iterator<Item = &str> {
    FsKind::ALL
        .into_iter()
        .filter_map(move |k| name.strip_prefix(k.name())?.strip_prefix('-'))
}

/// The pid in a scratch directory's name (`<fs>-<pid>-XXXXXX` or `<fs>-<pid>-crash-XXXXXX`).
pub fn scratch_dir_pid(name: &str) -> Option<u32> {
    after_kind(name).find_map(|rest| {
        let (pid, tail) = pid_and_rest(rest)?;
        let random = tail.strip_prefix("crash-").unwrap_or(tail);
        is_random(random).then_some(pid)
    })
}

/// The pid in an image file's name (`<fs>-<pid>-<role>-XXXXXX.img`).
pub fn image_pid(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(".img")?;
    after_kind(stem).find_map(|rest| {
        let (pid, tail) = pid_and_rest(rest)?;
        let (role, random) = tail.split_once('-')?;
        (IMAGE_ROLES.contains(&role) && is_random(random)).then_some(pid)
    })
}

/// Whether `name` is an image file inside a crash copy's scratch directory (`<role>.img`).
pub fn is_crash_image(name: &str) -> bool {
    name.strip_suffix(".img")
        .is_some_and(|role| IMAGE_ROLES.contains(&role))
}

/// The pid in a tracefs instance's name made in the pid namespace of inode `ns`; `None` for
/// another namespace's instance, whose pid says nothing here.
pub fn trace_instance_pid(name: &str, ns: u64) -> Option<u32> {
    let (pid, rest) = pid_and_rest(name.strip_prefix(TRACE_INSTANCE_PREFIX)?)?;
    let (n, tag) = match rest.split_once("-ns") {
        Some((n, tag)) => (n, Some(tag.parse::<u64>().ok()?)),
        None => (rest, None),
    };
    let same_namespace = tag.unwrap_or(INITIAL_PID_NAMESPACE) == ns;
    (n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() && same_namespace).then_some(pid)
}

/// The pid in a host temporary directory's name (`joj-<pid>-XXXXXX`).
pub fn temp_dir_pid(name: &str) -> Option<u32> {
    let (pid, random) = pid_and_rest(name.strip_prefix(TEMP_DIR_PREFIX)?)?;
    is_random(random).then_some(pid)
}

/// Whether a file inside a host temporary directory has a name joj's workloads give their
/// files (`joj-0.db`, `joj-0.db-wal`, `joj-file-0.dat`, ...).
pub fn is_workload_file(name: &str) -> bool {
    name.starts_with("joj-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_made_name_parses_back_to_its_pid() {
        for kind in FsKind::ALL {
            assert_eq!(
                scratch_dir_pid(&format!("{}aB3xY9", scratch_dir_prefix(kind, 4242))),
                Some(4242)
            );
            assert_eq!(
                scratch_dir_pid(&format!("{}Zz0000", crash_dir_prefix(kind, 7))),
                Some(7)
            );
            for role in IMAGE_ROLES {
                let image = format!("{}q1w2e3.img", image_prefix(kind, 31, role));
                assert_eq!(image_pid(&image), Some(31), "{image}");
            }
        }
        let init = INITIAL_PID_NAMESPACE;
        assert_eq!(trace_instance(12345, 0, init), "joj-12345-0");
        assert_eq!(
            trace_instance_pid(&trace_instance(12345, 0, init), init),
            Some(12345)
        );
        assert_eq!(trace_instance_pid(&trace_instance(1, 17, 77), 77), Some(1));
        assert_eq!(
            temp_dir_pid(&format!("{}AbCdEf", temp_dir_prefix(99))),
            Some(99)
        );
        assert_eq!(
            recording_dir_pid(&format!("{}AbCdEf", recording_dir_prefix(98))),
            Some(98)
        );
        for name in [
            "rec-98-abc",
            "rec-x-abcdef",
            "rec-98-abcdef-x",
            "ext4-98-abcdef",
        ] {
            assert_eq!(recording_dir_pid(name), None, "{name}");
        }
        assert_eq!(
            scratch_dir_pid(&format!("{}AbCdEf", recording_dir_prefix(98))),
            None
        );
    }

    #[test]
    fn another_pid_namespaces_instance_gives_no_pid() {
        let init = INITIAL_PID_NAMESPACE;
        // A container's joj, seen from the host, and the host's, seen from a container.
        assert_eq!(
            trace_instance_pid(&trace_instance(57, 0, 4026532999), init),
            None
        );
        assert_eq!(
            trace_instance_pid(&trace_instance(57, 0, init), 4026532999),
            None
        );
        assert_eq!(trace_instance_pid("joj-57-0-nsx", init), None);
    }

    #[test]
    fn names_of_other_shapes_give_no_pid() {
        // Not a kind, not a pid, no random part, a random part of the wrong length or alphabet.
        for name in [
            "ext5-12-abcdef",
            "ext4-x12-abcdef",
            "ext4-012-abcdef",
            "ext4-0-abcdef",
            "ext4-12-",
            "ext4-12",
            "ext4-12-abcde",
            "ext4-12-abcdefg",
            "ext4-12-abc.ef",
            "ext4-12-crash-",
            "ext4-99999999999-abcdef",
            "ext4-writeback-abcdef",
        ] {
            assert_eq!(scratch_dir_pid(name), None, "{name}");
        }
        for name in [
            "ext4-12-main-abcdef",
            "ext4-12-swap-abcdef.img",
            "ext4-12-main-abc.img",
            "main.img",
            "ext4-12-abcdef.img",
        ] {
            assert_eq!(image_pid(name), None, "{name}");
        }
        for name in [
            "joj-12",
            "joj-12-",
            "joj-12-x",
            "jojo-12-0",
            "joj--0",
            "joj-+1-0",
        ] {
            assert_eq!(
                trace_instance_pid(name, INITIAL_PID_NAMESPACE),
                None,
                "{name}"
            );
        }
        // Old, pid-less temporary directories and directories people name by hand.
        for name in [
            "joj-4TUTHn",
            "joj-out",
            "joj-baseline",
            "joj-12-results2",
            "joj-12",
        ] {
            assert_eq!(temp_dir_pid(name), None, "{name}");
        }
    }

    #[test]
    fn a_kind_whose_name_extends_another_is_read_whole() {
        assert_eq!(scratch_dir_pid("ext4-writeback-55-abcdef"), Some(55));
        assert_eq!(image_pid("ext4-extjournal-8-journal-abcdef.img"), Some(8));
        assert!(is_crash_image("journal.img") && !is_crash_image("data.img"));
    }
}
