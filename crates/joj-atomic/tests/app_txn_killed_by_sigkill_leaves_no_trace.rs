//! `kill -9` of a process in the middle of an application transaction (withdraw/deposit: two
//! databases and the ledger file, SQLite's journal off) while the device keeps running: the
//! transaction leaves no trace in any file.
//!
//! The device lives in this process and is served over a Unix socket (`joj_atomic::remote`);
//! a child process — this test binary running the ignored test [`child_transfers_until_killed`]
//! — mounts the file layer through a `RemoteDevice` and runs application transactions, printing
//! `acked <i>` after each commit returns. The server kills the child with SIGKILL after the
//! `w`-th `write_txn` of its `k`-th device transaction (each application transaction is one),
//! so the process dies with part of the transaction — pages of one database, of both, the
//! ledger's page, or its new size — on the device; the server sees the connection close and
//! aborts it. Afterwards: no active transaction, the FTL's invariants hold, both databases pass
//! `PRAGMA integrity_check`, databases and ledger are exactly the state after the acknowledged
//! transactions (the in-memory reference), and the next transaction of the same pages commits.
//! The same rounds run on X-FTL's eMMC and on the i-FTL device (the data tag crosses the
//! socket: the file layer's metadata lands in the i-FTL device's NVM).
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

mod common;

use common::kill::{self, Kill, Run};

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use common::bank::{self, Model, State};
use joj_atomic::{FlashFs, RemoteDevice, XDevice, XftlVfs};
use joj_device::{IftlDevice, NandMedium, TransactionalDevice};

const CHILD: &str = "child_transfers_until_killed";
const SOCKET_ENV: &str = "JOJ_APPTXN_KILL9_SOCKET";
const FIRST_ENV: &str = "JOJ_APPTXN_KILL9_FIRST";
/// The transfers' seed.
const WORK: u64 = 9;
const CHILD_TXNS: u64 = 5000;
const SIGKILL: i32 = 9;

/// The child: transfers `first..` as application transactions until it is killed.
#[test]
#[ignore = "the writer process of app_txn_killed_by_sigkill_leaves_no_trace, which starts it"]
fn child_transfers_until_killed() {
    let Ok(socket) = std::env::var(SOCKET_ENV) else {
        eprintln!("{CHILD} only runs as the child of app_txn_killed_by_sigkill_leaves_no_trace");
        return;
    };
    let first: u64 = std::env::var(FIRST_ENV).unwrap().parse().unwrap();
    let dev = RemoteDevice::connect(&socket).unwrap();
    let vfs = joj_atomic::register_with::<RemoteDevice>("apptxn-kill9-remote").unwrap();
    vfs.attach(FlashFs::mount(dev).unwrap()).unwrap();
    let a = bank::open_off(vfs.name(), "a.db").unwrap();
    let b = bank::open_off(vfs.name(), "b.db").unwrap();
    let mut out = std::io::stdout();
    for i in first..first + CHILD_TXNS {
        let mut tx = vfs.begin_app().unwrap();
        tx.enroll(&a).unwrap();
        tx.enroll(&b).unwrap();
        bank::run(&mut tx, &a, &b, i, bank::transfer(WORK, i)).unwrap();
        tx.commit().unwrap();
        writeln!(out, "acked {i}").unwrap();
        out.flush().unwrap();
    }
    panic!("{CHILD_TXNS} transactions committed and nobody killed this process");
}

/// A device the rounds run on: how many transactions it holds open, its own invariants.
trait Served: TransactionalDevice + Send + 'static {
    fn open_txns(&self) -> usize;
    fn check_invariants(&self);
    /// Data bytes the device put on flash and metadata bytes in NVM (none for a device
    /// without NVM).
    fn bytes_by_kind(&self) -> Option<(u64, u64)> {
        None
    }
}

impl Served for XDevice {
    fn open_txns(&self) -> usize {
        self.ftl().active_transactions()
    }

    fn check_invariants(&self) {
        self.ftl().check_invariants()
    }
}

impl Served for IftlDevice<NandMedium> {
    fn open_txns(&self) -> usize {
        self.ftl().open_transactions()
    }

    fn check_invariants(&self) {
        self.ftl().check_invariants()
    }

    fn bytes_by_kind(&self) -> Option<(u64, u64)> {
        let s = self.stats();
        Some((s.data_bytes_to_flash, s.metadata_bytes_to_nvm))
    }
}

/// Serve `dev` to a child running transfers `first..`, killed at `kill`.
fn run_child<D: Served>(dev: D, socket: &Path, first: u64, kill: Kill) -> (D, Run) {
    let child = kill::Child {
        test: CHILD,
        socket_env: SOCKET_ENV,
        first_env: FIRST_ENV,
        first,
        abort_on_disconnect: true,
    };
    kill::run_child(dev, socket, &child, kill)
}

#[test]
fn app_txn_killed_by_sigkill_leaves_no_trace() {
    let vfs = joj_atomic::register("apptxn-kill9").unwrap();
    vfs.attach(common::formatted(&common::profile(64))).unwrap();
    rounds(&vfs);
}

#[test]
fn app_txn_killed_by_sigkill_leaves_no_trace_on_the_iftl_device() {
    let vfs = joj_atomic::register_with::<IftlDevice<NandMedium>>("apptxn-kill9-iftl").unwrap();
    let mut p = common::profile(128).with_data_mode(joj_device::DataMode::Full);
    p.iftl = Some(Default::default());
    let dev = IftlDevice::new(&p).unwrap();
    let fs = FlashFs::format(
        dev,
        joj_atomic::FsOptions {
            fs_bytes: 64 << 20,
            slots: 8,
        },
    )
    .unwrap();
    vfs.attach(fs).unwrap();
    rounds(&vfs);
}

/// Six kills, each after another write of a transfer, on the device attached to `vfs`.
fn rounds<D: Served>(vfs: &XftlVfs<D>) {
    bank::setup(vfs);
    let mut dev = vfs.detach().unwrap().into_device();
    let mut model = Model::new();
    let mut states: Vec<State> = vec![model.state()];
    for i in 0..64 {
        model.apply(i, bank::transfer(WORK, i));
        states.push(model.state());
    }
    let dir = tempfile::tempdir().unwrap();
    let mut committed = 0u64;
    // A transfer writes page 1 and a leaf of a.db, the same of b.db, the ledger's page, then
    // the ledger's inode at commit: kills fall after each of them.
    let kills = [
        Kill { txn: 1, write: 1 },
        Kill { txn: 2, write: 2 },
        Kill { txn: 3, write: 3 },
        Kill { txn: 1, write: 4 },
        Kill { txn: 2, write: 5 },
        Kill { txn: 3, write: 6 },
    ];
    for (round, &kill) in kills.iter().enumerate() {
        let socket = dir.path().join(format!("round{round}.sock"));
        let page = u64::from(dev.geometry().optimal_write_bytes);
        let before = dev.bytes_by_kind();
        let (d, run) = run_child(dev, &socket, committed, kill);
        let what = format!(
            "child {}, acked {:?}, server {:?}, stderr:\n{}",
            run.status, run.acked, run.report, run.stderr
        );
        assert!(run.killed, "round {round}: {kill:?} never reached: {what}");
        assert_eq!(run.status.signal(), Some(SIGKILL), "round {round}: {what}");
        let acked = kill.txn - 1;
        assert_eq!(
            run.acked,
            (committed..committed + acked).collect::<Vec<_>>(),
            "round {round}: {what}"
        );
        assert_eq!(
            (run.report.aborted_on_disconnect, run.report.left_active),
            (1, 0),
            "round {round}: the dead transaction was not aborted: {what}"
        );
        if let (Some((data0, meta0)), Some((data, meta))) = (before, d.bytes_by_kind()) {
            // Each acknowledged transfer wrote database pages (data) and the ledger's inode
            // (metadata) over the socket: the tags crossed it.
            let (data, meta) = (data - data0, meta - meta0);
            assert!(
                data >= 2 * acked * page && meta >= acked * page,
                "round {round}: {acked} transfers served {data} B of data to flash and {meta} B \
                 of metadata to NVM"
            );
        }
        committed += acked;
        assert_eq!(d.open_txns(), 0, "round {round}");
        d.check_invariants();
        vfs.attach(FlashFs::mount(d).unwrap()).unwrap();
        assert_eq!(
            bank::observe(vfs).unwrap(),
            states[committed as usize],
            "round {round} (kill {kill:?}): a trace of the killed transaction; {what}"
        );
        // The next transaction of the same pages (the killed transfer's) commits.
        {
            let a = bank::open_off(vfs.name(), "a.db").unwrap();
            let b = bank::open_off(vfs.name(), "b.db").unwrap();
            let mut tx = vfs.begin_app().unwrap();
            tx.enroll(&a).unwrap();
            tx.enroll(&b).unwrap();
            let i = committed;
            bank::run(&mut tx, &a, &b, i, bank::transfer(WORK, i)).unwrap();
            tx.commit().unwrap();
        }
        committed += 1;
        assert_eq!(bank::observe(vfs).unwrap(), states[committed as usize]);
        eprintln!(
            "round {round}: killed in child transaction {} after write {}, {acked} acked, {} \
             commands served",
            kill.txn, kill.write, run.report.commands
        );
        dev = vfs.detach().unwrap().into_device();
    }
}
