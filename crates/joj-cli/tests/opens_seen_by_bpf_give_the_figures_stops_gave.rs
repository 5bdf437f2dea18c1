//! `joj trace` sees a command's opens, and its unlinks and `ftruncate`s on ext4, through its
//! BPF observer and the syscall trace instead of stopping the command at each
//! (docs/measurement.md, "Opens seen by BPF"). The figures must be the ones the stops gave: the
//! same program, run once with the observer and once without (`JOJ_BPF=off`, every open,
//! unlink and truncate stops), gives every file the same sync, truncate
//! calls, writes, removals, role and data bytes, every role the same bytes, the same directory
//! syncs and copy-ups (through an overlay, `--overlay`), and nothing unresolved — through relative paths, a directory
//! descriptor, a subshell that changes directory and ends before joj reads its records, a
//! sync of a read-only descriptor, O_DSYNC writes, a failed open, a copied-up file, SQLite in
//! DELETE, TRUNCATE and WAL mode, a file cut short and one emptied by `ftruncate`, one whose
//! data was written back and never synced before `ftruncate` freed its blocks (only the
//! truncate's map, or the extents ext4 freed, put those writes on it), one truncated and then
//! unlinked at once (the unlink's record read before the truncate's event is applied), and a
//! `truncate` of a path. With the observer no open, unlink or `ftruncate` stops.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

const PROGRAM: &str = r#"import os, sqlite3, subprocess, time
os.mkdir('sub')
fd = os.open('sub/a.txt', os.O_WRONLY | os.O_CREAT | os.O_DSYNC)
os.write(fd, b'x' * 100)
os.write(fd, b'y' * 100)
os.close(fd)
d = os.open('sub', os.O_RDONLY)
f = os.open('b.txt', os.O_WRONLY | os.O_CREAT, dir_fd=d)
os.write(f, b'y')
os.fsync(f)
os.close(f)
os.fsync(d)
os.close(d)
r = os.open('sub/a.txt', os.O_RDONLY)
os.fdatasync(r)
os.close(r)
try:
    os.open('missing/x', os.O_RDONLY)
except OSError:
    pass
subprocess.run(['/bin/sh', '-c', 'cd sub && echo hi > c.txt && /bin/sync c.txt'], check=True)
with open('existing.txt', 'a') as e:
    e.write('more')
    e.flush()
    os.fsync(e.fileno())
for mode in ('delete', 'truncate', 'wal'):
    db = sqlite3.connect(mode + '.db', isolation_level=None)
    db.execute('PRAGMA journal_mode=' + mode)
    db.execute('CREATE TABLE t(v)')
    for i in range(20):
        db.execute('INSERT INTO t VALUES (?)', (i,))
    db.close()
fd = os.open('cut.bin', os.O_RDWR | os.O_CREAT)
os.write(fd, b'c' * 40000)
os.fsync(fd)
os.ftruncate(fd, 5000)
os.fsync(fd)
os.ftruncate(fd, 0)
os.write(fd, b'd' * 8192)
os.fsync(fd)
os.close(fd)
with open('whole.bin', 'wb') as w:
    w.write(b'w' * 12288)
    w.flush()
    os.fsync(w.fileno())
os.truncate('whole.bin', 4096)
fd = os.open('early.bin', os.O_RDWR | os.O_CREAT)
os.write(fd, b'e' * 40960)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
time.sleep(0.3)
os.ftruncate(fd, 0)
os.write(fd, b'f' * 4096)
os.fsync(fd)
os.close(fd)
fd = os.open('gone.bin', os.O_RDWR | os.O_CREAT)
os.write(fd, b'g' * 40960)
os.fsync(fd)
os.ftruncate(fd, 0)
os.close(fd)
os.remove('gone.bin')
os.remove('sub/b.txt')
os.chdir('sub')
fd = os.open('../top.txt', os.O_WRONLY | os.O_CREAT)
os.write(fd, b'z')
os.fsync(fd)
os.close(fd)
"#;

fn traced(bpf: bool) -> serde_json::Value {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("program.py"), PROGRAM).unwrap();
    std::fs::write(project.path().join("existing.txt"), "before\n").unwrap();
    let mut cmd = common::joj_command();
    if !bpf {
        cmd.env(joj_linux::NO_BPF.0, joj_linux::NO_BPF.1);
    }
    let run = cmd
        .current_dir(project.path())
        .args(["trace", "--json", "--overlay", "--image-mib", "64", "--out"])
        .arg(project.path().join("out"))
        .args(["--", "/usr/bin/python3", "program.py"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    serde_json::from_slice(&run.stdout).unwrap()
}

/// What the system calls decide of each file, by path.
fn per_file(doc: &serde_json::Value) -> Vec<serde_json::Value> {
    let keys = [
        "path",
        "kind",
        "fsync",
        "fdatasync",
        "sync_file_range",
        "sync_writes",
        "write_calls",
        "write_bytes",
        "removals",
        "truncates",
        "deleted",
        "data_bytes",
    ];
    let mut v: Vec<serde_json::Value> = doc["command"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            serde_json::Value::Object(
                keys.iter()
                    .map(|k| (k.to_string(), f[*k].clone()))
                    .collect(),
            )
        })
        .collect();
    v.sort_by_key(|f| f["path"].to_string());
    v
}

fn copied_up(doc: &serde_json::Value) -> Vec<String> {
    doc["command"]["setup"]["work"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["what"] == "overlay copy-up")
        .map(|w| w["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn opens_seen_by_bpf_give_the_figures_stops_gave() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let (seen, stopped) = (traced(true), traced(false));
    let (c, s) = (&seen["command"], &stopped["command"]);
    assert!(
        c["opens_by_bpf"].is_u64(),
        "joj's BPF observer did not run here (joj says why on stderr: a kernel without BPF \
         syscall tracepoints, BTF or the permission); this test needs it"
    );
    let (with, without) = (per_file(&seen), per_file(&stopped));
    let differ: Vec<_> = with
        .iter()
        .zip(&without)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("with BPF {a}\nwith stops {b}"))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert_eq!(with.len(), without.len(), "{with:?}\n{without:?}");
    for key in [
        "dir_syncs",
        "unresolved_syncs",
        "whole_fs_syncs",
        "outside_writes_total",
    ] {
        assert_eq!(c[key], s[key], "{key}");
    }
    assert_eq!(copied_up(&seen), ["existing.txt"]);
    assert_eq!(copied_up(&seen), copied_up(&stopped));
    assert_eq!(c["unresolved_syncs"], 0);
    // os.fsync(d), and one after each of DELETE's 21 commits creates its journal, at least.
    assert!(c["dir_syncs"].as_u64().unwrap() >= 22, "{c}");
    // The files the program names, each where it is.
    let paths: Vec<String> = per_file(&seen)
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    for p in [
        "sub/a.txt",
        "sub/b.txt",
        "sub/c.txt",
        "existing.txt",
        "top.txt",
        "delete.db",
    ] {
        assert!(paths.contains(&p.to_string()), "{p} not in {paths:?}");
    }
    assert_eq!(common::traced_file(&seen, "sub/a.txt")["sync_writes"], 2);
    assert_eq!(common::traced_file(&seen, "sub/a.txt")["fdatasync"], 1);
    assert_eq!(common::traced_file(&seen, "sub/c.txt")["fsync"], 1);
    assert_eq!(common::traced_file(&seen, "cut.bin")["truncates"], 2);
    assert_eq!(common::traced_file(&seen, "whole.bin")["truncates"], 1);
    // Its 40 KiB written back before the truncate, and 4 KiB after.
    let early = common::traced_file(&seen, "early.bin")["data_bytes"].as_u64();
    assert_eq!(early, Some(45_056), "{seen}");
    // TRUNCATE mode truncates its journal at each of its 21 commits.
    assert!(
        common::traced_file(&seen, "truncate.db-journal")["truncates"]
            .as_u64()
            .unwrap()
            >= 21
    );
    // No open, unlink or ftruncate stopped with the observer; each stopped without it. What
    // stops is the truncate of a path.
    assert_eq!(c["opens_unseen"], 0);
    assert_eq!(c["unlinks_unseen"], 0);
    assert_eq!(c["truncates_unseen"], 0);
    assert_eq!(c["stops"], 1, "{c}");
    assert!(c["opens_by_bpf"].as_u64().unwrap() > 100, "{c}");
    assert_eq!(s["opens_by_bpf"], serde_json::Value::Null);
    let opens = c["opens_by_bpf"].as_u64().unwrap();
    assert!(
        s["stops"].as_u64().unwrap() >= c["stops"].as_u64().unwrap() + opens / 2,
        "with the observer {} stops, without {}",
        c["stops"],
        s["stops"]
    );
}
