//! A traced command's figures per SQLite database, per commit: which files are one database's
//! (`x.db`, `x.db-wal`, `x.db-journal`, `x.db-shm`, waldio's `x.db-waldio`), how many commits it
//! made and how that was counted, and what each commit cost — data written to its files, the
//! FS journal written while they were synced, sync calls. Pure: the document's per-file rows
//! in, its `databases` rows out.
//!
//! Commits are counted where they can be seen, in this order:
//! - a joj VFS in the command (the extension's `waldio` or `joj`) marked each one: SQLite sends
//!   `SQLITE_FCNTL_COMMIT_PHASETWO` to the main database after every commit, in every mode;
//! - otherwise from the system calls every commit of a journal mode makes: an unlink of the
//!   rollback journal (DELETE), its truncation (TRUNCATE), a sync of the WAL (WAL with
//!   `synchronous=FULL`, less the one sync of the WAL each checkpoint makes, paired with its
//!   sync of the database), a sync of the database (a rollback journal kept, PERSIST). With
//!   `synchronous=NORMAL` or `OFF`, a WAL commit makes no system call joj can count: the row
//!   says so instead of a number.

use std::collections::BTreeMap;

use crate::result::{DatabaseReport, FileReport, PerCommit};

/// The suffixes of a database's companion files.
const COMPANIONS: [(&str, Companion); 4] = [
    ("-wal", Companion::Wal),
    ("-waldio", Companion::Waldio),
    ("-journal", Companion::Journal),
    ("-shm", Companion::Shm),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Companion {
    Wal,
    Waldio,
    Journal,
    Shm,
}

fn syncs(f: &FileReport) -> u64 {
    f.fsync + f.fdatasync + f.sync_file_range + f.sync_writes
}

/// One row per file of kind `database` in `files`, with its companions; `marked` holds the
/// commits a joj VFS marked, by database path (as in `files`); `dir_syncs` the directory syncs
/// by directory (the directory of the command's working directory is `""`), which count with
/// the databases in them (SQLite syncs a database's directory after creating a journal).
pub fn databases(
    files: &[FileReport],
    marked: &BTreeMap<String, u64>,
    dir_syncs: &BTreeMap<String, u64>,
) -> Vec<DatabaseReport> {
    let by_path: BTreeMap<&str, &FileReport> = files.iter().map(|f| (f.path.as_str(), f)).collect();
    files
        .iter()
        .filter(|f| f.kind == "database")
        .map(|db| {
            let companions: Vec<(Companion, &FileReport)> = COMPANIONS
                .iter()
                .filter_map(|(suffix, c)| {
                    by_path
                        .get(format!("{}{suffix}", db.path).as_str())
                        .map(|f| (*c, *f))
                })
                .collect();
            let dir = std::path::Path::new(&db.path)
                .parent()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let dir_syncs = dir_syncs.get(&dir).copied().unwrap_or(0);
            report(db, &companions, marked.get(&db.path).copied(), dir_syncs)
        })
        .collect()
}

fn report(
    db: &FileReport,
    companions: &[(Companion, &FileReport)],
    marked: Option<u64>,
    dir_syncs: u64,
) -> DatabaseReport {
    let of = |c: Companion| companions.iter().find(|(k, _)| *k == c).map(|(_, f)| *f);
    let work = |f: &FileReport| f.data_bytes.saturating_sub(f.setup_data_bytes);
    let all: Vec<&FileReport> = std::iter::once(db)
        .chain(companions.iter().map(|(_, f)| *f))
        .collect();
    let logs: Vec<&FileReport> = companions
        .iter()
        .filter(|(c, _)| *c != Companion::Shm)
        .map(|(_, f)| *f)
        .collect();
    let data_bytes = all.iter().map(|f| work(f)).sum();
    let log_data_bytes = logs.iter().map(|f| work(f)).sum();
    let fs_journal_bytes_in_syncs = all.iter().map(|f| f.fs_journal_bytes_in_syncs).sum();
    let metadata_bytes_in_syncs: u64 = all.iter().map(|f| f.metadata_bytes_in_syncs).sum();
    let joj_bytes = logs.iter().map(|f| f.fs_journal_bytes_in_syncs).sum();
    let syncs_all = all.iter().map(|f| syncs(f)).sum::<u64>() + dir_syncs;
    let (mode, other_modes, counted) = count(db, &of);
    let (commits, commits_counted_by) = match (marked, counted) {
        (Some(n), _) if n > 0 => (
            Some(n),
            "SQLite's commit notice to the joj extension's VFS (SQLITE_FCNTL_COMMIT_PHASETWO)"
                .to_string(),
        ),
        (_, Ok((n, how))) => (Some(n), how),
        (_, Err(why)) => (None, why),
    };
    let per_commit = commits.filter(|n| *n > 0).map(|n| {
        let n = n as f64;
        PerCommit {
            data_bytes: data_bytes as f64 / n,
            log_data_bytes: log_data_bytes as f64 / n,
            fs_journal_bytes_in_syncs: fs_journal_bytes_in_syncs as f64 / n,
            metadata_bytes_in_syncs: metadata_bytes_in_syncs as f64 / n,
            joj_bytes: joj_bytes as f64 / n,
            syncs: syncs_all as f64 / n,
        }
    });
    DatabaseReport {
        path: db.path.clone(),
        journal_mode: mode,
        other_modes,
        commits,
        commits_counted_by,
        files: all.iter().map(|f| f.path.clone()).collect(),
        data_bytes,
        log_data_bytes,
        fs_journal_bytes_in_syncs,
        metadata_bytes_in_syncs,
        joj_bytes,
        syncs: syncs_all,
        per_commit,
    }
}

/// The journal mode most of its commits ran in, the commits in other modes said apart (a
/// switch to WAL commits once through a rollback journal), and the commits their system calls
/// count (or why none can be counted).
fn count<'a>(
    db: &FileReport,
    of: &dyn Fn(Companion) -> Option<&'a FileReport>,
) -> (String, Option<String>, Result<(u64, String), String>) {
    // Each mode the files show, with the commits counted in it.
    let mut modes: Vec<(&str, u64)> = Vec::new();
    let mut parts = Vec::new();
    let db_syncs = syncs(db);
    let mut rollback_commits = 0;
    if let Some(j) = of(Companion::Journal) {
        if j.removals > 0 {
            modes.push(("delete", j.removals));
            rollback_commits += j.removals;
            parts.push(format!(
                "{} unlink(s) of {} (DELETE: one per commit)",
                j.removals, j.path
            ));
        }
        if j.truncates > 0 {
            modes.push(("truncate", j.truncates));
            rollback_commits += j.truncates;
            parts.push(format!(
                "{} truncation(s) of {} (TRUNCATE: one per commit)",
                j.truncates, j.path
            ));
        }
        if j.removals == 0 && j.truncates == 0 {
            modes.push(("persist", db_syncs));
            rollback_commits += db_syncs;
            parts.push(format!(
                "{db_syncs} sync(s) of {} (a rollback journal kept: one per commit)",
                db.path
            ));
        }
    }
    let mut uncounted_log = None;
    for (c, name) in [(Companion::Wal, "wal"), (Companion::Waldio, "waldio")] {
        let Some(w) = of(c) else { continue };
        // Each checkpoint syncs the WAL once, then the database once; with synchronous=FULL
        // SQLite also syncs the WAL after writing its header, each time the WAL (re)starts.
        let checkpoints = db_syncs.saturating_sub(rollback_commits);
        let starts = if c == Companion::Wal {
            w.wal_header_writes
        } else {
            0
        };
        let wal_commits = syncs(w).saturating_sub(checkpoints + starts);
        modes.push((name, wal_commits));
        if wal_commits == 0 && w.write_calls > 0 {
            uncounted_log = Some(name);
        }
        parts.push(format!(
            "{} sync(s) of {} less {checkpoints} checkpoint(s) and {starts} header sync(s) (WAL \
             with synchronous=FULL: one per commit)",
            syncs(w),
            w.path
        ));
    }
    if modes.is_empty() {
        modes.push(("rollback", db_syncs));
        if db_syncs > 0 {
            parts.push(format!(
                "{db_syncs} sync(s) of {} (one per commit)",
                db.path
            ));
        }
    }
    let commits: u64 = modes.iter().map(|(_, n)| n).sum();
    let (mode, other_modes) = main_mode(&modes, uncounted_log);
    if commits == 0 {
        return (
            mode,
            other_modes,
            Err(
                "no system call of the command marks a commit (with synchronous=NORMAL or OFF a \
                 WAL commit makes none); load the joj extension and open the database through \
                 its waldio or joj VFS to have each commit counted"
                    .into(),
            ),
        );
    }
    (mode, other_modes, Ok((commits, parts.join(" + "))))
}

/// The mode most commits ran in (a log written whose commits no system call counts wins: its
/// commits are unseen, not absent; on a tie the later mode, the one switched to), and the
/// commits in the other modes, in words.
fn main_mode(modes: &[(&str, u64)], uncounted_log: Option<&str>) -> (String, Option<String>) {
    let main = uncounted_log
        .or_else(|| {
            modes
                .iter()
                .enumerate()
                .max_by_key(|(i, (_, n))| (*n, *i))
                .map(|(_, (m, _))| *m)
        })
        .unwrap_or("rollback");
    let into_wal = matches!(main, "wal" | "waldio");
    let others: Vec<String> = modes
        .iter()
        .filter(|(m, n)| *m != main && *n > 0)
        .map(|(m, n)| {
            let rollback = matches!(*m, "delete" | "truncate" | "persist");
            format!(
                "{n} commit(s) in {m}{}",
                if into_wal && rollback {
                    " (PRAGMA journal_mode=WAL itself commits once through a rollback journal)"
                } else {
                    ""
                }
            )
        })
        .collect();
    (
        main.to_string(),
        (!others.is_empty()).then(|| others.join(", ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, kind: &str) -> FileReport {
        FileReport {
            path: path.into(),
            kind: kind.into(),
            ..FileReport::default()
        }
    }

    #[test]
    fn delete_mode_commits_are_the_journals_unlinks_and_cost_what_the_files_show() {
        let mut db = file("a.db", "database");
        db.fdatasync = 100;
        db.data_bytes = 800 * 1024;
        db.setup_data_bytes = 400 * 1024;
        let mut j = file("a.db-journal", "rollback_journal");
        j.removals = 100;
        j.fdatasync = 200;
        j.data_bytes = 1600 * 1024;
        j.fs_journal_bytes_in_syncs = 3200 * 1024;
        let dirs = BTreeMap::from([(String::new(), 100)]);
        let rows = databases(
            &[db, j, file("other.txt", "other")],
            &BTreeMap::new(),
            &dirs,
        );
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.journal_mode, "delete");
        assert_eq!(r.commits, Some(100));
        assert!(
            r.commits_counted_by.contains("unlink"),
            "{}",
            r.commits_counted_by
        );
        let p = r.per_commit.unwrap();
        assert_eq!(p.data_bytes, 20.0 * 1024.0, "set-up data excluded");
        assert_eq!(p.syncs, 4.0, "journal twice, directory, database");
        assert_eq!(p.joj_bytes, 32.0 * 1024.0);
    }

    #[test]
    fn wal_commits_are_wal_syncs_less_checkpoints_and_markers_win() {
        let mut db = file("a.db", "database");
        db.fdatasync = 3;
        let mut w = file("a.db-wal", "wal");
        w.fdatasync = 1004;
        w.wal_header_writes = 1;
        let none = BTreeMap::new();
        let rows = databases(&[db.clone(), w.clone()], &none, &none);
        assert_eq!(rows[0].journal_mode, "wal");
        assert_eq!(rows[0].commits, Some(1000));
        let marked = BTreeMap::from([("a.db".to_string(), 1001)]);
        let rows = databases(&[db, w], &marked, &none);
        assert_eq!(rows[0].commits, Some(1001));
        assert!(rows[0].commits_counted_by.contains("COMMIT_PHASETWO"));
    }

    #[test]
    fn commits_without_a_sync_are_said_not_counted() {
        let rows = databases(
            &[file("a.db", "database"), file("a.db-wal", "wal")],
            &BTreeMap::new(),
            &BTreeMap::new(),
        );
        assert_eq!(rows[0].commits, None);
        assert!(rows[0].per_commit.is_none());
        assert!(rows[0].commits_counted_by.contains("synchronous=NORMAL"));
    }

    /// `PRAGMA journal_mode=WAL` on a new database commits once through a rollback journal;
    /// the database is named by the mode its other commits ran in, the switch said apart.
    #[test]
    fn a_database_switched_to_wal_is_named_wal_with_the_switch_apart() {
        let mut db = file("a.db", "database");
        db.fdatasync = 2;
        let mut j = file("a.db-journal", "rollback_journal");
        j.removals = 1;
        j.fdatasync = 2;
        let mut w = file("a.db-wal", "wal");
        w.fdatasync = 103;
        w.write_calls = 205;
        w.wal_header_writes = 1;
        let none = BTreeMap::new();
        let rows = databases(&[db, j, w], &none, &none);
        assert_eq!(rows[0].journal_mode, "wal");
        assert_eq!(rows[0].commits, Some(102));
        let other = rows[0].other_modes.as_deref().unwrap_or_default();
        assert!(
            other.contains("1 commit(s) in delete") && other.contains("journal_mode=WAL"),
            "{other}"
        );
    }

    /// A WAL written with synchronous=NORMAL makes no sync joj can count: its database is
    /// still named wal, not by the one counted commit of the switch.
    #[test]
    fn an_uncounted_wal_still_names_its_database() {
        let mut j = file("a.db-journal", "rollback_journal");
        j.removals = 1;
        let mut w = file("a.db-wal", "wal");
        w.write_calls = 100;
        let none = BTreeMap::new();
        let rows = databases(&[file("a.db", "database"), j, w], &none, &none);
        assert_eq!(rows[0].journal_mode, "wal");
    }
}
