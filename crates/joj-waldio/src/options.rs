//! Durability options, group synchronization and its policy (a pure function).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How a log commit is made durable (WALDIO section 5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncOption {
    /// Direct write, then `fdatasync` (a cache flush, no journal commit). SQLite `FULL`.
    Full,
    /// Direct write with `RWF_DSYNC`: FUA where the device has it (WALDIO's persistent DIO).
    Fua,
    /// Direct write only; SQLite syncs the WAL at checkpoint. SQLite `NORMAL`.
    Normal,
}

impl SyncOption {
    pub fn name(self) -> &'static str {
        match self {
            SyncOption::Full => "full",
            SyncOption::Fua => "fua",
            SyncOption::Normal => "normal",
        }
    }
}

impl fmt::Display for SyncOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why options given as text were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OptionsError {
    #[error(
        "unknown waldio sync option {}: use full, fua or normal",
        joj_trace::input::quoted(.given)
    )]
    UnknownSync { given: String },
    #[error(
        "unknown waldio_journal {}: use wal (connections through waldio are switched to \
         WAL mode) or unchanged (the journal mode the application sets)",
        joj_trace::input::quoted(.given)
    )]
    UnknownJournal { given: String },
    #[error(
        "{key}={} is not a whole number; give {key} as a non-negative integer",
        joj_trace::input::quoted(.given)
    )]
    NotANumber { key: &'static str, given: String },
    #[error(
        "unknown URI parameter {}: waldio's are {} (docs/formats/waldio.md)",
        joj_trace::input::quoted(.key),
        URI_KEYS.join(", ")
    )]
    UnknownKey { key: String },
    #[error(
        "{} is given more than once: SQLite and joj would read only the first, and the others \
         would be ignored without a word; fix: give each waldio option once",
        joj_trace::input::quoted(.key)
    )]
    RepeatedKey { key: String },
    #[error("{key}={given} is out of range: give {min} to {max} ({why})")]
    OutOfRange {
        key: &'static str,
        given: u64,
        min: u64,
        max: u64,
        why: &'static str,
    },
}

/// The bounds of the numeric URI parameters, each with its reason: a value from a URI is
/// someone else's input, and each one sizes memory, disk or a wait.
pub const BOUNDS: &[(&str, u64, u64, &str)] = &[
    (
        "waldio_prealloc_frames",
        1,
        65_536,
        "frames preallocated when the WAL is first written; SQLite checkpoints at 1000 by \
         default, and 65536 frames are 256 MiB at 4 KiB pages, 4 GiB at 64 KiB",
    ),
    (
        "waldio_extend_frames",
        1,
        65_536,
        "frames added each time the WAL grows; the same bound as the preallocation",
    ),
    (
        "waldio_group_kib",
        0,
        65_536,
        "the group-sync frame buffer, held in memory: 64 MiB at most (0 turns group sync off)",
    ),
    (
        "waldio_group_ms",
        1,
        1_000,
        "how long an acknowledged commit may wait in the buffer, and be lost in a crash: a \
         second at most",
    ),
    ("waldio_group", 0, 1, "1 turns group sync on, 0 off"),
    ("waldio_canary_skip_sync", 0, 1, "a test canary, 0 or 1"),
    ("waldio_canary_fallocate", 0, 1, "a test canary, 0 or 1"),
    ("waldio_canary_flush_only", 0, 1, "a test canary, 0 or 1"),
];

/// Every URI parameter waldio reads; any other `waldio_*` key is refused (a misspelt option
/// would otherwise be ignored silently).
pub const URI_KEYS: &[&str] = &[
    "waldio_sync",
    "waldio_journal",
    "waldio_group",
    "waldio_group_kib",
    "waldio_group_ms",
    "waldio_prealloc_frames",
    "waldio_extend_frames",
    "waldio_canary_skip_sync",
    "waldio_canary_fallocate",
    "waldio_canary_flush_only",
];

/// Refuse a `waldio_*` key that is not one of [`URI_KEYS`], or one given twice (other keys are
/// SQLite's).
pub fn check_uri_keys<'a>(keys: impl IntoIterator<Item = &'a str>) -> Result<(), OptionsError> {
    let mut seen = std::collections::HashSet::new();
    for key in keys.into_iter().filter(|k| k.starts_with("waldio_")) {
        if !URI_KEYS.contains(&key) {
            return Err(OptionsError::UnknownKey {
                key: key.to_string(),
            });
        }
        // `waldio_sync=normal&waldio_sync=full` would run with `normal`.
        if !seen.insert(key) {
            return Err(OptionsError::RepeatedKey {
                key: key.to_string(),
            });
        }
    }
    Ok(())
}

impl FromStr for SyncOption {
    type Err = OptionsError;
    fn from_str(s: &str) -> Result<Self, OptionsError> {
        match s.to_ascii_lowercase().as_str() {
            "full" => Ok(SyncOption::Full),
            "fua" | "pdio" => Ok(SyncOption::Fua),
            "normal" => Ok(SyncOption::Normal),
            _ => Err(OptionsError::UnknownSync {
                given: s.to_string(),
            }),
        }
    }
}

/// Group synchronization (WALDIO section 5.3): a frame buffer and a grouping interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSync {
    /// Write the buffered commits once they hold this many bytes (paper: 16 KiB, 4 pages).
    pub frame_buffer_bytes: usize,
    /// ... or once the oldest buffered commit is this old (paper: 2 ms).
    pub interval_ms: u64,
}

impl Default for GroupSync {
    fn default() -> Self {
        GroupSync {
            frame_buffer_bytes: 16 * 1024,
            interval_ms: 2,
        }
    }
}

/// Everything a waldio WAL is opened with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaldioOptions {
    pub sync: SyncOption,
    /// `None`: every commit is written (and synced per `sync`) before it is acknowledged.
    pub group: Option<GroupSync>,
    /// Frames preallocated when the WAL is first written (default 1024: room for SQLite's
    /// default auto-checkpoint at 1000 pages).
    pub prealloc_frames: u32,
    /// Frames added each time the WAL must grow (default 256).
    pub extend_frames: u32,
    /// Test canary only: skip the per-commit durability step (no `fdatasync`, no `RWF_DSYNC`).
    /// A crash test that cannot tell this from the real thing tests nothing.
    #[serde(default)]
    pub canary_skip_sync: bool,
    /// Test canary only: preallocate with `fallocate` alone (unwritten extents), writing and
    /// syncing nothing: the preallocation WALDIO's explicit journaling replaces.
    #[serde(default)]
    pub canary_fallocate: bool,
    /// Test canary only: make a commit durable with a cache flush that commits no metadata of
    /// the WAL (an `fsync` of the block device under it) instead of `fdatasync`.
    #[serde(default)]
    pub canary_flush_only: bool,
    /// `waldio_journal=wal`: a database opened through waldio in a rollback-journal mode is
    /// switched to WAL mode at its first commit (so waldio is in use for it), as `PRAGMA
    /// journal_mode=WAL` would; `false` (`unchanged`): the application's journal mode stays.
    #[serde(default)]
    pub wal_mode: bool,
}

impl Default for WaldioOptions {
    fn default() -> Self {
        WaldioOptions {
            sync: SyncOption::Full,
            group: None,
            prealloc_frames: 1024,
            extend_frames: 256,
            canary_skip_sync: false,
            canary_fallocate: false,
            canary_flush_only: false,
            wal_mode: false,
        }
    }
}

impl WaldioOptions {
    /// The `PRAGMA synchronous` level SQLite must run with: `FULL` when SQLite itself should
    /// sync each commit (`full`, `fua` without group sync), else `NORMAL` (the VFS or the
    /// checkpoint does the syncing).
    pub fn sqlite_synchronous(&self) -> &'static str {
        match (self.sync, self.group) {
            (SyncOption::Full | SyncOption::Fua, None) => "FULL",
            _ => "NORMAL",
        }
    }

    /// Whether connections with `self` and `other` may share one WAL's state in a process:
    /// they agree on what decides a commit's durability (`sync`, group sync, the canaries).
    /// `wal_mode` is a connection's own switch, and the preallocation sizes are hints of how
    /// the file grows: the process's first opener's apply to the WAL, and another's differing
    /// ones are not refused (docs/formats/waldio.md, "Durability options").
    pub fn same_log(&self, other: &WaldioOptions) -> bool {
        let log = |o: &WaldioOptions| {
            (
                o.sync,
                o.group,
                o.canary_skip_sync,
                o.canary_fallocate,
                o.canary_flush_only,
            )
        };
        log(self) == log(other)
    }

    /// A short label: `full`, `fua+gs16k/2ms`, ...
    pub fn label(&self) -> String {
        match self.group {
            None => self.sync.name().to_string(),
            Some(g) => format!(
                "{}+gs{}k/{}ms",
                self.sync,
                g.frame_buffer_bytes / 1024,
                g.interval_ms
            ),
        }
    }

    /// Apply URI parameters (`waldio_sync`, `waldio_group`, `waldio_group_kib`,
    /// `waldio_group_ms`, `waldio_prealloc_frames`, `waldio_extend_frames`) given by `get`.
    pub fn with_uri_params(
        mut self,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<WaldioOptions, OptionsError> {
        if let Some(s) = get("waldio_sync") {
            self.sync = s.parse()?;
        }
        if let Some(j) = get("waldio_journal") {
            self.wal_mode = match j.as_str() {
                "wal" => true,
                "unchanged" => false,
                _ => return Err(OptionsError::UnknownJournal { given: j }),
            };
        }
        let num = |key: &'static str| -> Result<Option<u64>, OptionsError> {
            let Some(v) = get(key) else {
                return Ok(None);
            };
            let n = v
                .parse::<u64>()
                .map_err(|_| OptionsError::NotANumber { key, given: v })?;
            if let Some(&(key, min, max, why)) = BOUNDS.iter().find(|b| b.0 == key) {
                if !(min..=max).contains(&n) {
                    return Err(OptionsError::OutOfRange {
                        key,
                        given: n,
                        min,
                        max,
                        why,
                    });
                }
            }
            Ok(Some(n))
        };
        if let Some(on) = num("waldio_group")? {
            self.group = if on == 0 {
                None
            } else {
                Some(self.group.unwrap_or_default())
            };
        }
        if let Some(kib) = num("waldio_group_kib")? {
            let mut g = self.group.unwrap_or_default();
            g.frame_buffer_bytes = (kib as usize) * 1024;
            self.group = if kib == 0 { None } else { Some(g) };
        }
        if let Some(ms) = num("waldio_group_ms")? {
            let mut g = self.group.unwrap_or_default();
            g.interval_ms = ms;
            self.group = Some(g);
        }
        if let Some(n) = num("waldio_prealloc_frames")? {
            self.prealloc_frames = n as u32; // within BOUNDS
        }
        if let Some(n) = num("waldio_extend_frames")? {
            self.extend_frames = n as u32; // within BOUNDS
        }
        if let Some(n) = num("waldio_canary_skip_sync")? {
            self.canary_skip_sync = n != 0;
        }
        if let Some(n) = num("waldio_canary_fallocate")? {
            self.canary_fallocate = n != 0;
        }
        if let Some(n) = num("waldio_canary_flush_only")? {
            self.canary_flush_only = n != 0;
        }
        Ok(self)
    }

    /// The same options as URI parameters (`&`-joined, no leading separator).
    pub fn uri_params(&self) -> String {
        let mut s = format!(
            "waldio_sync={}&waldio_prealloc_frames={}&waldio_extend_frames={}",
            self.sync, self.prealloc_frames, self.extend_frames
        );
        if self.canary_skip_sync {
            s.push_str("&waldio_canary_skip_sync=1");
        }
        if self.canary_fallocate {
            s.push_str("&waldio_canary_fallocate=1");
        }
        if self.canary_flush_only {
            s.push_str("&waldio_canary_flush_only=1");
        }
        if self.wal_mode {
            s.push_str("&waldio_journal=wal");
        }
        match self.group {
            None => s.push_str("&waldio_group=0"),
            Some(g) => s.push_str(&format!(
                "&waldio_group_kib={}&waldio_group_ms={}",
                g.frame_buffer_bytes / 1024,
                g.interval_ms
            )),
        }
        s
    }
}

/// Group-sync policy: write the buffered commits now? Pure: the caller supplies the state.
pub fn group_due(buffered_bytes: usize, oldest_age_ns: u64, group: &GroupSync) -> bool {
    buffered_bytes >= group.frame_buffer_bytes
        || oldest_age_ns >= group.interval_ms.saturating_mul(1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_is_due_when_full_or_old() {
        let g = GroupSync::default();
        assert!(!group_due(4096, 0, &g));
        assert!(group_due(16 * 1024, 0, &g));
        assert!(group_due(4096, 2_000_000, &g));
        assert!(!group_due(12 * 1024, 1_999_999, &g));
    }

    #[test]
    fn uri_params_round_trip_and_bad_values_are_named() {
        let o = WaldioOptions {
            sync: SyncOption::Fua,
            group: Some(GroupSync {
                frame_buffer_bytes: 32 * 1024,
                interval_ms: 5,
            }),
            ..WaldioOptions::default()
        };
        let params = o.uri_params();
        let get = |k: &str| {
            params
                .split('&')
                .find_map(|kv| kv.strip_prefix(&format!("{k}=")).map(str::to_string))
        };
        assert_eq!(WaldioOptions::default().with_uri_params(get).unwrap(), o);
        let err = WaldioOptions::default()
            .with_uri_params(|k| (k == "waldio_sync").then(|| "fast".to_string()))
            .unwrap_err();
        assert_eq!(
            err,
            OptionsError::UnknownSync {
                given: "fast".into()
            }
        );
        let err = WaldioOptions::default()
            .with_uri_params(|k| (k == "waldio_group_ms").then(|| "2ms".to_string()))
            .unwrap_err();
        assert_eq!(
            err,
            OptionsError::NotANumber {
                key: "waldio_group_ms",
                given: "2ms".into()
            }
        );
        assert_eq!(o.sqlite_synchronous(), "NORMAL");
        assert_eq!(WaldioOptions::default().sqlite_synchronous(), "FULL");
    }

    #[test]
    fn a_waldio_key_given_twice_is_refused() {
        assert_eq!(
            check_uri_keys(["waldio_sync", "cache", "waldio_sync"]),
            Err(OptionsError::RepeatedKey {
                key: "waldio_sync".into()
            })
        );
        // SQLite's own keys are SQLite's to judge; one of each waldio key is fine.
        check_uri_keys(["cache", "cache", "waldio_sync", "waldio_journal"]).unwrap();
        assert!(matches!(
            check_uri_keys(["waldio_snyc"]),
            Err(OptionsError::UnknownKey { .. })
        ));
    }

    #[test]
    fn every_number_beyond_its_bound_is_refused_naming_the_bound() {
        for (key, given) in [
            ("waldio_prealloc_frames", "1000000000000"),
            ("waldio_prealloc_frames", "0"),
            ("waldio_extend_frames", "65537"),
            ("waldio_group_kib", "1000000000000"),
            ("waldio_group_ms", "100000000000"),
            ("waldio_group", "2"),
        ] {
            let err = WaldioOptions::default()
                .with_uri_params(|k| (k == key).then(|| given.to_string()))
                .unwrap_err();
            assert!(
                matches!(err, OptionsError::OutOfRange { key: k, .. } if k == key),
                "{key}={given}: {err}"
            );
            assert!(err.to_string().contains("out of range: give"), "{err}");
        }
        let ok = WaldioOptions::default()
            .with_uri_params(|k| (k == "waldio_prealloc_frames").then(|| "65536".to_string()))
            .unwrap();
        assert_eq!(ok.prealloc_frames, 65_536);
    }
}
