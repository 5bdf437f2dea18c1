//! `joj trace` records the command's calls only, without the tracefs instance's
//! `set_event_pid`, whose hooks on every context switch of the machine cost a sync as much as
//! the block events (docs/measurement.md, "Truncates without a stop, and the process filter"):
//! each event's filter lists the command's tasks, joj adding each new one while ptrace holds it
//! at its first stop. The program looks at joj's instance from inside: its own pid in the
//! events' filters and no process filter set while it has a few tasks; then it forks children
//! one after another, each syncing its file at once, and starts more threads than joj lists,
//! each syncing its own file: every sync is still counted on its file — the threads through the
//! kernel's process filter, which joj hands the tasks to past the bound (seen from inside).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

const PROGRAM: &str = r#"import glob, os, re, sys, threading
me = str(os.getpid())
mine = []
# joj's syscall trace of this command: joj is its parent (other joj runs have instances too)
for inst in glob.glob('/sys/kernel/tracing/instances/joj-%d-*' % os.getppid()):
    pids = open(inst + '/set_event_pid').read().split()
    cond = open(inst + '/events/syscalls/sys_enter_fdatasync/filter').read()
    listed = re.search(r'common_pid == %s\b' % me, cond)
    if me in pids or listed:
        mine.append((inst, pids, cond))
assert len(mine) == 1, mine
inst, pids, cond = mine[0]
assert pids == [], 'the process filter is set: %s' % pids
assert re.search(r'common_pid == %s\b' % me, cond), cond
def sync(name):
    with open(name, 'w') as f:
        f.write('x')
        f.flush()
        os.fdatasync(f.fileno())
# Children one after another, each syncing at once: added and removed one by one.
for c in range(int(sys.argv[2])):
    pid = os.fork()
    if pid == 0:
        sync('child%d.txt' % c)
        os._exit(0)
    os.waitpid(pid, 0)
n = int(sys.argv[1])
gate = threading.Barrier(n + 1)
def work(i):
    gate.wait()
    sync('t%d.txt' % i)
    gate.wait()
threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
gate.wait()
# More tasks alive than joj lists: the kernel's process filter has them.
assert me in open(inst + '/set_event_pid').read().split()
gate.wait()
for t in threads:
    t.join()
"#;

#[test]
fn joj_trace_keeps_to_the_commands_tasks_without_the_kernels_process_filter() {
    if !joj_linux::testgate::kernel_test(&[joj_linux::FsKind::Ext4]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("program.py"), PROGRAM).unwrap();
    let threads = joj_linux::syscall_pids::LISTED_AT_MOST + 8;
    let children = 12;
    let (threads_arg, children_arg) = (threads.to_string(), children.to_string());
    let doc = common::joj_trace_json_in(
        Some(project.path()),
        &[],
        &[
            "/usr/bin/python3",
            "program.py",
            &threads_arg,
            &children_arg,
        ],
    );
    for c in 0..children {
        let f = common::traced_file(&doc, &format!("child{c}.txt"));
        assert_eq!(f["fdatasync"], 1, "child{c}.txt: {f}");
    }
    for i in 0..threads {
        let f = common::traced_file(&doc, &format!("t{i}.txt"));
        assert_eq!(f["fdatasync"], 1, "t{i}.txt: {f}");
    }
    assert_eq!(doc["command"]["unresolved_syncs"], 0);
}
